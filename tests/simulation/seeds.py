"""Where the simulation sweeps of ``make test`` look: a fixed range (the same seeds
every run, so a regression there is caught at once) plus a fresh range drawn anew
for every change of the code, so CI does not keep trying the same seeds forever.

The fresh range starts at ``SIM_FIRST_SEED`` when set (to replay a run), else at a
number derived from the commit under test and, when the work tree has uncommitted
changes, from those changes too. It is printed in pytest's header and in every
failure's replay command.
"""
from __future__ import annotations

import hashlib
import os
import random
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FRESH_SPACE = 10**9  # far above every fixed range and regression seed


def _git(*args: str) -> bytes:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, timeout=30, check=True).stdout


def _derive() -> tuple[int, str]:
    try:
        digest = hashlib.sha256(_git("rev-parse", "HEAD"))
        diff = _git("diff", "HEAD")
        digest.update(diff)
        source = "the commit" + (" and its uncommitted changes" if diff else "")
    except (OSError, subprocess.SubprocessError):
        return random.SystemRandom().randrange(FRESH_SPACE), "chance (no git checkout)"
    return 10**6 + int.from_bytes(digest.digest()[:8], "big") % FRESH_SPACE, source


def fresh_first_seed() -> tuple[int, str]:
    """(first seed of the fresh range, where it came from); the same for one process."""
    global _cached
    if _cached is None:
        env = os.environ.get("SIM_FIRST_SEED")
        _cached = (int(env), "SIM_FIRST_SEED") if env else _derive()
    return _cached


_cached: tuple[int, str] | None = None
