"""What runs after each turn of the Ready loop besides the controller: hooks chained onto
``driver.after_cycle`` (the high-watermark hint, the Prometheus observer, GC pauses)."""
from __future__ import annotations

from kraft_server.config import KafkaConfig


def chain(first, second):
    def both(now_ms: int) -> None:
        first(now_ms)
        second()
    return both


def with_hint(after_cycle, core, raft_log):
    """The high-watermark hint (``log/hwm_hint.py``) rewritten after a cycle, now and then."""
    from kraft_server.log.hwm_hint import HintWriter

    hint = HintWriter(raft_log.directory)

    def both(now_ms: int) -> None:
        after_cycle(now_ms)
        hint.observe(core.high_watermark, raft_log.epoch_entries, now_ms)
    return both


def with_prometheus(config: KafkaConfig, core, raft_log, clock, after_cycle, address: str):
    """The raft-metrics observer chained after ``after_cycle``, and the scrape server."""
    from kraft_server.config import parse_host_port
    from kraft_server.metrics import RaftMetrics, ScrapeProtocol, node_registry

    metrics = RaftMetrics(core, raft_log, fetch_timeout_ms=config.quorum_fetch_timeout_ms)

    def both(now_ms: int) -> None:
        after_cycle(now_ms)
        metrics.observe(now_ms)

    ep = parse_host_port(address, "kraft.metrics.prometheus.listener")
    registry = node_registry(lambda: metrics.collect(clock()))
    factory = lambda: ScrapeProtocol(registry)  # noqa: E731
    return both, [("PROMETHEUS", ep.host, ep.port, factory)]
