"""tools/kafka_dist/ports.py: ports outside the ephemeral range, never twice in a process,
and disjoint slices for pytest-xdist workers (each worker is its own process)."""
from __future__ import annotations

import subprocess
import sys

import pytest

from tools.kafka_dist import ports

EPHEMERAL = (32768, 60999)


def _members(ranges) -> set[int]:
    return {p for r0, r1 in ranges for p in range(r0, r1 + 1)}


def test_outside_xdist_the_whole_space_outside_the_ephemeral_range():
    assert ports._worker({}) == (0, 1)
    assert ports.spans(EPHEMERAL) == [(10000, 32767), (61000, 65535)]


@pytest.mark.parametrize("env", [
    {"PYTEST_XDIST_WORKER": "gw1"},  # no count
    {"PYTEST_XDIST_WORKER": "master", "PYTEST_XDIST_WORKER_COUNT": "2"},
    {"PYTEST_XDIST_WORKER": "gw5", "PYTEST_XDIST_WORKER_COUNT": "2"},  # index past the count
    {"PYTEST_XDIST_WORKER": "gw0", "PYTEST_XDIST_WORKER_COUNT": "0"},
])
def test_malformed_worker_variables_mean_a_single_process(env):
    assert ports._worker(env) == (0, 1)


@pytest.mark.parametrize("count", [2, 3, 4, 8])
def test_worker_slices_are_disjoint_and_outside_the_ephemeral_range(count):
    slices = []
    for i in range(count):
        worker = ports._worker({"PYTEST_XDIST_WORKER": f"gw{i}", "PYTEST_XDIST_WORKER_COUNT": str(count)})
        assert worker == (i, count)
        got = _members(ports.spans(EPHEMERAL, worker))
        assert got, f"worker {i} of {count} has no ports"
        assert not got & set(range(EPHEMERAL[0], EPHEMERAL[1] + 1))
        assert min(got) >= 10000 and max(got) <= 65535
        slices.append(got)
    for i in range(count):
        for j in range(i + 1, count):
            assert not slices[i] & slices[j], f"workers {i} and {j} of {count} share ports"
    if count <= 4:  # together they cover the single-process space but for rounding
        whole = _members(ports.spans(EPHEMERAL))
        assert len(whole) - len(set().union(*slices)) < 2 * count


def test_a_slice_too_narrow_is_dropped():
    # 8 workers: the span above the ephemeral range (4,536 ports) gives each only 567
    assert ports.spans(EPHEMERAL, (3, 8)) == [(10000 + 3 * 2846, 10000 + 4 * 2846 - 1)]
    # 64: no slice is wide enough; free_port then lets the kernel pick
    assert ports.spans(EPHEMERAL, (3, 64)) == []


_PICK = ("from tools.kafka_dist.ports import free_port; "
         "print(' '.join(str(free_port()) for _ in range(200)))")


def test_two_simulated_workers_pick_disjoint_real_ports():
    """Two processes with the variables pytest-xdist gives gw0 and gw1 of 2: each port
    each picks lies in its own slice, so the two sets never meet."""
    picked = []
    ephemeral = ports._ephemeral()
    for i in range(2):
        env = {"PYTEST_XDIST_WORKER": f"gw{i}", "PYTEST_XDIST_WORKER_COUNT": "2"}
        out = subprocess.run([sys.executable, "-c", _PICK], capture_output=True, text=True, check=True,
                             timeout=60, env={**_base_env(), **env}).stdout.split()
        got = {int(p) for p in out}
        assert len(got) == 200  # never twice in one process
        assert got <= _members(ports.spans(ephemeral, (i, 2)))
        picked.append(got)
    assert not picked[0] & picked[1]


def _base_env() -> dict:
    import os
    return {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST")}
