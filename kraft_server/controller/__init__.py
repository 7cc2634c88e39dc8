"""What the active controller writes, and what every controller reads back, in the
metadata log (Apache Kafka's ``QuorumController`` and ``MetadataLoader``, reduced to
what a controller-only quorum holds today).

The package stays outside the sans-I/O core: it proposes records through
``RaftNode.propose`` (leader only) and reads committed batches from the log up to
the high watermark. The shell calls ``Controller.poll(now_ms)`` after every turn of
the Ready loop (``kraft_server/shell/driver.py``; the simulation does the same), and
runs another turn when it proposed something::

    proposed, deadline = controller.poll(now_ms)   # after core.advance(...)

Map. ``image/`` (Kafka's ``metadata.image`` and loader): the replayed state and how it
is read and written back; it imports nothing from the decision rooms below (checked by
tests/unit/house/test_import_rules.py).

The machinery: ``controller.py`` (the object the shells drive), ``active.py`` (leader
duties: bootstrap records, self-registration, NoOp timer), ``write_queue.py``
(requests that write, one at a time on the committed image, answered after commit),
``admin_requests.py`` (the write-queue operations of the admin APIs).

The decisions, one room per control concern as Kafka splits its controller
(each owns its records and decisions; pure functions over the image):

- ``cluster/`` (ClusterControl): ``registration.py`` (ControllerRegistration,
  answered as the active controller, sent to it by the others),
  ``broker_requests.py`` / ``broker_lifecycle.py`` / ``broker_sessions.py``
  (broker registration, heartbeats, fencing on session expiry, controlled shutdown),
  ``broker_liveness.py`` (fencing at once on evidence of a broker's crash);
- ``replication/`` (ReplicationControl): ``topic_creation.py``, ``topic_deletion.py``,
  ``partition_creation.py``, ``placement.py`` (striped replica placement),
  ``partition_change.py`` (leader/ISR/ELR moves, Kafka's PartitionChangeBuilder),
  ``elections.py``, ``alter_partition.py``, ``assign_dirs.py``, ``reassignment.py``
  and ``reassignment_replicas.py`` (Alter/ListPartitionReassignments and the replica
  arithmetic; the record is ``partition_change.assignment_change``, which
  AlterPartition also uses while one runs);
- ``configs/`` (ConfigurationControl: Kafka's config definitions,
  IncrementalAlterConfigs/AlterConfigs records, DescribeConfigs);
- ``quotas/`` (ClientQuotaControl: AlterClientQuotas), ``features/`` (FeatureControl:
  UpdateFeatures), ``acls/`` (AclControl: Create/Delete/DescribeAcls), ``scram/``
  (ScramControl: AlterUserScramCredentials), ``tokens/`` (Kafka's
  DelegationTokenControlManager: Create/Renew/ExpireDelegationToken, the expiry sweep).
"""
from kraft_server.controller.controller import Controller, ControllerSettings

__all__ = ["Controller", "ControllerSettings"]
