"""Shared pytest hooks: the header names the seeds this run's sweeps draw."""
from __future__ import annotations


def pytest_report_header(config):
    from tests.simulation.seeds import fresh_first_seed
    first, source = fresh_first_seed()
    return [f"simulation: fresh seeds from {first} (derived from {source}); "
            f"replay this run's sweep with SIM_FIRST_SEED={first}"]
