"""Metrics: read-only views of the Raft core, and an optional Prometheus text endpoint.

- :mod:`.raft_metrics` computes Kafka's ``raft-metrics`` group (``KafkaRaftMetrics``:
  current-state, current-leader, current-epoch, high-watermark, log-end-offset,
  commit-latency-avg/max, ...) and the KIP-853 voter metrics (number-of-voters,
  number-of-observers, pending-add-voter, ...). It never changes the core: the
  shell calls :meth:`RaftMetrics.observe` after each turn of the Ready loop.
- :mod:`.prometheus` puts them in a per-node ``prometheus_client`` registry (names
  as the JMX exporter would give them: ``kafka_server_raft_metrics_number_of_voters``),
  beside the library's process and Python collectors, and answers ``GET /metrics``
  (text 0.0.4 or OpenMetrics, as the scraper asks) with a tiny HTTP/1.1 protocol
  object that the shell's event loop serves
  (``kraft.metrics.prometheus.listener=HOST:PORT``; off by default).

This package imports no asyncio: the protocol class is duck-typed, and
``kraft_server/shell/driver.py`` binds it, keeping socket I/O in ``net/``.
"""
from .prometheus import RaftCollector, ScrapeProtocol, node_registry, render
from .raft_metrics import Metric, RaftMetrics

__all__ = ["Metric", "RaftCollector", "RaftMetrics", "ScrapeProtocol", "node_registry", "render"]
