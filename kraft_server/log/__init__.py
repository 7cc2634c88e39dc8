"""The node's storage: ``__cluster_metadata-0`` and the files around it, as Apache
Kafka 4.3.1 writes them (a real Kafka controller and ``kafka-dump-log`` read ours,
and we read theirs: ``tests/interop/test_storage_java.py``).

``<metadata.log.dir>/``
  ``meta.properties`` (``meta_properties.py``), ``bootstrap.checkpoint``
  (``bootstrap.py``), and ``__cluster_metadata-0/`` (``file_log.py``):
  ``%020d.log`` segments (``segments.py``, recovered by ``recovery.py``),
  ``leader-epoch-checkpoint`` (``epoch_cache.py``), ``partition.metadata``
  (``partition_metadata.py``), snapshots ``%020d-%010d.checkpoint``
  (``snapshots.py``; ``00000000000000000000-0000000000.checkpoint`` is the
  bootstrap snapshot of ``bootstrap.py``), ``quorum-state``
  (``quorum_state_file.py``) and ``high-watermark`` (``hwm_hint.py``, a hint for
  ``kraft-metadata-quorum recover``).

Every file that is replaced goes through ``files.atomic_write`` (tmp, fsync,
rename, directory fsync). ``startup.py`` is the node's refusal to run on an
unformatted or foreign directory. ``memory.py`` is the in-memory twin of
``FileReplicatedLog`` / ``FileQuorumStateStore`` for simulations; both satisfy
``kraft_server/raft/log_api.py`` (``tests/unit/log/test_log_contract.py``).
"""
