"""The metadata image (Kafka's ``metadata.image``, ``MetadataLoader`` and snapshot
writer): ``records.py`` (framing of the records we write), ``metadata_image.py`` (the
replayed state) with one module per part (``brokers.py``, ``topics.py``, ``configs.py``,
``client_quotas.py``, ``acls.py``, ``scram.py``, ``delegation_tokens.py``), ``loader.py`` (committed batches and
snapshots -> image), ``collector.py`` (the garbage collector kept off the image),
``snapshot_generator.py`` and ``snapshot_build.py`` (when and how to write a snapshot),
``retention.py`` (Kafka's snapshot/segment cleaning).

Pure reading of committed records: nothing here decides, so nothing here imports a
decision room (``cluster/``, ``replication/``, ``configs/`` but its definitions,
``quotas/``, ``features/``, ``acls/``, ``scram/``, ``tokens/``)."""
