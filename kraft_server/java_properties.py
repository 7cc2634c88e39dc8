"""Java ``Properties`` text: how Kafka reads ``server.properties`` and writes
``meta.properties``.

Reading follows ``Properties.load``: ``=``, ``:`` or whitespace separate key and
value; ``#``/``!`` start comment lines; a line ending in an odd number of
backslashes continues on the next (whose leading blanks are dropped); escapes
``\\t \\n \\r \\f \\uXXXX`` and ``\\<c>`` = ``c``; files are ISO-8859-1, as
``Properties.load(InputStream)`` (Kafka's ``Utils.loadProps``) reads them.

Writing follows ``Properties.store(writer, comments)``: a ``#<comments>`` line, a
``#<Date.toString()>`` line, then ``key=value`` lines with ``\\``, ``=``, ``:``,
``#``, ``!`` and leading (in keys, every) space escaped; Kafka stores through a
UTF-8 ``Writer``, so other characters are written as they are.
"""
from __future__ import annotations

import re
import time
from pathlib import Path


class PropertiesSyntaxError(ValueError):
    pass


_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}
_WS = " \t\f"


def _logical_lines(text: str):
    """Yield logical lines: comments and blank lines dropped, continuations joined."""
    lines = re.split(r"\r\n|\r|\n", text)
    i = 0
    while i < len(lines):
        line = lines[i].lstrip(_WS)
        i += 1
        if not line or line[0] in "#!":
            continue  # a comment line never continues, even with a trailing backslash
        while _ends_with_continuation(line) and i < len(lines):
            line = line[:-1] + lines[i].lstrip(_WS)
            i += 1
        if _ends_with_continuation(line):  # a backslash at end of file is dropped
            line = line[:-1]
        yield line


def _ends_with_continuation(line: str) -> bool:
    n = len(line) - len(line.rstrip("\\"))
    return n % 2 == 1


def _unescape(s: str) -> str:
    out = []
    i = 0
    while i < len(s):
        c = s[i]
        if c != "\\" or i + 1 >= len(s):
            out.append(c)
            i += 1
            continue
        nxt = s[i + 1]
        if nxt == "u":
            hexdigits = s[i + 2 : i + 6]
            if len(hexdigits) != 4 or not all(h in "0123456789abcdefABCDEF" for h in hexdigits):
                raise PropertiesSyntaxError("Malformed \\uxxxx encoding.")
            out.append(chr(int(hexdigits, 16)))
            i += 6
        else:
            out.append(_ESCAPES.get(nxt, nxt))
            i += 2
    return "".join(out)


def _split_key_value(line: str) -> tuple[str, str]:
    """Java's rule: the key ends at the first unescaped ``=``, ``:`` or whitespace;
    whitespace, at most one ``=``/``:``, and whitespace again separate it from the value."""
    i = 0
    while i < len(line) and not (line[i] in "=:" or line[i] in _WS):
        i += 2 if line[i] == "\\" else 1
    i = min(i, len(line))
    key = line[:i]
    rest = line[i:]
    if rest[:1] in _WS:
        rest = rest.lstrip(_WS)
    if rest[:1] in ("=", ":"):
        rest = rest[1:].lstrip(_WS)
    return _unescape(key), _unescape(rest)


def parse_properties(text: str) -> dict[str, str]:
    """Parse Java ``Properties`` text into a dict (the last duplicate key wins)."""
    props: dict[str, str] = {}
    for line in _logical_lines(text):
        key, value = _split_key_value(line)
        props[key] = value
    return props


def load_properties(path: str | Path) -> dict[str, str]:
    """Read a properties file as ``Properties.load(InputStream)`` does (ISO-8859-1)."""
    return parse_properties(Path(path).read_bytes().decode("latin-1"))


def java_date(now: float | None = None) -> str:
    """``java.util.Date.toString()``: ``EEE MMM dd HH:mm:ss zzz yyyy``."""
    return time.strftime("%a %b %d %H:%M:%S %Z %Y", time.localtime(now))


def _escape(s: str, key: bool) -> str:
    out = []
    for i, c in enumerate(s):
        if c == " " and (key or i == 0):
            out.append("\\ ")
        elif c in "\\=:#!":
            out.append("\\" + c)
        elif c in "\t\n\r\f":
            out.append({"\t": "\\t", "\n": "\\n", "\r": "\\r", "\f": "\\f"}[c])
        else:
            out.append(c)
    return "".join(out)


def render_properties(items: list[tuple[str, str]], comment: str = "", now: float | None = None) -> str:
    """``Properties.store`` text for ``items`` in the given order."""
    lines = ["#" + comment, "#" + java_date(now)] + [f"{_escape(k, True)}={_escape(v, False)}" for k, v in items]
    return "\n".join(lines) + "\n"
