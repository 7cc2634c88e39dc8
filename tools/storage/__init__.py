"""``kraft-storage``: format, inspect and name KRaft log directories, with the
flags and messages of Apache Kafka 4.3.1's ``kafka-storage`` (``StorageTool``,
``Formatter``).

    python -m tools.storage random-uuid
    python -m tools.storage format -t <cluster id> -c server.properties --standalone
    python -m tools.storage info -c server.properties

``formatter.py`` does the work; ``__main__.py`` is the command line.
"""
