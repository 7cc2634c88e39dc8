"""The quorum console (kraft_server/console) in a real browser: Debian's Chromium,
headless, on a 3-node quorum of ours (kraft.version 1) with a fourth node fetching
as an observer; every node serves its page (``kraft.console.listener``) and knows
the others' (``kraft.console.peers``).

The tests run in file order on one quorum and one browser: the leader's page, Apache
Kafka's ``kafka-metadata-quorum add-controller`` seen in the voter history, the record
tail's filter and pause, then kill -9 of the leader seen from a follower's page.
"""
from __future__ import annotations

import json
import time
import urllib.error
import urllib.request

import pytest

from tests.support.browser import attrs, headless_chromium, texts, wait_page
from tests.support.jdk import need_jdk
from tests.support.kraft_nodes import (
    FAST_QUORUM, OurNode, agreed_leader, make_quorum, set_property, storage_format,
)
from tools.kafka_dist.controller import free_port, random_cluster_id, run_tool

pytestmark = pytest.mark.java


class Quorum:
    def __init__(self, nodes, consoles):
        self.nodes = nodes
        self.consoles = consoles  # node id -> page URL

    def node(self, node_id: int) -> OurNode:
        return next(n for n in self.nodes if n.node_id == node_id)


@pytest.fixture(scope="module")
def quorum(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("console")
    cluster_id = random_cluster_id()
    ports = {i: free_port() for i in (1, 2, 3, 4)}
    consoles = {i: f"http://127.0.0.1:{p}/" for i, p in ports.items()}
    peers = ",".join(f"{i}@127.0.0.1:{p}" for i, p in ports.items())
    nodes = make_quorum(workdir, "dynamic", cluster_id)
    (workdir / "n4").mkdir()
    nodes.append(OurNode(workdir / "n4", node_id=4, extra=FAST_QUORUM))
    try:
        for n in nodes:
            set_property(n.config, "kraft.console.listener", f"127.0.0.1:{ports[n.node_id]}")
            set_property(n.config, "kraft.console.peers", peers)
        # node 1 serves its Prometheus endpoint from the console's server
        set_property(nodes[0].config, "kraft.metrics.prometheus.listener", f"127.0.0.1:{ports[1]}")
        observer = nodes[3]
        bootstrap = ",".join(n.bootstrap for n in nodes[:3])
        set_property(observer.config, "controller.quorum.bootstrap.servers", bootstrap)
        set_property(observer.kafka_config, "controller.quorum.bootstrap.servers", bootstrap)
        storage_format(observer.config, cluster_id, "--no-initial-controllers")
        for n in nodes:
            n.start()
        agreed_leader(nodes[:3])
        yield Quorum(nodes, consoles)
    finally:
        for n in nodes:
            n.kill()


@pytest.fixture(scope="module")
def browser():
    driver = headless_chromium()
    try:
        yield driver
    finally:
        driver.quit()


def _leader(quorum, exclude=()) -> OurNode:
    node, _ = agreed_leader(quorum.nodes, exclude=exclude)
    return node


def _row_attrs(browser, name: str) -> dict[str, str]:
    ids = attrs(browser, "#quorum-table tbody tr", "data-id")
    return dict(zip(ids, attrs(browser, "#quorum-table tbody tr", name)))


def test_one_server_answers_the_page_the_state_and_prometheus(quorum):
    url = quorum.consoles[1]
    with urllib.request.urlopen(url + "metrics", timeout=5) as r:
        assert "kafka_server_raft_metrics_current_epoch" in r.read().decode()
    with urllib.request.urlopen(url + "api/state", timeout=5) as r:
        state = json.loads(r.read())
    assert state["nodeId"] == 1 and state["clusterId"] and state["buildMicros"] > 0
    with pytest.raises(urllib.error.HTTPError) as refused:  # node 2 has no Prometheus endpoint
        urllib.request.urlopen(quorum.consoles[2] + "metrics", timeout=5)
    assert refused.value.code == 404
    post = urllib.request.Request(url + "api/state", data=b"{}", method="POST")
    with pytest.raises(urllib.error.HTTPError) as refused:  # read-only
        urllib.request.urlopen(post, timeout=5)
    assert refused.value.code == 405


def test_the_leaders_page_names_the_leader_and_every_voters_lag(quorum, browser, tmp_path):
    leader = _leader(quorum)
    browser.get(quorum.consoles[leader.node_id])
    wait_page(browser, lambda b: texts(b, "#connection") == ["live"], 15, "the event stream")
    wait_page(browser, lambda b: texts(b, "#leader") == [str(leader.node_id)], 5, "the leader's id")
    assert texts(browser, "#role") == ["LEADER"]
    # every voter's row has a lag, and the observer (node 4) is listed as one
    lags = wait_page(browser, lambda b: (lambda rows: rows if {"1", "2", "3"} <= rows.keys()
                                         and all(rows[i] not in (None, "") for i in "123") else None)(
        _row_attrs(b, "data-lag")), 10, "a lag for every voter")
    assert all(int(lags[i]) >= 0 for i in "123"), lags
    statuses = wait_page(browser, lambda b: (lambda s: s if s.get("4") == "Observer" else None)(
        _row_attrs(b, "data-status")), 20, "node 4 as an observer")
    assert statuses[str(leader.node_id)] == "Leader"
    assert sorted(k for k, v in statuses.items() if v == "Follower") == sorted(
        str(i) for i in (1, 2, 3) if i != leader.node_id)
    assert texts(browser, "#kraft-version") == ["1"]
    assert texts(browser, "#latest-voters") == ["1, 2, 3"]
    # the tail shows the active controller's NoOpRecords, decoded
    wait_page(browser, lambda b: "NoOpRecord" in attrs(b, "#records tbody tr", "data-type"), 10,
              "a NoOpRecord in the tail")
    # the image: the finalized features the controllers bootstrapped
    assert "metadata.version" in texts(browser, "#features tbody td")
    # the timeline shows how this node became leader, with the transition log's reason
    assert any("won the election" in t for t in texts(browser, "#timeline li"))
    shot = tmp_path / "console.png"
    assert browser.save_screenshot(str(shot)) and shot.stat().st_size > 10_000


def test_add_controller_appears_in_the_voter_history(quorum, browser):
    need_jdk()
    leader = _leader(quorum)
    observer = quorum.node(4)
    # the observer's own page: what it knows, and a link to the leader's page
    browser.get(quorum.consoles[4])
    wait_page(browser, lambda b: texts(b, "#role") == ["FOLLOWER (observer)"], 10, "node 4 as an observer")
    wait_page(browser, lambda b: attrs(b, "#leader-link a", "href") == [quorum.consoles[leader.node_id]], 5,
              "the link to the leader's page")
    assert texts(browser, "#latest-voters") == ["1, 2, 3"]
    browser.get(quorum.consoles[leader.node_id])
    wait_page(browser, lambda b: (_row_attrs(b, "data-status").get("4") == "Observer"), 20,
              "node 4 fetching as an observer")
    before = attrs(browser, "#voter-history tbody tr", "data-voters")
    assert "1,2,3,4" not in before
    out = run_tool("kafka-metadata-quorum", "--bootstrap-controller", leader.bootstrap,
                   "--command-config", str(observer.kafka_config), "add-controller", timeout=120, check=False)
    assert out.returncode == 0, f"{out.stdout}\n{out.stderr}\n{leader.log_tail()}"
    wait_page(browser, lambda b: "1,2,3,4" in attrs(b, "#voter-history tbody tr", "data-voters"), 5,
              "the new VotersRecord in the voter history")
    offsets = attrs(browser, "#voter-history tbody tr", "data-offset")
    voters = attrs(browser, "#voter-history tbody tr", "data-voters")
    added = int(offsets[voters.index("1,2,3,4")])
    assert added > max(int(o) for o, v in zip(offsets, voters) if v == "1,2,3")
    wait_page(browser, lambda b: texts(b, "#committed-voters") == ["1, 2, 3, 4"], 5, "the set committed")
    wait_page(browser, lambda b: "VotersRecord" in attrs(b, "#records tbody tr", "data-type"), 15,
              "the VotersRecord in the record tail")


def test_the_record_tail_filters_by_type_and_pauses(quorum, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    leader = _leader(quorum)
    browser.get(quorum.consoles[leader.node_id])
    wait_page(browser, lambda b: "RegisterControllerRecord" in attrs(b, "#record-type option", "value")
              or len(attrs(b, "#records tbody tr", "data-type")) > 20, 10, "records in the tail")
    Select(browser.find_element(By.ID, "record-type")).select_by_value("NoOpRecord")
    wait_page(browser, lambda b: set(attrs(b, "#records tbody tr", "data-type")) == {"NoOpRecord"}, 5,
              "only NoOpRecords")
    browser.find_element(By.ID, "pause").click()
    frozen = texts(browser, "#records tbody tr td:first-child")
    hwm = int(texts(browser, "#hwm")[0])
    # NoOps keep committing (one every 50 ms): the summary moves on, the paused tail does not
    wait_page(browser, lambda b: int(texts(b, "#hwm")[0]) > hwm + 5, 10, "more commits")
    assert texts(browser, "#records tbody tr td:first-child") == frozen
    browser.find_element(By.ID, "pause").click()
    wait_page(browser, lambda b: texts(b, "#records tbody tr td:first-child") != frozen, 5, "the tail resumed")


def test_a_followers_page_shows_the_new_leader_after_kill_9(quorum, browser):
    leader = _leader(quorum)
    follower = next(n for n in quorum.nodes[:3] if n.node_id != leader.node_id)
    browser.get(quorum.consoles[follower.node_id])
    # a follower names the leader and links to its page (kraft.console.peers), in one
    # snapshot: read apart, a loaded machine's passing election (leader unknown, no link)
    # could fall between the reads
    wait_page(browser, lambda b: texts(b, "#leader") == [str(leader.node_id)] and texts(b, "#role") == ["FOLLOWER"]
              and attrs(b, "#leader-link a", "href") == [quorum.consoles[leader.node_id]], 15,
              "the follower's page naming the leader and linking to its console")
    killed = time.monotonic()
    leader.kill()
    new_leader = _leader(quorum, exclude=(leader.node_id,))
    elected = time.monotonic()
    wait_page(browser, lambda b: texts(b, "#leader") == [str(new_leader.node_id)], 3, "the new leader")
    shown = time.monotonic()
    print(f"kill -9 to an agreed new leader {elected - killed:.2f} s; on the page "
          f"{shown - elected:.2f} s later ({shown - killed:.2f} s after the kill)")
    timeline = attrs(browser, "#timeline li", "data-leader")
    assert str(new_leader.node_id) in timeline and timeline[0] == str(new_leader.node_id)
