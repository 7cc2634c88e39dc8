"""PySpark Structured Streaming over ``__cluster_metadata`` (``kraft-metadata-stream``).

- :mod:`.jars`: the Kafka connector jars, resolved once into ``$KRAFT_CACHE``.
- :mod:`.session`: a SparkSession that uses them.
- :mod:`.rowtype`: the typed row (an Arrow schema from ``schemas/records``).
- :mod:`.decode`: Arrow batches of source rows -> typed rows (the ``mapInArrow`` body).
- :mod:`.transactions`: KIP-868 aborted transactions dropped, across micro-batches.
- :mod:`.pipeline`: the stream and batch jobs and their sinks.
- :mod:`.views`: brokers, topics, partitions, features, controllers (voters: a hook).
"""
