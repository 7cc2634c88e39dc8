"""Where a test module draws the fresh seeds it parametrizes with (seeds new on every run,
beside its fixed ones).

Under pytest-xdist every worker collects the suite itself and the controller refuses to
run when two workers collected different test ids, so seeds in ids must agree across
workers: the controller draws one number per run (``KRAFT_RUN_SEED``, set by
tests/conftest.py before the workers start, which inherit it) and each module's
generator is seeded from it and the module's name. In one process (no xdist) the draw
is plain chance, as before. A failure still prints its seed for replay."""
from __future__ import annotations

import os
import random

ENV = "KRAFT_RUN_SEED"


def fresh_rng(module: str) -> random.Random:
    """The generator of ``module``'s fresh seeds for this run."""
    run = os.environ.get(ENV)
    if run is None:
        return random.Random(random.SystemRandom().getrandbits(64))
    return random.Random(f"{run}:{module}")


def draw_run_seed() -> str:
    """The run's number, drawn once by the xdist controller."""
    return str(random.SystemRandom().getrandbits(63))
