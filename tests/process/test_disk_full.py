"""A full disk under a live node (issue 27): ``metadata.log.dir`` on a 4 MiB tmpfs that
another file then fills. The node stops at the first write that does not fit, with one
line naming the path and ENOSPC (not a corrupt batch found later by the controller);
the log on disk stays whole; once space returns the node starts again and every record
it had committed is still there."""
from __future__ import annotations

import errno
import os
import subprocess
import uuid

import pytest

from tests.support.kraft_nodes import OurNode, describe_quorum, wait_for


@pytest.fixture
def small_disk(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root (CI and this machine kind run as root)")
    mount = tmp_path / "data"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mount)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def _fill(directory) -> int:
    """Write a file into ``directory`` until the disk is full; its size."""
    written = 0
    with open(directory / "filler", "wb", buffering=0) as f:
        chunk = b"\0" * 65536
        while True:
            try:
                n = f.write(chunk)
            except OSError as exc:
                assert exc.errno == errno.ENOSPC
                break
            written += n
            if n < len(chunk):
                chunk = chunk[n:] or b"\0"
    return written


def test_a_full_disk_stops_the_node_cleanly_and_it_restarts_when_space_returns(tmp_path, small_disk):
    node = OurNode(tmp_path, extra=("metadata.max.idle.interval.ms=20",))
    node.format_with_ours(uuid.uuid4().hex[:22])
    node.start()
    committed = 0
    try:
        node.wait_leader(60)
        committed = describe_quorum("127.0.0.1", node.port, timeout=1.0).high_watermark
        assert _fill(small_disk) > 0

        def stopped():
            nonlocal committed
            if node.proc.poll() is not None:
                return True
            try:  # what the node acknowledged as committed before it stopped
                committed = max(committed, describe_quorum("127.0.0.1", node.port, timeout=1.0).high_watermark)
            except (OSError, ValueError):
                pass
            return False
        wait_for(stopped, 180, "the node to stop on the full disk")
    finally:
        code = node.stop()
    log = node.log_path.read_text(errors="replace")
    assert code == 1, node.log_tail()
    failure = [line for line in log.splitlines() if "metadata log directory failure" in line]
    assert failure and "No space left on device (ENOSPC)" in failure[0], node.log_tail()
    assert str(small_disk) in failure[0]
    assert "ERROR Metadata log directory failure: " in log  # the one line on stderr
    assert "BatchError" not in log and "Traceback" not in log
    (small_disk / "filler").unlink()
    node.start()
    try:
        q = node.wait_leader(60)
        assert q.high_watermark >= committed > 0
    finally:
        node.stop()
    restarted = node.log_path.read_text(errors="replace")[len(log):]
    assert "truncat" not in restarted.lower(), restarted  # no torn batch was left to cut
