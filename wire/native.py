"""Which codec path is in use: modules compiled by Cython from their ``.py`` (built by
``pip install -e .``, see setup.py) or the pure-Python sources themselves.

``KRAFT_PURE_PYTHON=1`` forces the sources. A compiled module older than its source (a
checkout or a ``python -m codegen`` since the last build) is never used: then the whole
package runs pure until the next build, so the two paths are never mixed.
"""
from __future__ import annotations

import os
import sys
from importlib.machinery import (
    BYTECODE_SUFFIXES, EXTENSION_SUFFIXES, SOURCE_SUFFIXES, FileFinder, SourceFileLoader,
    SourcelessFileLoader,
)
from pathlib import Path

PURE_ENV = "KRAFT_PURE_PYTHON"
ROOT = Path(__file__).resolve().parent.parent

# What setup.py compiles: the primitives, the record-batch codec and the generated messages
# the bench and the server's hot paths use (the rest would add build time for no gain).
COMPILED = [
    "wire.varint",
    "wire.readers",
    "wire.codec_support",
    "wire.records.header",
    "wire.records.record",
    "wire.records.batch",
    "wire.records.metadata",
    "wire.records.values",
    "wire.messages.request_header",
    "wire.messages.response_header",
    "wire.messages.vote_request",
    "wire.messages.vote_response",
    "wire.messages.begin_quorum_epoch_request",
    "wire.messages.begin_quorum_epoch_response",
    "wire.messages.end_quorum_epoch_request",
    "wire.messages.end_quorum_epoch_response",
    "wire.messages.fetch_request",
    "wire.messages.fetch_response",
    "wire.messages.fetch_snapshot_request",
    "wire.messages.fetch_snapshot_response",
    "wire.messages.describe_quorum_response",
    "wire.messages.metadata_response",
]


def _source(name: str) -> Path:
    return ROOT.joinpath(*name.split(".")).with_suffix(".py")


def _newest_source(name: str) -> float:
    """When the module's .py, or the .pxd that types it, last changed."""
    src = _source(name)
    pxd = src.with_suffix(".pxd")
    return max(src.stat().st_mtime, pxd.stat().st_mtime if pxd.exists() else 0.0)


def _binary(name: str) -> Path | None:
    src = _source(name)
    for suffix in EXTENSION_SUFFIXES:
        p = src.with_suffix(suffix)
        if p.exists():
            return p
    return None


def is_current(name: str) -> bool:
    """A compiled build of module ``name`` is there and no older than its sources."""
    built = _binary(name)
    return built is not None and built.stat().st_mtime >= _newest_source(name)


def _choose() -> tuple[bool, str]:
    """(compiled?, one-line reason), decided once, before any codec module is imported."""
    if os.environ.get(PURE_ENV, "") not in ("", "0"):
        return False, f"pure Python ({PURE_ENV} is set)"
    built = {name: _binary(name) for name in COMPILED}
    missing = [n for n, b in built.items() if b is None]
    if len(missing) == len(COMPILED):
        return False, "pure Python (no compiled modules: no C compiler or Cython at install time)"
    stale = [n for n, b in built.items() if b is not None and b.stat().st_mtime < _newest_source(n)]
    if stale:
        return False, (f"pure Python (compiled {stale[0]} is older than its source; "
                       "rebuild with `pip install -e .`)")
    if missing:
        return True, f"compiled with Cython ({len(COMPILED) - len(missing)} modules; not built: {', '.join(missing)})"
    return True, f"compiled with Cython ({len(COMPILED)} modules)"


def source_only(directory: str) -> None:
    """Make imports from ``directory`` see only .py/.pyc files, never extension modules."""
    sys.path_importer_cache[directory] = FileFinder(
        directory, (SourceFileLoader, SOURCE_SUFFIXES), (SourcelessFileLoader, BYTECODE_SUFFIXES))


COMPILED_IN_USE, DESCRIPTION = _choose()
if not COMPILED_IN_USE:
    # The spellings the import system uses: wire's __path__ and its subpackages' paths
    # derived from it (wire/__init__.py imports this module first, so it is in sys.modules).
    _top = sys.modules[__package__].__path__[0]
    for _sub in ("", "messages", "records"):
        source_only(os.path.join(_top, _sub) if _sub else _top)


def describe() -> str:
    """One line for the log: which path the codecs take in this process."""
    return f"wire codecs: {DESCRIPTION}"
