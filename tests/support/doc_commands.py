"""Commands as an operator page writes them, for tests that run them as written.

``documented_command(page, section, starts, values)`` finds, in the section of
``docs/<page>`` under the heading ``section``, the first command (in a fenced block, or
in backticks) that begins with ``starts``; it joins ``\\`` line ends, drops
``[optional parts]``, puts the test's values in place of the page's placeholders
(``{"<survivor host:port>": "127.0.0.1:9093"}``; a placeholder not on the page fails, so
a page and its test cannot drift apart) and returns the words.
"""
from __future__ import annotations

import re
import shlex
from pathlib import Path

DOCS = Path(__file__).resolve().parents[2] / "docs"


def _section(text: str, heading: str) -> str:
    m = re.search(rf"^(#+) {re.escape(heading)}\s*$", text, re.M)
    assert m, f"no heading {heading!r}"
    level = len(m.group(1))
    end = re.search(rf"^#{{1,{level}}} ", text[m.end():], re.M)
    return text[m.end(): m.end() + end.start() if end else len(text)]


def documented_command(page: str, section: str, starts: str, values: dict[str, str]) -> list[str]:
    body = _section((DOCS / page).read_text(), section)
    candidates = re.findall(r"```[a-z]*\n(.*?)```", body, re.S) + re.findall(r"`([^`\n]+)`", body)
    for block in candidates:
        for line in block.replace("\\\n", " ").splitlines():
            if line.strip().startswith(starts):
                line = re.sub(r"\[[^\]]*\]", " ", line)
                for placeholder, value in values.items():
                    assert placeholder in line, f"{placeholder!r} is not in the documented command {line!r}"
                    line = line.replace(placeholder, shlex.quote(value))
                return shlex.split(line)
    raise AssertionError(f"docs/{page}, {section!r}: no command starting {starts!r}")
