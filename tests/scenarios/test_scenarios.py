"""Runs tests/scenarios/*.txt through tests/support/scenario_engine.py (KRAFT_REWRITE=1 rewrites)."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support.scenario_engine import Scenario, parse, render

FILES = sorted(Path(__file__).parent.glob("*.txt"))


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_scenario(path):
    stanzas = parse(path.read_text())
    scenario, actual = Scenario(), []
    for comments, command, expected in stanzas:
        if command is None:
            actual.append((comments, None, None))
            continue
        out = scenario.run(command) or "ok"
        actual.append((comments, command, out))
    if os.environ.get("KRAFT_REWRITE"):
        path.write_text(render(actual))
        return
    for (_, command, expected), (_, _, out) in zip(stanzas, actual):
        if command is not None:
            assert out == expected, f"{path.name}: {command}\n--- expected\n{expected}\n--- got\n{out}"
