"""The controller next to a one-voter core on a memory log: bootstrap records in one
batch, self-registration, NoOp records on a timer, features from committed records."""
from __future__ import annotations

import uuid

import pytest

from kraft_server.controller import Controller, ControllerSettings
from kraft_server.controller.image import records as rec
from kraft_server.log.bootstrap import DEFAULT_FEATURES
from kraft_server.log.memory import MemoryLog
from kraft_server.raft.quorum_config import QuorumConfig, StaticVoter
from kraft_server.raft.boundary import Endpoint
from tests.support.raft_harness import start
from kraft_server.raft.roles.base import Role
from wire.records import batch_records, walk

INCARNATION = uuid.UUID(int=0x1234)


class Single:
    """One static voter driven by hand: a Ready loop plus ``Controller.poll``."""

    def __init__(self, log=None, idle_ms=500, levels=None, incarnation=INCARNATION, **snap):
        self.now = 1_000
        self.log = log or MemoryLog()
        cfg = QuorumConfig(node_id=1, cluster_id="c" * 22, static_voters=(StaticVoter(1, "h", 9093),),
                           listeners=(Endpoint("CONTROLLER", "h", 9093),))
        self.core = start(cfg, self.log, seed=1, now=self.now)
        settings = ControllerSettings(node_id=1, bootstrap_levels=dict(DEFAULT_FEATURES if levels is None else levels),
                                      endpoints=(("CONTROLLER", "h", 9093, "PLAINTEXT"),),
                                      incarnation_id=incarnation, max_idle_interval_ms=idle_ms, **snap)
        self.controller = Controller(self.core, self.log, settings, self.now)

    def cycle(self):
        for _ in range(20):
            self.core.tick(self.now)
            ready, more = self.core.shell.turn(self.now, lambda r: None, lambda r: None)
            proposed, _ = self.controller.poll(self.now)
            if not (more or proposed or ready.flush):
                break

    def run_for(self, ms, step=5):
        end = self.now + ms
        while self.now < end:
            self.now += step
            self.cycle()

    def data_batches(self):
        out = []
        for base, last, epoch, data in self.log.batches():
            info = walk(data)[0]
            if not info.is_control:
                out.append([rec.unframe(v)[:2] for _, v in batch_records(data, info)])
        return out


def test_bootstrap_batch_then_registration_then_noops():
    s = Single()
    s.run_for(1200)
    assert s.core.role is Role.LEADER
    data = s.data_batches()
    # Batch 1: exactly what a real 4.3.1 controller writes on an empty log.
    assert [k for k, _ in data[0]] == [23, 12, 12, 12, 12, 12, 12, 4, 24]
    # Batch 2: the registration; then NoOps, one per batch.
    assert data[1] == [(27, 0)]
    assert all(b == [(20, 0)] for b in data[2:]) and len(data[2:]) >= 2
    img = s.controller.image
    assert img.features == DEFAULT_FEATURES
    assert img.configs == {(4, "", "min.insync.replicas"): "1"}
    reg = img.controllers[1]
    assert reg.incarnation_id == INCARNATION and not reg.zk_migration_ready
    assert [(e.name, e.host, e.port, e.security_protocol) for e in reg.end_points] == [("CONTROLLER", "h", 9093, 0)]
    assert {f.name for f in reg.features} >= {"metadata.version", "kraft.version"}


def test_noop_interval_and_disable():
    s = Single(idle_ms=100)
    s.run_for(300)
    before = s.controller.duties.stats["noops"]
    s.run_for(1000)
    assert 8 <= s.controller.duties.stats["noops"] - before <= 11
    quiet = Single(idle_ms=0)
    quiet.run_for(1000)
    assert quiet.controller.duties.stats["noops"] == 0
    hwm = quiet.core.high_watermark
    quiet.run_for(500)
    assert quiet.core.high_watermark == hwm  # nothing moves an idle quorum without NoOps


def test_features_come_from_committed_records():
    s = Single()
    levels, epoch = s.controller.finalized_features()
    assert levels == {} and epoch == -1
    s.run_for(200)
    levels, epoch = s.controller.finalized_features()
    assert levels["metadata.version"] == DEFAULT_FEATURES["metadata.version"] and "kraft.version" not in levels
    assert epoch == s.controller.image.offset == s.core.high_watermark - 1


def test_restart_keeps_state_and_registers_new_incarnation():
    s = Single()
    s.run_for(300)
    s.log.flush()
    again = Single(log=s.log, incarnation=uuid.UUID(int=0x5678))
    again.run_for(300)
    data = again.data_batches()
    assert sum(1 for b in data if b[0][0] == 23) == 1  # bootstrap written once, ever
    assert [b for b in data if b == [(27, 0)]].__len__() == 2
    assert again.controller.image.controllers[1].incarnation_id == uuid.UUID(int=0x5678)


def test_no_bootstrap_without_metadata_version():
    s = Single(levels={})
    s.run_for(300)
    assert s.data_batches() == [[(20, 0)]] * len(s.data_batches())
    assert not s.controller.image.has_metadata


@pytest.mark.parametrize("name,level", [("group.version", 0)])
def test_level_zero_features_are_not_bootstrapped(name, level):
    levels = dict(DEFAULT_FEATURES, **{name: level})
    s = Single(levels=levels)
    s.run_for(100)
    assert name not in s.controller.image.features


def test_undecodable_committed_records_are_counted_not_fatal():
    from kraft_server.controller.image import records as rec
    from kraft_server.controller.image.metadata_image import MetadataImage

    img = MetadataImage()
    for junk in (b"", b"\x01", b"\xff" * 12, None, b"\x01\x0c\x00\x05abc"):
        img.replay(junk)
    assert img.bad_records == 5
    img.replay(rec.feature_level("metadata.version", 30))  # still replays good records
    assert img.metadata_version() == 30 and img.bad_records == 5
