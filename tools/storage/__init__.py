"""``kraft-storage``: format, inspect and name KRaft log directories, with the
flags and messages of Apache Kafka 4.4.0's ``kafka-storage`` (``StorageTool``,
``Formatter``).

    python -m tools.storage random-uuid
    python -m tools.storage format -t <cluster id> -c server.properties --standalone [-f group.version=0]
    python -m tools.storage info -c server.properties
    python -m tools.storage version-mapping --release-version 4.0
    python -m tools.storage feature-dependencies --feature eligible.leader.replicas.version=1

``formatter.py`` does the work of ``format``, ``lookup.py`` the two look-ups,
``feature_arg.py`` and ``scram_arg.py`` read flag values; ``__main__.py`` is the
command line.
"""
