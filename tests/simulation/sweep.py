"""The simulation sweeps' shared parts: how many seeds and events, which seeds (half a
fixed range, half this run's fresh range, ``tests/simulation/seeds.py``), run in groups
whose failures name every failing seed with the command that replays it. The sweeps are
spread over several test files so that pytest-xdist (``--dist loadfile``) runs them on
different workers."""
from __future__ import annotations

import os

import pytest

from tests.simulation.runner import replay_command, run_case
from tests.simulation.seeds import fresh_first_seed

SEEDS = int(os.environ.get("SIM_SEEDS", "120"))
# The share of each sweep that ``make test`` runs; the rest is marked slow (``make test-slow``),
# so CI runs the whole sweep and the default suite a third of it.
QUICK_SHARE = float(os.environ.get("SIM_QUICK_SHARE", "0.34"))
EVENTS = int(os.environ.get("SIM_EVENTS", "5000"))
GROUP = 20
FRESH = fresh_first_seed()[0]


def sweep(fixed_first: int, total: int, group: int = GROUP) -> list:
    """Half of ``total`` seeds from ``fixed_first``, half from this run's fresh range,
    in groups of ``group``; of each half, the groups past ``QUICK_SHARE`` are marked slow
    (the first group of each half always runs in the default suite)."""
    fixed, fresh = (total + 1) // 2, total // 2
    out = []
    for first, count in ((fixed_first, fixed), (FRESH + fixed_first, fresh)):
        quick = max(group, int(count * QUICK_SHARE))
        for i in range(0, count, group):
            seeds = range(first + i, first + min(i + group, count))
            out.append(seeds if i < quick else pytest.param(seeds, marks=pytest.mark.slow))
    return out


def run_group(seeds, nodes: int, profile: str = "default", membership: bool = False,
              events: int = EVENTS) -> list[dict]:
    failures, summaries = [], []
    for seed in seeds:
        try:
            summaries.append(run_case(seed, events, nodes, profile, membership))
        except Exception as exc:  # noqa: BLE001 - collect every failing seed of the group
            failures.append(f"seed {seed}: {type(exc).__name__}: {exc}\n"
                            f"    replay: {replay_command(seed, events, nodes, profile, membership)}")
    assert not failures, "\n".join(failures)
    return summaries


def ids(r: range) -> str:
    return f"seeds{r.start}-{r.stop - 1}"
