"""The same session against a Kafka controller, then against our node, with the same
settings: ``(theirs, ours)`` for a test to compare."""
from __future__ import annotations

import uuid
from pathlib import Path

from tests.support.jdk import need_jdk
from tests.support.kraft_nodes import OurNode
from tools.kafka_dist.controller import KafkaController


def kafka_then_ours(tmp_path: Path, settings: dict[str, str], session, kafka_timeout: float = 90.0):
    """``session(node)`` (``node.port``, ``node.bootstrap``) on a one-voter Kafka
    controller, then on one of ours, each in its own directory and stopped after."""
    need_jdk()
    ctl = KafkaController(tmp_path / "kafka", overrides=settings)
    try:
        ctl.start_ready(timeout=kafka_timeout)
        theirs = session(ctl)
    finally:
        ctl.close()
    (tmp_path / "ours").mkdir()
    node = OurNode(tmp_path / "ours", extra=tuple(f"{k}={v}" for k, v in settings.items()))
    node.format_with_ours(uuid.uuid4().hex[:22])
    node.start()
    try:
        node.wait_leader(60)
        ours = session(node)
    finally:
        node.stop()
    return theirs, ours
