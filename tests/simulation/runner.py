"""One seed, end to end: ``events`` events with faults, then a calm phase (healed,
everyone restarted, no loss) that must commit something new within
``CALM_LIMIT_MS`` of simulated time: liveness after the storm."""
from __future__ import annotations

from tests.simulation.cluster import HEALTHY, Faults, Simulation

CALM_LIMIT_MS = 60_000
CALM_STEP = 200  # events between progress checks


def replay_command(seed: int, events: int, nodes: int) -> str:
    return f".venv/bin/python -m tests.simulation --seed {seed} --events {events} --nodes {nodes}"


def run_seed(seed: int, events: int, nodes: int, faults: Faults | None = None) -> dict:
    sim = Simulation(seed, nodes, faults)
    sim.run(events)
    sim.calm()
    committed_before, calm_start, budget = sim.checker.committed_end, sim.now, sim.events_run
    while sim.checker.committed_end <= committed_before:
        if sim.now - calm_start > CALM_LIMIT_MS:
            raise AssertionError(f"no progress {CALM_LIMIT_MS} ms into the calm phase: {sim.summary()}")
        budget += CALM_STEP
        sim.run(budget)
    summary = sim.summary()
    summary["calm_ms"] = sim.now - calm_start
    return summary


def run_healthy(seed: int, events: int, nodes: int) -> Simulation:
    sim = Simulation(seed, nodes, HEALTHY)
    sim.run(events)
    return sim
