"""The Prometheus endpoint (``kraft.metrics.prometheus.listener``): the per-node registry,
the exposition formats and the tiny HTTP handler offline, then scrapes of a live node
(parsed with prometheus_client's parsers) and of a three-node quorum whose values
follow the quorum through a kill -9 of its leader."""
from __future__ import annotations

import importlib.util
import math
import urllib.error
import urllib.request

import pytest

from kraft_server.config import ConfigError, KafkaConfig
from prometheus_client.openmetrics.parser import text_string_to_metric_families as parse_openmetrics
from prometheus_client.parser import text_string_to_metric_families

from kraft_server.metrics import Metric, ScrapeProtocol, node_registry, render
from tests.support.kraft_nodes import agreed_leader, make_quorum, set_property, wait_for
from tools.kafka_dist.controller import free_port, random_cluster_id

P = "kafka_server_raft_metrics_"


# -- offline ---------------------------------------------------------------------------------

def test_render_uses_jmx_exporter_style_names():
    text = render([
        Metric("number-of-voters", "Voters.", 3),
        Metric("current-state", "State.", 1.0, (("state", "leader"),)),
        Metric("commit-latency-avg", "Avg.", math.nan),
        Metric("commit-latency-max", "Max.", 12.5),
    ])
    assert "# TYPE kafka_server_raft_metrics_number_of_voters gauge\n" in text
    assert "\nkafka_server_raft_metrics_number_of_voters 3.0\n" in text
    assert '\nkafka_server_raft_metrics_current_state{state="leader"} 1.0\n' in text
    assert "\nkafka_server_raft_metrics_commit_latency_avg NaN\n" in text
    assert "\nkafka_server_raft_metrics_commit_latency_max 12.5\n" in text
    assert text.endswith("\n")


class _Transport:
    def __init__(self):
        self.data, self.closed = b"", False

    def write(self, data):
        self.data += data

    def close(self):
        self.closed = True

    def is_closing(self):
        return self.closed


FIXED = [
    Metric("number-of-voters", "Voters.", 3),
    Metric("current-state", "State.", 1.0, (("state", "follower"),)),
    Metric("high-watermark", "HWM.", 42),
]


def _ask(request: bytes, metrics=FIXED) -> tuple[str, bytes]:
    proto, t = ScrapeProtocol(node_registry(lambda: metrics)), _Transport()
    proto.connection_made(t)
    for i in range(0, len(request), 5):  # arrives in pieces
        proto.data_received(request[i:i + 5])
    assert t.closed
    head, _, body = t.data.partition(b"\r\n\r\n")
    return head.decode(), body


def test_scrape_protocol_answers_get_only():
    head, body = _ask(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
    assert head.startswith("HTTP/1.1 200 OK") and f"Content-Length: {len(body)}\r\n" in head
    assert b"\nkafka_server_raft_metrics_high_watermark 42.0\n" in body
    assert "Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n" in head
    head, body = _ask(b"HEAD /metrics HTTP/1.1\r\n\r\n")
    assert head.startswith("HTTP/1.1 200") and body == b""
    assert _ask(b"GET /nope HTTP/1.1\r\n\r\n")[0].startswith("HTTP/1.1 404")
    assert _ask(b"POST /metrics HTTP/1.1\r\n\r\n")[0].startswith("HTTP/1.1 405")
    assert _ask(b"garbage\r\n\r\n")[0].startswith("HTTP/1.1 400")


def _families(text: str, parse=text_string_to_metric_families) -> dict:
    return {f.name: f for f in parse(text)}


def test_the_registry_adds_process_and_python_metrics_and_keeps_kafkas_names():
    head, body = _ask(b"GET /metrics HTTP/1.1\r\n\r\n")
    families = _families(body.decode())
    voters = families["kafka_server_raft_metrics_number_of_voters"]
    assert voters.type == "gauge" and voters.documentation == "Voters."
    assert [(s.name, s.labels, s.value) for s in voters.samples] == [
        ("kafka_server_raft_metrics_number_of_voters", {}, 3.0)]
    state = families["kafka_server_raft_metrics_current_state"]
    assert [(s.labels, s.value) for s in state.samples] == [({"state": "follower"}, 1.0)]
    assert families["python_info"].samples[0].labels["implementation"] == "CPython"
    assert families["process_resident_memory_bytes"].samples[0].value > 0
    assert "python_gc_objects_collected" in families


def test_openmetrics_when_the_scraper_asks_for_it():
    accept = b"application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"
    head, body = _ask(b"GET /metrics HTTP/1.1\r\nAccept: " + accept + b"\r\n\r\n")
    content_type = next(line for line in head.split("\r\n") if line.startswith("Content-Type: "))
    assert content_type.startswith("Content-Type: application/openmetrics-text; version=1.0.0; charset=utf-8")
    assert body.endswith(b"# EOF\n")
    families = _families(body.decode(), parse_openmetrics)
    assert [(s.labels, s.value) for s in families["kafka_server_raft_metrics_current_state"].samples] == [
        ({"state": "follower"}, 1.0)]
    # name[] selects series, as the library's own server does.
    head, body = _ask(b"GET /metrics?name[]=kafka_server_raft_metrics_high_watermark HTTP/1.1\r\n\r\n")
    assert list(_families(body.decode())) == ["kafka_server_raft_metrics_high_watermark"]


def test_each_node_has_its_own_registry():
    """Two nodes in one process: each registry reads its own live values."""
    values = {"a": 1, "b": 2}
    one = node_registry(lambda: [Metric("current-epoch", "Epoch.", values["a"])])
    two = node_registry(lambda: [Metric("current-epoch", "Epoch.", values["b"])])
    epoch = "kafka_server_raft_metrics_current_epoch"
    values["a"] = 7  # read at scrape time, not at registration
    assert one.get_sample_value(epoch) == 7.0 and two.get_sample_value(epoch) == 2.0


def _props(**extra):
    base = {"process.roles": "controller", "node.id": "1", "controller.listener.names": "CONTROLLER",
            "listeners": "CONTROLLER://127.0.0.1:9093", "log.dirs": "/tmp/x"}
    base.update(extra)
    return base


def test_the_endpoint_is_off_by_default_and_checked():
    assert KafkaConfig.from_props(_props())["kraft.metrics.prometheus.listener"] is None
    on = KafkaConfig.from_props(_props(**{"kraft.metrics.prometheus.listener": "127.0.0.1:9404"}))
    assert on["kraft.metrics.prometheus.listener"] == "127.0.0.1:9404"
    with pytest.raises(ConfigError, match="kraft.metrics.prometheus.listener"):
        KafkaConfig.from_props(_props(**{"kraft.metrics.prometheus.listener": "nonsense"}))


# -- a live quorum ------------------------------------------------------------------------------

def scrape(port: int) -> dict[str, float]:
    """``{name or name{labels}: value}`` of the raft-metrics in one scrape."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
        assert r.status == 200 and r.headers["Content-Type"].startswith("text/plain; version=0.0.4")
        text = r.read().decode()
    out = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            if s.name.startswith(P):
                labels = ",".join(f'{k}="{v}"' for k, v in s.labels.items())
                out[s.name.removeprefix(P) + (f"{{{labels}}}" if labels else "")] = s.value
    return out


@pytest.fixture
def metered_quorum(request, tmp_path):
    for mod in ("kraft_server.raft.node", "tools.storage"):
        if importlib.util.find_spec(mod) is None:
            pytest.skip(f"{mod} is not there yet")
    nodes = make_quorum(tmp_path, "dynamic", random_cluster_id())
    for n in nodes:
        request.addfinalizer(n.kill)
        n.metrics_port = free_port()
        set_property(n.config, "kraft.metrics.prometheus.listener", f"127.0.0.1:{n.metrics_port}")
    for n in nodes:
        n.start()
    return nodes


def test_scraped_values_follow_the_quorum(metered_quorum):
    nodes = metered_quorum
    leader, q = agreed_leader(nodes)
    m = wait_for(lambda: (s := scrape(leader.metrics_port)) and not math.isnan(s["commit_latency_avg"]) and s,
                 20.0, "a commit latency sample on the leader")
    assert m['current_state{state="leader"}'] == 1
    assert m["current_leader"] == leader.node_id and m["current_vote"] == leader.node_id
    assert m["current_epoch"] == q.leader_epoch
    assert m["high_watermark"] >= q.high_watermark > 0 and m["log_end_offset"] >= m["high_watermark"]
    assert m["number_of_voters"] == 3 and m["number_of_observers"] == 0
    assert m["duplicate_voter_ids"] == 0 and m["uncommitted_voter_change"] == 0
    assert m["pending_add_voter"] == 0 and m["pending_remove_voter"] == 0
    assert 0 <= m["commit_latency_avg"] <= m["commit_latency_max"] < 30_000
    wait_for(lambda: scrape(leader.metrics_port)["number_of_offline_voters"] == 0, 20.0, "all voters online")

    follower = next(n for n in nodes if n is not leader)
    f = wait_for(lambda: (s := scrape(follower.metrics_port))["high_watermark"] >= q.high_watermark and s,
                 20.0, "the follower's high watermark")
    assert f['current_state{state="follower"}'] == 1 and f["current_leader"] == leader.node_id
    assert f["number_of_voters"] == 3 and "number_of_observers" not in f  # leader-only, as in Kafka
    assert math.isnan(f["commit_latency_avg"])  # followers commit nothing themselves

    leader.kill()
    new, q2 = agreed_leader(nodes, timeout=60.0, exclude={leader.node_id}, min_epoch=q.leader_epoch + 1)
    m2 = wait_for(lambda: (s := scrape(new.metrics_port))["number_of_offline_voters"] == 1 and s, 30.0,
                  "the killed voter counted offline")
    assert m2['current_state{state="leader"}'] == 1 and m2["current_leader"] == new.node_id
    assert m2["current_epoch"] == q2.leader_epoch > m["current_epoch"]
    assert m2["high_watermark"] > m["high_watermark"]  # the new epoch's LeaderChange committed
    assert m2["log_end_offset"] > m["log_end_offset"]
    other = next(n for n in nodes if n not in (leader, new))
    o = wait_for(lambda: (s := scrape(other.metrics_port))["current_leader"] == new.node_id and s, 20.0,
                 "the other survivor to follow")
    assert o["current_epoch"] == q2.leader_epoch
    with pytest.raises(urllib.error.URLError):
        scrape(leader.metrics_port)  # a dead node serves nothing


def test_no_endpoint_unless_configured(tmp_path):
    """The default: nothing listens besides the Kafka listeners."""
    for mod in ("kraft_server.raft.node", "tools.storage"):
        if importlib.util.find_spec(mod) is None:
            pytest.skip(f"{mod} is not there yet")
    from kraft_server.shell.wiring import build_node
    nodes = make_quorum(tmp_path, "dynamic", random_cluster_id(), n=1)
    node = build_node(KafkaConfig.from_file(nodes[0].config))
    try:
        assert node.driver.extra_servers == []
    finally:
        node.raft_log.close()
    set_property(nodes[0].config, "kraft.metrics.prometheus.listener", "127.0.0.1:0")
    node = build_node(KafkaConfig.from_file(nodes[0].config))
    try:
        assert [s[:3] for s in node.driver.extra_servers] == [("PROMETHEUS", "127.0.0.1", 0)]
    finally:
        node.raft_log.close()


def test_a_live_node_serves_both_formats(tmp_path):
    """One standalone node: the text scrape parses with prometheus_client's parser and
    shows it leading; asked for OpenMetrics, it answers OpenMetrics."""
    for mod in ("kraft_server.raft.node", "tools.storage"):
        if importlib.util.find_spec(mod) is None:
            pytest.skip(f"{mod} is not there yet")
    node = make_quorum(tmp_path, "dynamic", random_cluster_id(), n=1)[0]
    node.metrics_port = free_port()
    set_property(node.config, "kraft.metrics.prometheus.listener", f"127.0.0.1:{node.metrics_port}")
    try:
        node.start()
        m = wait_for(lambda: _try_scrape(node.metrics_port), 30.0, "the node to lead")
        assert m["number_of_voters"] == 1 and m["current_leader"] == 1 and m["high_watermark"] > 0
        url = f"http://127.0.0.1:{node.metrics_port}/metrics"
        with urllib.request.urlopen(url, timeout=5) as r:
            families = _families(r.read().decode())
        assert families["process_open_fds"].samples[0].value > 0
        assert families["python_info"].type == "gauge"
        ask = urllib.request.Request(url, headers={"Accept": "application/openmetrics-text; version=1.0.0"})
        with urllib.request.urlopen(ask, timeout=5) as r:
            assert r.headers["Content-Type"].startswith("application/openmetrics-text; version=1.0.0")
            families = _families(r.read().decode(), parse_openmetrics)
        state = families["kafka_server_raft_metrics_current_state"]
        assert state.type == "gauge" and [(s.labels, s.value) for s in state.samples] == [({"state": "leader"}, 1.0)]
    finally:
        node.kill()


def _try_scrape(port: int):
    """The scrape once the node leads; None before (not listening yet, or not leader)."""
    try:
        m = scrape(port)
    except OSError:
        return None
    return m if m.get('current_state{state="leader"}') == 1 else None
