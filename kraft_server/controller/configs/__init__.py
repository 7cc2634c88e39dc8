"""ConfigurationControl (Kafka's ``ConfigurationControlManager`` and the controller's
``ConfigHelper``): the configs of every resource in the image (``store.py``), Kafka's
config definitions and value checks (``definitions.py``, facts from the 4.4.0 jars in
``kafka_config_defs.json``), the records IncrementalAlterConfigs and AlterConfigs write
(``control.py``, with ``validation.py``) and DescribeConfigs' answers (``describe.py``).
"""
