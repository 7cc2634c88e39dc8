"""What a voter move does to the brokers (and any other observer) that follow the quorum.

A Kafka broker finds the Raft leader only through Fetch answers: from the leader it
follows, and, when that one stops answering, from a server of its own
``controller.quorum.bootstrap.servers`` (or of ``controller.quorum.voters``), a list
read once at start-up. When the leader removes itself, it resigns and, no longer a
voter, never hears who won the next election (BeginQuorumEpoch goes to voters only);
a broker that can then ask only the controllers leaving hears "no leader" and keeps
asking them. So before the move every broker's list must name a controller that
stays, and after it every broker must be seen fetching from the new leader.

- :func:`bootstrap_problems`: the brokers whose lists name none of the staying voters
  (their settings come from DescribeConfigs, :meth:`AdminClient.broker_configs`).
- :func:`fetching_observers`: the observers the leader saw fetch lately (DescribeQuorum),
  the ones the move must not lose.
"""
from __future__ import annotations

from .client import QuorumInfo

BOOTSTRAP_KEY = "controller.quorum.bootstrap.servers"
VOTERS_KEY = "controller.quorum.voters"
FRESH_MS = 5000  # an observer that fetched this recently is following (brokers fetch every 0.5 s at most)


def leader_now_ms(quorum: QuorumInfo) -> int | None:
    """The leader's clock in the answer: its own replica's last caught-up time."""
    for v in quorum.voters:
        if v.replica_id == quorum.leader_id:
            return v.last_caught_up_timestamp
    return None


def fetching_observers(quorum: QuorumInfo, fresh_ms: int = FRESH_MS) -> set[int]:
    """The observers that fetched from the leader within ``fresh_ms`` of its clock."""
    now = leader_now_ms(quorum)
    if now is None:
        return set()
    return {o.replica_id for o in quorum.observers
            if o.last_fetch_timestamp is not None and now - o.last_fetch_timestamp <= fresh_ms}


def _address(text: str) -> tuple[str, int] | None:
    host, sep, port = text.strip().rpartition(":")
    if not sep or not port.isdigit():
        return None
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    return host.lower(), int(port)


def quorum_addresses(settings: dict[str, str | None]) -> list[tuple[str, int]]:
    """The controllers a broker asks for the leader: its bootstrap servers, or, when it
    has none, the addresses of its ``controller.quorum.voters`` (``id@host:port``)."""
    listed = [p for p in (settings.get(BOOTSTRAP_KEY) or "").split(",") if p.strip()]
    if not listed:
        listed = [p.partition("@")[2] for p in (settings.get(VOTERS_KEY) or "").split(",") if "@" in p]
    return [a for a in (_address(p) for p in listed) if a is not None]


def bootstrap_problems(configs: dict[int, dict[str, str | None] | str],
                       staying: list[tuple[str, int]]) -> list[str]:
    """One line per broker that would not find the staying voters ``staying``."""
    keep = {(h.lower(), p) for h, p in staying}
    problems = []
    for broker_id in sorted(configs):
        settings = configs[broker_id]
        if isinstance(settings, str):
            problems.append(f"broker {broker_id}: its settings could not be read: {settings}")
            continue
        known = quorum_addresses(settings)
        if not keep.intersection(known):
            names = ",".join(f"{h}:{p}" for h, p in known) or "nothing"
            problems.append(f"broker {broker_id} asks only {names} for the leader, none of the voters that stay")
    return problems


def format_addresses(addresses: list[tuple[str, int]]) -> str:
    return ",".join(f"[{h}]:{p}" if ":" in h else f"{h}:{p}" for h, p in addresses)
