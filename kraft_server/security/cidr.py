"""CIDR host patterns in ACLs (Kafka 4.4.0, from metadata.version 4.4-IV1;
``org.apache.kafka.server.authorizer.internals.CidrUtils``).

An ACL host containing ``/`` is a network: ``10.0.0.0/8``, ``2001:db8::/32`` (IPv6 when
it contains ``:``). ``in_range(host, pattern)``: the caller's address is inside it, the
network and broadcast addresses included (commons-net ``SubnetUtils`` with an inclusive
host count); an address of the other family, or anything unparsable, is not.
``invalid_reason(pattern)``: why a pattern is refused at creation, or None.
"""
from __future__ import annotations

import ipaddress
import re

_IPV4 = re.compile(r"(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})/(\d{1,2})")


def is_cidr(host: str) -> bool:
    return "/" in host


def invalid_reason(pattern: str) -> str | None:
    """The message of the IllegalArgumentException Kafka's shaded commons-net throws:
    ``SubnetUtils`` for IPv4 (``Could not parse [..]``, ``Value [..] not in range [a,b]``),
    ``SubnetUtils6`` for IPv6 (``Could not parse [..] - <why>``)."""
    if ":" in pattern:
        address, _, prefix = pattern.rpartition("/")
        if not prefix.isdigit():
            return f"Could not parse [{pattern}] - invalid prefix length"
        if not 0 <= int(prefix) <= 128:
            return f"Could not parse [{pattern}] - prefix length must be between 0 and 128"
        try:
            parsed = ipaddress.ip_address(address)
        except ValueError:
            return f"Could not parse [{address}]"  # as Kafka 4.4.0 answers (checked live)
        if parsed.version != 6:
            return f"Could not parse [{address}] - not an IPv6 address"
        return None
    m = _IPV4.fullmatch(pattern)
    if m is None:
        return f"Could not parse [{pattern}]"
    for octet in m.groups()[:4]:
        if not 0 <= int(octet) <= 255:
            return f"Value [{int(octet)}] not in range [0,255]"
    if not 0 <= int(m.group(5)) <= 32:
        return f"Value [{int(m.group(5))}] not in range [0,32]"
    return None


def in_range(host: str, pattern: str) -> bool:
    if "/" not in pattern:
        return False
    try:
        network = ipaddress.ip_network(pattern, strict=False)
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.version == network.version and address in network
