"""The classic consumer-group coordinator (Kafka's ``GroupCoordinator`` and the offsets of
``__consumer_offsets``, here for ``__cluster_metadata`` alone), a stateful room of its own
beside ``controller/``; its requests are decoded and answered in ``api/groups``.

- ``group.py``        a group and its members (plain data, Kafka's state names)
- ``coordinator.py``  the state machine and its timers (sans-I/O, fed ``now_ms``)
- ``offset_store.py`` committed offsets, fsync'd before the answer, torn tail truncated
- ``retention.py``    committed offsets expired (``offsets.retention.minutes``)
- ``service.py``      the coordinator + store + clock the handlers and the loop share
- ``topics.py``       the one topic whose offsets a group may commit here
"""
