"""The operator's log of the quorum (``kraft_server/shell/transition_log.py``): every
node logs each voter-set change when it appends it and when it commits, and each
leadership change with its reason (issue 14, item 2)."""
from __future__ import annotations

import logging

from kraft_server.raft.roles.base import Role
from kraft_server.shell.transition_log import TransitionLog
from tests.support.scenario_engine import Scenario

DIR4 = "00000000-0000-0000-0000-000000000004"


def lines(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "kraft_server.quorum"]


def test_voter_changes_and_leadership_changes_are_logged_with_reasons(caplog):
    caplog.set_level(logging.INFO, logger="kraft_server.quorum")
    s = Scenario()
    s.run("add-nodes 3 kraft-version=1 observers=1")
    logs = {i: TransitionLog(s.nodes[i], i) for i in (1, 2, 3)}
    s.run("elect 1")
    s.run("stabilize")
    for logger in logs.values():
        logger(s.now)
    assert "[RaftNode id=1] LEADER in epoch 1, leader 1: won the election (votes from 1, 2)" in lines(caplog) \
        or "[RaftNode id=1] LEADER in epoch 1, leader 1: won the election (votes from 1, 3)" in lines(caplog)
    assert "[RaftNode id=2] FOLLOWER in epoch 1, leader 1: leader 1 of epoch 1 found" in lines(caplog)
    caplog.clear()

    s.run("add-voter 1 4")
    s.run("process-ready 1")
    s.run("deliver-msgs 4")
    s.run("process-ready 1")  # the VotersRecord is appended on the leader, not committed
    logs[1](s.now)
    added = f"added 4 (directory {DIR4}, CONTROLLER://n4:9004); voters now [1, 2, 3, 4]"
    offset = s.nodes[1].history.latest_offset()
    assert lines(caplog) == [f"[RaftNode id=1] voter set change appended at offset {offset}: {added}"]
    caplog.clear()
    s.run("stabilize")
    for logger in logs.values():
        logger(s.now)
    got = lines(caplog)
    hwm1 = s.nodes[1].high_watermark
    assert f"[RaftNode id=1] voter set change committed (high watermark {hwm1}): {added}" in got
    assert f"[RaftNode id=2] voter set change appended at offset {offset}: {added}" in got
    assert any(line.startswith("[RaftNode id=2] voter set change committed") and line.endswith(added)
               for line in got)
    caplog.clear()

    s.run("remove-voter 1 1")
    s.run("stabilize")
    for logger in logs.values():
        logger(s.now)
    got = lines(caplog)
    assert s.nodes[1].role is Role.RESIGNED or s.nodes[1].epoch > 1
    assert "[RaftNode id=1] RESIGNED in epoch 1, leader 1: resigned: removed from the voter set" in got
    assert any("removed 1 (directory 00000000-0000-0000-0000-000000000001, CONTROLLER://n1:9001); "
               "voters now [2, 3, 4]" in line for line in got)


def test_check_quorum_resignation_says_so(caplog):
    caplog.set_level(logging.INFO, logger="kraft_server.quorum")
    s = Scenario()
    s.run("add-nodes 3")
    logger = TransitionLog(s.nodes[1], 1)
    s.run("elect 1")
    s.run("stabilize")
    s.now += 10_000  # nobody fetches any more: check-quorum fails
    s.nodes[1].tick(s.now)
    logger(s.now)
    assert lines(caplog)[-1] == ("[RaftNode id=1] RESIGNED in epoch 1, leader 1: resigned: check-quorum "
                                 "failed (a majority of voters did not fetch within the fetch timeout)")
