"""The documentation stays true to the tree:

- docs/configuration.md is what ``python -m tools.docs_config`` renders, and the
  properties it lists are exactly those the node reads (kraft_server/config.py declares
  each once; the code reads them through ``config[...]``, the typed values ``v[...]``
  or, for security settings, ``raw.get(...)`` and a listener's ``get(...)``);
- every repository path, make target and ``dotted.property`` that README.md and
  docs/*.md name exists: paths in the tree, targets in the Makefile, properties among
  those the node reads or Kafka's own (its broker, topic and group definitions, or the
  client settings listed below);
- the site builds with mkdocs in strict mode (no broken link, page or anchor).
"""
from __future__ import annotations

import ast
import json
import re
import subprocess
from pathlib import Path

import pytest

from kraft_server.common.features import VERSIONS as FEATURE_VERSIONS
from kraft_server.config import DEFINITIONS
from tools import docs_compat, docs_config

ROOT = Path(__file__).resolve().parents[3]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

# Kafka client-side settings the pages name (consumer, admin, producer, the tools'
# client properties): Kafka's, not the node's.
KAFKA_CLIENT_PROPERTIES = {
    "security.protocol", "sasl.mechanism", "bootstrap.servers", "auto.offset.reset", "enable.auto.commit",
    "interceptor.classes", "fetch.max.wait.ms", "session.timeout.ms", "group.instance.id", "group.protocol",
    "default.api.timeout.ms", "metadata.recovery.strategy",
}
# Names that look like properties but are not: feature names, record header names, Spark settings.
# feature names (``group.version=0`` in a ``--feature`` example) and other dotted names
NOT_PROPERTIES = {"metadata.version", "snapshot.end.offset", "snapshot.epoch", "spark.jars", *FEATURE_VERSIONS}
# Folders made at run time (make kafka-dist, make run, make docs): named, not committed.
RUNTIME_DIRS = (".cache", "site", "data", ".venv", "out", "__cluster_metadata-0")  # made by a run
FILE_SUFFIXES = (".py", ".md", ".txt", ".json", ".properties", ".log", ".png", ".checkpoint", ".corrupt",
                 ".yml", ".cfg", ".pem", ".jar", ".html", ".css", ".js")

PROPERTY = re.compile(r"^[a-z][a-z0-9]*(?:\.(?:[a-z0-9-]+|<[^>]+>))+$")
MAKE = re.compile(r"(?:^|[\s`(])make ([a-z][a-z0-9-]*)")


def _spans(text: str) -> list[str]:
    """Inline code spans outside fenced blocks."""
    out, fenced = [], False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if not fenced:
            out += re.findall(r"`([^`\n]+)`", line)
    return out


def _code(text: str) -> str:
    """Fenced blocks and inline spans: where commands are written."""
    blocks = re.findall(r"```[^\n]*\n(.*?)```", text, flags=re.S)
    return "\n".join(blocks + _spans(text))


# -- properties the node reads --------------------------------------------------------

def properties_read() -> dict[str, set[str]]:
    """Property names read in kraft_server/, with the files that read them."""
    found: dict[str, set[str]] = {}
    name = re.compile(r"^[a-z][a-z0-9]*(?:\.[a-z0-9]+)*$")
    for path in (ROOT / "kraft_server").rglob("*.py"):
        source = path.read_text()
        if not re.search(r'get\(|(?:config|v)\["', source):
            continue
        for node in ast.walk(ast.parse(source, str(path))):
            key = None
            if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
                f = node.func
                by_raw = isinstance(f, ast.Attribute) and f.attr == "get" and \
                    isinstance(f.value, ast.Name) and f.value.id == "raw"
                if by_raw or (isinstance(f, ast.Name) and f.id == "get"):
                    key = node.args[0].value
            elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and \
                    isinstance(node.value, ast.Name) and node.value.id in ("config", "v"):
                key = node.slice.value
            # a name without a dot is a property only in config.py (``v["listeners"]``)
            if isinstance(key, str) and name.match(key) and ("." in key or path.name == "config.py"):
                found.setdefault(key, set()).add(str(path.relative_to(ROOT)))
    return found


def test_every_property_read_is_declared_and_every_declared_one_is_read():
    read = properties_read()
    declared = {d.name for d in DEFINITIONS}
    undeclared = {k: sorted(v) for k, v in read.items() if k not in declared}
    assert not undeclared, f"read but not declared in kraft_server/config.py DEFINITIONS: {undeclared}"
    unread = declared - set(read)
    assert not unread, f"declared in kraft_server/config.py but never read: {sorted(unread)}"
    assert len(declared) == len(DEFINITIONS), "a property is declared twice"


def test_every_declared_property_has_a_description_and_kafkas_type():
    kafka = {e["name"]: e for e in json.loads(docs_config.KAFKA_DEFS.read_text())["broker"]}
    for d in DEFINITIONS:
        assert d.doc.strip(), f"{d.name} has no description"
        if d.name in kafka:
            assert docs_config.TYPES[d.parse] == kafka[d.name]["type"], d.name


def test_configuration_page_is_generated():
    page = ROOT / "docs" / "configuration.md"
    assert page.read_text() == docs_config.render(), "docs/configuration.md is stale: run python -m tools.docs_config"
    for d in DEFINITIONS:
        assert f"| `{d.name}` |" in page.read_text()


def test_compatibility_api_table_is_generated():
    """docs/compatibility.md's API table is rendered from ``registry.API``: one row per
    API we serve, with the versions each listener lists."""
    from kraft_server.api.registry import API, listener_apis
    page = docs_compat.PAGE.read_text()
    assert page == docs_compat.render(), "docs/compatibility.md is stale: run python -m tools.docs_compat"
    controller, client = listener_apis(True, reconfiguration=True), listener_apis(False, reconfiguration=True)
    for key, api in API.items():
        ours = [docs_compat._versions(controller.get(key)), docs_compat._versions(client.get(key))]
        assert f"| {api.name} | {key} | {ours[0]} | {ours[1]} |" in page, api.name


# -- what the pages name --------------------------------------------------------------

def _path_exists(token: str) -> bool:
    token = token.rstrip("/").removeprefix("./")
    if token.split("/")[0] in RUNTIME_DIRS:
        return True
    for base in (ROOT, ROOT / "kraft_server"):
        if any(ch in token for ch in "*?"):
            if list(base.glob(token)):
                return True
        elif (base / token).exists():
            return True
    return False


def _is_path(token: str) -> bool:
    return ("/" in token and not any(c in token for c in " :<>[]{}$=|(),'\"") and not token.startswith(("/", "-"))
            and "//" not in token)


def test_named_paths_exist():
    missing = []
    for page in PAGES:
        text = page.read_text()
        for token in [t for t in _spans(text) if _is_path(t)]:
            if not _path_exists(token):
                missing.append(f"{page.relative_to(ROOT)}: {token}")
        for token in re.findall(r"\]\(([^)#\s]+)", text):  # links, relative to the page
            if "://" not in token and not (page.parent / token).exists():
                missing.append(f"{page.relative_to(ROOT)}: {token}")
    assert not missing, "paths named by the docs that are not in the tree:\n" + "\n".join(missing)


def test_named_make_targets_exist():
    makefile = (ROOT / "Makefile").read_text()
    targets = set(re.findall(r"^([a-z][a-z0-9-]*):", makefile, flags=re.M))
    missing = []
    for page in PAGES:
        for target in MAKE.findall(_code(page.read_text())):
            if target not in targets:
                missing.append(f"{page.relative_to(ROOT)}: make {target}")
    assert not missing, "make targets named by the docs that the Makefile lacks:\n" + "\n".join(missing)


def _known_property(name: str, declared: set[str], kafka: set[str]) -> bool:
    if name.endswith(">"):  # a pattern such as listener.name.<listener>.<property>
        return True
    name = re.sub(r"^listener\.name\.(?:<[^>]+>|[a-z0-9_-]+)\.", "", name)  # <listener>, or one: console
    # ``kafka.<key>``: a client property as Spark's Kafka source option names it.
    candidates = {name, re.sub(r"^(?:<[^>]+>|plain|scram-sha-256|scram-sha-512|kafka)\.", "", name)}
    return any(n in declared or n in kafka or n in KAFKA_CLIENT_PROPERTIES or n in NOT_PROPERTIES
               for n in candidates)


def test_named_properties_are_read_or_kafkas():
    declared = {d.name for d in DEFINITIONS}
    defs = json.loads(docs_config.KAFKA_DEFS.read_text())
    kafka = {e["name"] for section in defs.values() for e in section}
    unknown = []
    for page in PAGES:
        for span in _spans(page.read_text()):
            name = span.split("=", 1)[0].strip()
            if name.endswith(FILE_SUFFIXES) or not PROPERTY.match(name):
                continue
            if not _known_property(name, declared, kafka):
                unknown.append(f"{page.relative_to(ROOT)}: {name}")
    assert not unknown, "properties named by the docs that neither the node nor Kafka has:\n" + "\n".join(unknown)


def test_site_builds_in_strict_mode(tmp_path):
    try:
        from mkdocs.commands.build import build
        from mkdocs.config import load_config
    except ImportError:
        pytest.skip("mkdocs (the docs extra) is not installed: make test installs it")
    config = load_config(str(ROOT / "mkdocs.yml"), site_dir=str(tmp_path / "site"), strict=True)
    build(config)  # raises on a broken link, page or anchor in strict mode
    assert (tmp_path / "site" / "configuration" / "index.html").exists()


# Repository paths named in code comments and docstrings, e.g. ``kraft_server/log/startup.py``.
_CODE_PATH = re.compile(r"\b((?:kraft_server|tests|tools|wire|codegen|bench|docs)/[\w/.-]*\w\.(?:py|md|json))\b")
_NOT_OURS = ("tests/kafkatest/",)  # Kafka's own system-test tree, named as Kafka's


def test_paths_named_in_the_code_exist():
    """A file moved between rooms leaves no comment pointing at its old place."""
    tracked = subprocess.run(["git", "ls-files", "*.py", "*.md"], cwd=ROOT, capture_output=True,
                             text=True, check=True).stdout.split()
    missing = []
    for name in tracked:
        text = (ROOT / name).read_text(errors="replace")
        for token in sorted(set(_CODE_PATH.findall(text))):
            if not token.startswith(_NOT_OURS) and not (ROOT / token).exists():
                missing.append(f"{name}: {token}")
    assert not missing, "paths named in the code that are not in the tree:\n" + "\n".join(missing)
