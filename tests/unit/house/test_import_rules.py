"""The rooms' import rules (issue 9), checked from the source with ``ast``, not by importing:

- ``kraft_server/raft`` (the core) imports from ``kraft_server`` only itself and
  ``common``: no ``log``, ``net``, ``api``, ``controller``, ``shell`` or ``metrics``
  (and ``wire``, of course);
- ``kraft_server/controller`` imports nothing from ``log`` or ``net``, and its image
  (``image/``) nothing from the decision rooms (every other room of the controller:
  ``cluster/``, ``replication/``, ``configs/`` but its definitions, ``quotas/``,
  ``features/``, ``acls/``, ``scram/``, ``tokens/``) nor the machinery that runs them;
- ``kraft_server/log`` (storage) imports nothing from ``raft``;
- ``kraft_server/groups`` (the group coordinator's state) imports nothing from ``api``,
  ``net``, ``raft``, ``controller`` or ``shell``;
- ``wire`` (the codecs) imports nothing from ``kraft_server``;
- the other rooms (``controller``, ``shell``, ``api``, ``net``, ``metrics``) use the core
  only through ``kraft_server.raft`` itself, never its submodules, and read it through
  its methods (no ``core.quorum.state``, no ``core.log``);
- record batches are built and walked only in ``wire/records``: nowhere else in the
  server, the tools or the benches is CRC-32C computed or a batch header packed;
- ``tools`` and ``bench`` may import anything.

Imports inside functions count too; relative imports are resolved from the file's package.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
RAFT_SUBMODULES = frozenset(
    p.stem if p.is_file() else p.name
    for p in (ROOT / "kraft_server" / "raft").iterdir()
    if (p.suffix == ".py" and p.stem != "__init__") or (p.is_dir() and (p / "__init__.py").exists())
)


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported_modules(source: str, module: str, is_package: bool = False) -> list[tuple[int, str]]:
    """``(line, absolute module name)`` for every import in ``source``. For ``from M import
    a, b`` both ``M.a`` and ``M.b`` are listed: either may be a submodule."""
    package = module if is_package else module.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[:len(anchor) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            found.append((node.lineno, base))
            found += [(node.lineno, f"{base}.{alias.name}") for alias in node.names if alias.name != "*"]
    return found


def python_files(*folders: str):
    for folder in folders:
        yield from sorted((ROOT / folder).rglob("*.py"))


def violations(folder: str, forbidden) -> list[str]:
    out = []
    for path in python_files(folder):
        module = module_name(path)
        for line, name in imported_modules(path.read_text(), module, path.name == "__init__.py"):
            if forbidden(name):
                out.append(f"{path.relative_to(ROOT)}:{line} imports {name}")
    return out


def _under(name: str, *prefixes: str) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def test_the_core_imports_only_itself_common_and_wire():
    def outside(name: str) -> bool:
        return _under(name, "kraft_server") and not _under(name, "kraft_server.raft", "kraft_server.common")
    assert violations("kraft_server/raft", outside) == []


# What the image may read from the rest of the controller: Kafka's config definitions
# (facts about config names and types), nothing that decides.
IMAGE_MAY_IMPORT = ("kraft_server.controller.image", "kraft_server.controller.configs.definitions")


def test_the_controllers_image_imports_none_of_its_decision_rooms():
    """Every room and module of the controller but the image is a decision room (or the
    machinery that runs them): ``image/`` imports none of them."""
    rooms = sorted(p.name for p in (ROOT / "kraft_server" / "controller").iterdir()
                   if p.is_dir() and (p / "__init__.py").exists() and p.name != "image")
    assert {"cluster", "replication", "configs", "quotas", "features", "acls", "scram", "tokens"} <= set(rooms)

    def decision(name: str) -> bool:
        return _under(name, "kraft_server.controller") and not _under(name, *IMAGE_MAY_IMPORT)
    assert violations("kraft_server/controller/image", decision) == []


def test_the_controller_imports_nothing_from_storage_or_sockets():
    assert violations("kraft_server/controller", lambda name: _under(name, "kraft_server.log", "kraft_server.net")) == []


def test_the_group_coordinator_imports_no_request_core_or_controller_room():
    """``groups/`` keeps state; decoding and answering requests is ``api/groups``'s."""
    assert violations("kraft_server/groups", lambda name: _under(
        name, "kraft_server.api", "kraft_server.net", "kraft_server.raft", "kraft_server.controller",
        "kraft_server.shell")) == []


def test_storage_imports_nothing_from_the_core():
    assert violations("kraft_server/log", lambda name: _under(name, "kraft_server.raft")) == []


def test_the_codecs_import_nothing_from_the_server():
    assert violations("wire", lambda name: _under(name, "kraft_server")) == []


def _raft_submodule(name: str) -> bool:
    parts = name.split(".")
    return parts[:2] == ["kraft_server", "raft"] and len(parts) > 2 and parts[2] in RAFT_SUBMODULES


USERS_OF_THE_CORE = ("controller", "shell", "api", "net", "metrics", "console")


@pytest.mark.parametrize("room", USERS_OF_THE_CORE)
def test_the_other_rooms_use_only_the_cores_public_surface(room):
    assert violations(f"kraft_server/{room}", _raft_submodule) == []


def _reads_core_internals(source: str) -> list[int]:
    """Lines reading the core's state objects (``x.quorum.state``) or its log (``core.log``)
    instead of the node's methods."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute):
            if node.attr == "state" and node.value.attr == "quorum":
                out.append(node.lineno)
        if (isinstance(node, ast.Attribute) and node.attr == "log" and isinstance(node.value, ast.Name)
                and node.value.id == "core"):
            out.append(node.lineno)
    return out


@pytest.mark.parametrize("room", USERS_OF_THE_CORE)
def test_the_other_rooms_read_the_core_through_its_methods(room):
    out = [f"{path.relative_to(ROOT)}:{line}" for path in python_files(f"kraft_server/{room}")
           for line in _reads_core_internals(path.read_text())]
    assert out == []


def test_the_cores_public_surface_is_exported():
    """What the other rooms import from ``kraft_server.raft`` is in its ``__all__``."""
    init = ast.parse((ROOT / "kraft_server" / "raft" / "__init__.py").read_text())
    [exported] = [ast.literal_eval(node.value) for node in init.body if isinstance(node, ast.Assign)
                  and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets)]
    used = set()
    for path in python_files(*(f"kraft_server/{room}" for room in USERS_OF_THE_CORE)):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module == "kraft_server.raft":
                used |= {alias.name for alias in node.names}
    assert used and used <= set(exported)


# -- one record-batch codec -------------------------------------------------------------

# A v2 batch header starts baseOffset:int64, length:int32, partitionLeaderEpoch:int32,
# magic:int8 (``>qiib``); packing or unpacking that is writing or walking batches.
BATCH_HEADER_FORMATS = (">qiib", "!qiib")


def batch_codec_uses(source: str) -> list[tuple[int, str]]:
    """``(line, what)`` for CRC-32C imports and batch-header struct formats in ``source``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, f"import {a.name}") for a in node.names if a.name.split(".")[0] == "crc32c"]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "crc32c":
            found.append((node.lineno, f"from {node.module} import ..."))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if node.value.replace(" ", "").startswith(BATCH_HEADER_FORMATS):
                found.append((node.lineno, f"struct format {node.value!r}"))
    return found


def test_only_wire_records_builds_or_walks_record_batches():
    records = ROOT / "wire" / "records"
    out = []
    for path in python_files("kraft_server", "tools", "bench", "wire"):
        if records in path.parents:
            continue
        out += [f"{path.relative_to(ROOT)}:{line}: {what}" for line, what in batch_codec_uses(path.read_text())]
    assert out == []


# -- the checks themselves catch what they are meant to ---------------------------------

@pytest.mark.parametrize("source, module, expected", [
    ("from kraft_server.log.memory import MemoryLog", "kraft_server.raft.node",
     "kraft_server.log.memory"),
    ("from ...log import memory", "kraft_server.raft.rpc.fetch", "kraft_server.log.memory"),
    ("from ..controller import active", "kraft_server.raft.node", "kraft_server.controller.active"),
    ("def f():\n    import kraft_server.shell.driver", "kraft_server.raft.node", "kraft_server.shell.driver"),
])
def test_imported_modules_resolves_absolute_relative_and_local_imports(source, module, expected):
    assert expected in [name for _, name in imported_modules(source, module)]


def test_a_submodule_import_through_the_package_is_caught():
    assert _raft_submodule("kraft_server.raft.node.NotLeader")
    assert _raft_submodule("kraft_server.raft.roles.base")
    assert not _raft_submodule("kraft_server.raft.NotLeader")
    assert not _raft_submodule("kraft_server.raft")


def test_batch_codec_uses_are_found():
    source = ('import struct\nimport crc32c\n_HEAD = struct.Struct(">qiibI")\n'
              'def f(b):\n    return struct.unpack_from("> q i i b", b, 0)\n')
    assert [line for line, _ in batch_codec_uses(source)] == [2, 3, 5]
    assert batch_codec_uses('import struct\nHDR = struct.Struct(">ihih")\n') == []
