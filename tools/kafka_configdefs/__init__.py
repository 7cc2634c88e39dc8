"""The default release's (Kafka 4.4.0) config definitions as facts for the controller's config handling.

``python -m tools.kafka_configdefs`` compiles ``DumpConfigDefs.java`` against the
pinned distribution (``tools/kafka_dist``), runs it, and writes
``kraft_server/controller/configs/kafka_config_defs.json``: for every topic config
(``LogConfig``), broker config (``KafkaConfig``), group config (``GroupConfig``) and
client-metrics config (``ClientMetricsConfigs``) its name, type, default, validator
(kind and bounds), internal flag, the broker configs a topic or group config falls back to,
a broker config's synonyms and whether it is dynamic. No documentation text is kept.
``--check`` fails when the committed file differs from what the jars say.
"""
