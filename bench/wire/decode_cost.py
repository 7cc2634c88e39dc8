"""What one decode of a bench/wire/codec.py message row costs, independent of the machine's load.

    python bench/wire/decode_cost.py                      # blocks per decode, compiled and pure
    python bench/wire/decode_cost.py --callgrind          # + instructions per decode (valgrind, minutes)
    python bench/wire/decode_cost.py --row vote_request_v2

* blocks: ``sys.getallocatedblocks()`` grown by one decode whose result is kept alive (the
  objects, lists, tuples, strings and ints it allocates and keeps);
* instructions: callgrind's instruction count of a process decoding N times minus that of
  the same process decoding 0 times, divided by N (the compiled path; load-independent, so
  two builds compare even on a busy machine).
"""
from __future__ import annotations

import argparse
import gc
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ROWS = {  # row -> (message module, class, version, data builder in bench/wire/codec.py, our builder)
    "metadata_response_v12": ("metadata_response", "MetadataResponse", 12, "metadata_data", "md_ours"),
    "describe_quorum_response_v2": ("describe_quorum_response", "DescribeQuorumResponse", 2,
                                    "describe_quorum_data", "dq_ours"),
    "vote_request_v2": ("vote_request", "VoteRequest", 2, "vote_data", "vote_ours"),
}


def _encode(row: str) -> bytes:
    sys.path.insert(0, str(ROOT))
    from bench.wire import codec  # bench/wire/codec.py: the very message its row times

    _, _, version, data, ours = ROWS[row]
    return getattr(codec, ours)(getattr(codec, data)()).encode(version)


def _child(row: str, path: str, mode: str, n: int) -> None:
    """Runs in a fresh process: the decode loop (``run``) or the block count (``blocks``)."""
    import importlib

    from wire import native
    module, name, version, _, _ = ROWS[row]
    cls = getattr(importlib.import_module(f"wire.messages.{module}"), name)
    buf = Path(path).read_bytes()
    cls.decode(buf, version)
    gc.disable()
    if mode == "blocks":
        counts = []
        for _ in range(5):
            before = sys.getallocatedblocks()
            kept = cls.decode(buf, version)
            counts.append(sys.getallocatedblocks() - before)
            del kept
        print(f"{native.DESCRIPTION}: {min(counts):,} blocks per decode kept alive")
        return
    for _ in range(n):
        cls.decode(buf, version)


def _run_child(row, path, mode, n, pure=False, prefix=()):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    if pure:
        env["KRAFT_PURE_PYTHON"] = "1"
    cmd = [*prefix, sys.executable, __file__, "--child", mode, str(n), "--row", row, "--input", path]
    return subprocess.run(cmd, env=env, cwd=ROOT, check=True, capture_output=True, text=True, timeout=1800)


def _instructions(row, path, n: int) -> int:
    def collected(k):
        with tempfile.TemporaryDirectory() as tmp:
            out = _run_child(row, path, "run", k, prefix=(
                "valgrind", "--tool=callgrind", f"--callgrind-out-file={tmp}/cg.out"))
        return int(re.search(r"Collected : (\d+)", out.stderr).group(1))
    return (collected(n) - collected(0)) // n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--row", default="metadata_response_v12", choices=sorted(ROWS))
    ap.add_argument("--callgrind", action="store_true", help="also count instructions (valgrind)")
    ap.add_argument("-n", type=int, default=200, help="decodes in the callgrind run")
    ap.add_argument("--child", nargs=2, metavar=("MODE", "N"), help=argparse.SUPPRESS)
    ap.add_argument("--input", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        _child(args.row, args.input, args.child[0], int(args.child[1]))
        return
    with tempfile.NamedTemporaryFile(suffix=".bin") as f:
        f.write(_encode(args.row))
        f.flush()
        print(f"{args.row}: {os.path.getsize(f.name):,} bytes")
        for pure in (False, True):
            print(" ", _run_child(args.row, f.name, "blocks", 0, pure).stdout.strip())
        if args.callgrind:
            print(f"  instructions per decode (compiled path, callgrind, {args.n} decodes): "
                  f"{_instructions(args.row, f.name, args.n):,}")


if __name__ == "__main__":
    main()
