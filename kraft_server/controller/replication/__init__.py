"""ReplicationControl: topics and partitions, placement, leader election, ISR/ELR
changes (AlterPartition), directory assignment and reassignment (Kafka's
ReplicationControlManager and PartitionChangeBuilder)."""
