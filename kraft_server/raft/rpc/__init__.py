"""One module per KRaft RPC: building our requests, handling theirs, handling the
responses. Each handler takes the ``RaftNode`` as its context; shared checks
(cluster id, partition, leader discovery from responses) live in ``common.py``."""
