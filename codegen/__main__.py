"""``python -m codegen`` regenerates wire/messages; ``--check`` fails on drift."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .generate import generate_all

ROOT = Path(__file__).resolve().parent.parent


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m codegen", description=__doc__)
    ap.add_argument("--check", action="store_true",
                    help="exit non-zero if the committed modules differ from the schemas")
    ap.add_argument("--schemas", type=Path, default=ROOT / "schemas")
    ap.add_argument("--out", type=Path, default=ROOT / "wire" / "messages")
    args = ap.parse_args(argv)
    files = generate_all(args.schemas, ROOT)
    out: Path = args.out
    existing = ({p.name for p in out.glob("*.py")} | {p.name for p in out.glob("*.pxd")}
                if out.exists() else set())
    drift = sorted(name for name, text in files.items()
                   if not (out / name).exists() or (out / name).read_text(encoding="utf-8") != text)
    stale = sorted(existing - set(files))
    if args.check:
        for name in drift:
            print(f"codegen: {out / name} differs from its schema; run `python -m codegen`", file=sys.stderr)
        for name in stale:
            print(f"codegen: {out / name} has no schema; run `python -m codegen`", file=sys.stderr)
        if drift or stale:
            return 1
        print(f"codegen: {len(files)} modules up to date")
        return 0
    out.mkdir(parents=True, exist_ok=True)
    for name in drift:
        (out / name).write_text(files[name], encoding="utf-8")
    for name in stale:
        (out / name).unlink()
    print(f"codegen: {len(files)} modules, {len(drift)} written, {len(stale)} removed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
