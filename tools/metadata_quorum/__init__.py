"""``kraft-metadata-quorum``: describe the KRaft controller quorum and change its
voters, as Apache Kafka's ``kafka-metadata-quorum`` does, plus ``reassign``.

Modules: ``client`` (the admin-client calls on the wire), ``describe`` (status
and replication text), ``controller_config`` (what add-controller reads from a
controller's properties), ``reassign`` (KIP-642 single-member steps),
``recover`` (a quorum that lost its majority, offline) with ``metadata_dir`` (a
metadata log directory read without writing), ``__main__`` (flags, exit codes).
"""
