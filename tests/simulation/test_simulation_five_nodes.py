"""The default-profile sweep of five-node quorums, and the chaos profile on three and five."""
from __future__ import annotations

import pytest

from tests.simulation.sweep import SEEDS, ids, run_group, sweep


@pytest.mark.parametrize("seeds", sweep(1000, max(SEEDS // 2, 1)), ids=ids)
def test_five_nodes(seeds):
    run_group(seeds, 5)


@pytest.mark.parametrize("seeds", sweep(2000, 20, group=10), ids=ids)
@pytest.mark.parametrize("nodes", [3, 5])
def test_chaos_profile(nodes, seeds):
    """20% loss, 300 ms delays, frequent crashes/partitions/jumps/snapshots/shutdowns."""
    run_group(seeds, nodes, "chaos")
