"""``python -m tools.kafka_configdefs [--check]`` (see the package docstring)."""
from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

from tools.kafka_dist import classpath, java_executable, javac_executable

HERE = Path(__file__).resolve().parent
TARGET = HERE.parents[1] / "kraft_server" / "controller" / "configs" / "kafka_config_defs.json"


def dump() -> str:
    cp = classpath()
    with tempfile.TemporaryDirectory() as out:
        subprocess.run([str(javac_executable()), "-d", out, "-cp", cp, str(HERE / "DumpConfigDefs.java")],
                       check=True)
        raw = subprocess.run([str(java_executable()), "-cp", out + ":" + cp, "DumpConfigDefs"],
                             check=True, capture_output=True, text=True).stdout
    data = json.loads(raw)
    parts = []
    for kind in ("broker", "topic", "group", "client_metrics"):  # one definition a line: reviewable diffs
        rows = ",\n".join(json.dumps(d, sort_keys=True) for d in data[kind])
        parts.append(f'"{kind}": [\n{rows}\n]')
    return "{\n" + ",\n".join(parts) + "\n}\n"


def main(argv: list[str]) -> int:
    text = dump()
    if "--check" in argv:
        same = TARGET.exists() and TARGET.read_text(encoding="utf-8") == text
        print("kafka_configdefs: " + ("up to date" if same else f"{TARGET} differs"))
        return 0 if same else 1
    TARGET.write_text(text, encoding="utf-8")
    print(f"kafka_configdefs: wrote {TARGET}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
