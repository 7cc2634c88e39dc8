"""ClusterControl: controllers' and brokers' registrations, heartbeats and sessions,
fencing and controlled shutdown (Kafka's ClusterControlManager and the broker side of
its ReplicationControlManager)."""
