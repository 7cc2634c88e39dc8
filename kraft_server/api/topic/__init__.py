"""``__cluster_metadata`` partition 0 served to ordinary Kafka consumers on the client
listener (issue 10): every node, leader or follower, serves its own log up to the
high watermark it knows, with Kafka's partition rules. Two read-only companions are
served beside it (``catalog``): ``__cluster_metadata_control`` (``control_topic``, the
control records as data at their offsets) and ``__cluster_metadata_snapshot``
(``snapshot_topic``, the snapshot at the log start); ``as_data`` re-encodes control
batches for both, ``batch_list`` holds their batches.

One module per API: ``metadata_topic`` (the topic in Metadata), ``list_offsets``,
``consumer_fetch`` (Fetch with replica id -1; the Raft fetch stays with the core),
``fetch_sessions`` (KIP-227), ``offset_for_leader_epoch``,
``describe_topic_partitions`` and ``produce`` (refused: the quorum alone writes this
topic). ``partition`` is what they all read: the log, the high watermark, the epoch;
``kraft_server/log/log_reader.py`` reads batches as views of the segment files; ``long_poll`` parks
fetches until the high watermark moves.
"""
from .catalog import Topics
from .control_topic import CONTROL_TOPIC, CONTROL_TOPIC_ID
from .partition import TOPIC, TOPIC_ID, MetadataPartition
from .snapshot_topic import SNAPSHOT_TOPIC, SNAPSHOT_TOPIC_ID

__all__ = ["TOPIC", "TOPIC_ID", "CONTROL_TOPIC", "CONTROL_TOPIC_ID", "SNAPSHOT_TOPIC",
           "SNAPSHOT_TOPIC_ID", "MetadataPartition", "Topics"]
