"""What the active controller writes, and what every controller reads back, in the
metadata log (Apache Kafka's ``QuorumController`` and ``MetadataLoader``, reduced to
what a controller-only quorum holds today).

The package stays outside the sans-I/O core: it proposes records through
``RaftNode.propose`` (leader only) and reads committed batches from the log up to
the high watermark. The shell calls ``Controller.poll(now_ms)`` after every turn of
the Ready loop (``kraft_server/shell/driver.py``; the simulation does the same), and
runs another turn when it proposed something::

    proposed, deadline = controller.poll(now_ms)   # after core.advance(...)

Map: ``records.py`` (framing and the few metadata records we write),
``image.py`` (the replayed state: features, controller registrations, configs),
``loader.py`` (committed batches and snapshots → image), ``active.py`` (leader
duties: bootstrap records, self-registration, NoOp timer), ``snapshots.py``
(when and how to write a snapshot), ``retention.py`` (Kafka's snapshot/segment
cleaning), ``registration.py`` (the ControllerRegistration RPC: answered as the
active controller, sent to it by the others), ``controller.py`` (the object the
shells drive).

Brokers and topics (Apache Kafka brokers attached to the quorum): ``image_brokers.py``
and ``image_topics.py`` (their part of the image), ``write_queue.py`` (requests that
write, one at a time on the committed image, answered after commit),
``broker_requests.py`` / ``broker_lifecycle.py`` / ``broker_sessions.py``
(registration, heartbeats, fencing on session expiry), ``partition_change.py``
(leader/ISR/ELR moves when a broker leaves or returns), ``placement.py`` (striped
replica placement), ``topic_creation.py``, ``topic_deletion.py``,
``alter_partition.py`` and ``admin_requests.py`` (CreateTopics, DeleteTopics,
AlterPartition, AllocateProducerIds), ``client_quotas.py`` (the quota image and
AlterClientQuotas), ``feature_control.py`` (UpdateFeatures). Decisions are pure
functions over the image.
Reassignments: ``reassignment.py`` (Alter/ListPartitionReassignments) and
``reassignment_replicas.py`` (the replica arithmetic); the record is
``partition_change.assignment_change``, which AlterPartition also uses while one runs.
``configs/`` is ConfigurationControl (its own sub-room: configs in the image, Kafka's
config definitions, IncrementalAlterConfigs/AlterConfigs records, DescribeConfigs).
"""
from kraft_server.controller.controller import Controller, ControllerSettings

__all__ = ["Controller", "ControllerSettings"]
