"""The default-profile sweep of three-node quorums (``tests/simulation/sweep.py``)."""
from __future__ import annotations

import pytest

from tests.simulation.sweep import SEEDS, ids, run_group, sweep


@pytest.mark.parametrize("seeds", sweep(0, SEEDS), ids=ids)
def test_three_nodes(seeds):
    run_group(seeds, 3)
