"""One seed, end to end: ``events`` events with faults, then a calm phase (healed,
everyone restarted, no loss) that must commit something new within
``CALM_LIMIT_MS`` of simulated time: liveness after the storm.

``run_case`` runs one seed of any sweep configuration (profile, nodes, membership);
``replay_command`` is the command line that replays it. A liveness failure raises
``NoProgress`` with what every node is waiting for (``diagnose.describe``).
"""
from __future__ import annotations

from tests.simulation.cluster import HEALTHY, Faults, Simulation
from tests.simulation.diagnose import describe

CALM_LIMIT_MS = 60_000
# ``membership`` is False, True (admin changes with churn) or NO_CHURN (admin changes as
# before churn existed: the seeds found then replay their runs).
NO_CHURN = "no-churn"
RECOVER = "recover"  # membership plus, once a run, a majority lost for good and recovered (recover.py)
CALM_STEP = 200  # events between progress checks


class NoProgress(AssertionError):
    pass


def replay_command(seed: int, events: int, nodes: int, profile: str = "default",
                   membership: bool = False) -> str:
    cmd = f".venv/bin/python -m tests.simulation --seed {seed} --events {events} --nodes {nodes}"
    if profile != "default":
        cmd += f" --profile {profile}"
    if membership:
        cmd += " --membership"
    if membership == NO_CHURN:
        cmd += " --no-churn"
    if membership == RECOVER:
        cmd += " --recover"
    return cmd


def calm_until_progress(sim: Simulation) -> int:
    """Heal everything and run until something new commits; returns the calm ms."""
    sim.calm()
    committed_before, calm_start, budget = sim.checker.committed_end, sim.now, sim.events_run
    while sim.checker.committed_end <= committed_before:
        if sim.now - calm_start > CALM_LIMIT_MS:
            raise NoProgress(f"no progress {CALM_LIMIT_MS} ms into the calm phase: {sim.summary()}\n"
                             f"{describe(sim)}")
        budget += CALM_STEP
        sim.run(budget)
    return sim.now - calm_start


def run_seed(seed: int, events: int, nodes: int, faults: Faults | None = None) -> dict:
    sim = Simulation(seed, nodes, faults)
    sim.run(events)
    calm_ms = calm_until_progress(sim)
    summary = sim.summary()
    summary["calm_ms"] = calm_ms
    return summary


def run_case(seed: int, events: int, nodes: int, profile: str = "default",
             membership: bool = False) -> dict:
    """One seed of a sweep configuration (the profiles are in ``__main__.PROFILES``)."""
    if membership == RECOVER:
        from tests.simulation.recover import run_recover_seed
        return run_recover_seed(seed, events, nodes)
    if membership:
        from tests.simulation.membership import run_membership_seed
        return run_membership_seed(seed, events, nodes, churn=membership != NO_CHURN)
    from tests.simulation.__main__ import PROFILES
    return run_seed(seed, events, nodes, PROFILES[profile])


def run_healthy(seed: int, events: int, nodes: int) -> Simulation:
    sim = Simulation(seed, nodes, HEALTHY)
    sim.run(events)
    return sim
