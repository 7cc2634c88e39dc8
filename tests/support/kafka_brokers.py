"""Apache Kafka 4.3.1 broker-only processes on free loopback ports attached to a
controller quorum of ours (``tools/kafka_dist/broker.py``; the caller closes them)."""
from tools.kafka_dist.broker import BROKER_ID_BASE, KafkaBroker, bootstrap_servers, start_brokers

__all__ = ["BROKER_ID_BASE", "KafkaBroker", "bootstrap_servers", "start_brokers"]
