"""Apache Kafka 4.3.1 broker-only processes on free loopback ports attached to a
controller quorum of ours (``tools/kafka_dist/broker.py``; the caller closes them)."""
import os
import signal
from contextlib import contextmanager

from tools.kafka_dist.broker import BROKER_ID_BASE, KafkaBroker, bootstrap_servers, start_brokers

__all__ = ["BROKER_ID_BASE", "KafkaBroker", "bootstrap_servers", "paused", "start_brokers"]


@contextmanager
def paused(broker):
    """SIGSTOP ``broker`` meanwhile, SIGCONT after: it stays registered and unfenced
    until its session expires but fetches nothing, so a reassignment onto it stays in
    flight. (A killed broker is fenced at once by our controller, issue 29, so tests
    that need a live-looking target that never catches up pause it instead.)"""
    os.killpg(broker.proc.pid, signal.SIGSTOP)
    try:
        yield
    finally:
        os.killpg(broker.proc.pid, signal.SIGCONT)
