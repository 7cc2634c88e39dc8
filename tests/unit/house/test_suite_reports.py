"""The suite's own summary lines (tests/conftest.py): time and CPU per test file."""
from __future__ import annotations

from types import SimpleNamespace

from tests.conftest import _cpu_s, cpu_per_file, time_per_file


def _rep(nodeid, duration=0.0, cpu=None):
    props = [("cpu_s", cpu)] if cpu is not None else []
    return SimpleNamespace(nodeid=nodeid, duration=duration, user_properties=props)


def test_cpu_and_time_are_summed_per_file_most_first():
    reports = [_rep("a.py::t1", 1.0, 2.0), _rep("a.py::t2", 1.5, 3.0), _rep("b.py::t", 5.0, 1.0),
               _rep("c.py::t", 0.5)]  # no CPU recorded: left out of the CPU table
    assert cpu_per_file(reports) == [(5.0, "a.py"), (1.0, "b.py")]
    assert time_per_file(reports) == [(5.0, "b.py"), (2.5, "a.py"), (0.5, "c.py")]


def test_the_cpu_count_includes_reaped_children():
    import subprocess
    import sys
    before = _cpu_s()
    subprocess.run([sys.executable, "-c", "x = 0\nfor i in range(3_000_000): x += i"], check=True)
    assert _cpu_s() - before > 0.05
