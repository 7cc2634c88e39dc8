"""What ``add-controller`` reads from the new controller's properties file.

As ``MetadataQuorumCommand`` (4.4.0) does, with its messages:

- ``node.id``: present and not negative; ``process.roles`` must contain
  ``controller``;
- the metadata directory: ``metadata.log.dir``, else the first ``log.dirs``
  entry; its ``meta.properties`` must carry a ``directory.id``;
- the endpoints: each name of ``controller.listener.names`` (upper-cased), looked
  up in ``advertised.listeners``, which overrides ``listeners``; an empty host
  becomes ``localhost``. Order: ``controller.listener.names``.
"""
from __future__ import annotations

import re
import uuid
from pathlib import Path

from kraft_server.java_properties import load_properties
from kraft_server.log.meta_properties import MetaProperties, MetaPropertiesError

from .client import Endpoint
from .errors import TerseError

_VALID = " Is this a valid controller configuration file?"
# SocketServerConfigs.listenerListToEndPoints: NAME://host:port, [v6] allowed, empty host allowed.
_LISTENER = re.compile(r"^(.*)://\[?([0-9a-zA-Z\-%._:]*)\]?:(-?[0-9]+)$")


def load_command_config(path: str | None) -> dict[str, str]:
    if path is None:
        return {}
    if not Path(path).exists():
        raise TerseError(f"Properties file {path} does not exist.")
    return load_properties(path)


def controller_id(props: dict[str, str]) -> int:
    if "node.id" not in props:
        raise TerseError("node.id not found in configuration file." + _VALID)
    try:
        node_id = int(props["node.id"].strip())
    except ValueError:
        raise TerseError(f'For input string: "{props["node.id"]}"') from None
    if node_id < 0:
        raise TerseError("node.id was negative in configuration file." + _VALID)
    if "controller" not in props.get("process.roles", ""):
        raise TerseError("process.roles did not contain 'controller' in configuration file." + _VALID)
    return node_id


def metadata_directory(props: dict[str, str]) -> str:
    if "metadata.log.dir" in props:
        return props["metadata.log.dir"]
    if "log.dirs" in props:
        dirs = props["log.dirs"].strip().split(",")
        if dirs:
            return dirs[0]
    raise TerseError("Neither metadata.log.dir nor log.dirs were found." + _VALID)


def metadata_directory_id(directory: str) -> uuid.UUID:
    path = Path(directory) / "meta.properties"
    try:
        meta = MetaProperties.from_props(load_properties(path), str(path))
    except (OSError, MetaPropertiesError, ValueError):
        raise TerseError(f"Unable to read meta.properties from {directory}") from None
    if meta.directory_id is None:
        raise TerseError(f"No directory id found in {directory}")
    return meta.directory_id


def _endpoints(text: str) -> dict[str, Endpoint]:
    found = {}
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        m = _LISTENER.match(item)
        if not m:
            raise TerseError(f"Unable to parse {item} to a broker endpoint")
        name = m.group(1).upper()
        found[name] = Endpoint(name, m.group(2) or "localhost", int(m.group(3)))
    return found


def controller_endpoints(props: dict[str, str]) -> list[Endpoint]:
    listeners = _endpoints(props.get("listeners", ""))
    listeners.update(_endpoints(props.get("advertised.listeners", "")))
    if "controller.listener.names" not in props:
        raise TerseError("controller.listener.names was not found." + _VALID)
    result: list[Endpoint] = []
    for name in props["controller.listener.names"].split(","):
        name = name.strip().upper()
        endpoint = listeners.get(name)
        if endpoint is None:
            raise TerseError(f"Cannot find information about controller listener name: {name}")
        if endpoint not in result:  # a LinkedHashSet in Java
            result.append(endpoint)
    return result


def endpoints_text(endpoints: list[Endpoint]) -> str:
    return ", ".join(str(e) for e in endpoints)
