"""Sweeps with failing disks and with voter changes (``tests/simulation/sweep.py``)."""
from __future__ import annotations

import os

import pytest

from tests.simulation.runner import RECOVER
from tests.simulation.sweep import ids, run_group, sweep


DISK_SEEDS = int(os.environ.get("SIM_DISK_SEEDS", "20"))


@pytest.mark.parametrize("seeds", sweep(2000, DISK_SEEDS, group=10), ids=ids)
def test_failing_disks(seeds):
    """The default faults plus failing disks (fsync EIO, full disk on append): the node
    stops as the real one does and restarts on what it fsync'd (tests/simulation/disk.py).
    Sending before the fsync completes is caught by this profile (tried: 2 of 30 seeds)."""
    summaries = run_group(seeds, 3, profile="disk")
    faults = sum(sum(s["disk_faults"].values()) for s in summaries)
    # the disks really failed (groups of 10 seeds at 5,000 events: 8-20 disk faults)
    assert faults >= len(seeds) // 2, faults


MEMBERSHIP_SEEDS = int(os.environ.get("SIM_MEMBERSHIP_SEEDS", "20"))


@pytest.mark.parametrize("seeds", sweep(0, MEMBERSHIP_SEEDS, group=10), ids=ids)
def test_membership_changes(seeds):
    """Random voter adds/removes (the leader too) and disk replacements with auto-join,
    under the default faults (tests/simulation/membership.py)."""
    summaries = run_group(seeds, 3, membership=True)
    changes = sum(s["voter_changes_committed"] for s in summaries)
    deposed = sum(sum(s["disruptions"].values()) for s in summaries)
    # The seeds really changed voter sets, and churn really deposed leaders that had just
    # taken a change (at 5,000 events, 60 seeds in groups of 10 gave 4-9 committed
    # changes and 15-26 deposed leaders a group).
    assert changes >= len(seeds) // 5 and deposed >= len(seeds)


RECOVER_SEEDS = int(os.environ.get("SIM_RECOVER_SEEDS", "20"))


@pytest.mark.parametrize("seeds", sweep(4000, RECOVER_SEEDS, group=10), ids=ids)
def test_recover_after_losing_a_majority(seeds):
    """The membership profile plus, once a run, a majority of the voters lost for good and
    the survivors recovered with ``kraft-metadata-quorum recover``'s plan and writes
    (tests/simulation/recover.py): committed batches may be lost only from the offset the
    plan printed, and the recovered quorum must lead, grow back and commit."""
    summaries = run_group(seeds, 3, membership=RECOVER)
    recovered = [s for s in summaries if s["recoveries"]]
    # most seeds reach the loss (the others spend the window leaderless under churn)
    assert len(recovered) >= len(seeds) // 2, [s["recover_waits"] for s in summaries]
