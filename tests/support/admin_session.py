"""What an operator runs through a Kafka broker of the default release
(``--bootstrap-server``) for client quotas, feature flags and the quorum, with what each tool printed, normalised so that
the same session on our quorum and on Kafka's controllers can be compared: feature
epochs, directory ids, offsets, timestamps and the cluster's ports differ by nature."""
from __future__ import annotations

import re
import time

from tools.kafka_dist import KAFKA_VERSION
from tools.kafka_dist.controller import run_tool

QUOTA_CHANGES = [  # (name, kafka-configs arguments after --bootstrap-server B --alter)
    ("client c1", ["--entity-type", "clients", "--entity-name", "c1",
                   "--add-config", "producer_byte_rate=1024,consumer_byte_rate=2048"]),
    ("default user", ["--entity-type", "users", "--entity-default", "--add-config", "request_percentage=50.5"]),
    ("ip", ["--entity-type", "ips", "--entity-name", "10.1.2.3", "--add-config", "connection_creation_rate=10"]),
    ("user and client", ["--entity-type", "users", "--entity-name", "u1", "--entity-type", "clients",
                         "--entity-name", "c2", "--add-config", "controller_mutation_rate=2.5"]),
    ("fractional", ["--entity-type", "clients", "--entity-name", "c1", "--add-config", "producer_byte_rate=1.5"]),
    ("zero", ["--entity-type", "clients", "--entity-name", "c1", "--add-config", "request_percentage=0"]),
    ("ip too large", ["--entity-type", "ips", "--entity-default", "--add-config",
                      "connection_creation_rate=3000000000"]),
    ("delete", ["--entity-type", "clients", "--entity-name", "c1", "--delete-config", "consumer_byte_rate"]),
]
QUOTA_VIEWS = [
    ("clients", ["--entity-type", "clients"]),
    ("default user", ["--entity-type", "users", "--entity-default"]),
    ("ips", ["--entity-type", "ips"]),
    ("user and client", ["--entity-type", "users", "--entity-name", "u1", "--entity-type", "clients",
                         "--entity-name", "c2"]),
]
RELEASE = ".".join(KAFKA_VERSION.split(".")[:2])  # the brokers' release line, e.g. "4.4"
FEATURE_STEPS = [
    ("disable group.version", ["downgrade", "--feature", "group.version=0"]),
    ("dry run", ["upgrade", "--feature", "group.version=1", "--dry-run"]),
    ("upgrade group.version", ["upgrade", "--feature", "group.version=1"]),
    ("beyond support", ["upgrade", "--feature", "group.version=2"]),
    ("unsafe metadata downgrade", ["downgrade", "--metadata", "4.2"]),
    ("release upgrade", ["upgrade", "--release-version", RELEASE]),
]


def _said(proc) -> str:
    """What the tool told the operator: stdout, and the exception line of a failure."""
    out = proc.stdout.strip()
    errors = [l.strip() for l in proc.stderr.splitlines() if "Exception:" in l and not l.startswith("\tat")]
    if proc.returncode != 0 and errors:
        out += "\n" + errors[-1]
    return f"rc={proc.returncode}\n{out}"


# The default suite's short sessions (each tool run is a JVM start: seconds on a busy machine).
SHORT_QUOTA_CHANGES = ("client c1", "ip", "fractional", "delete")
SHORT_QUOTA_VIEWS = ("clients", "ips")
SHORT_FEATURE_STEPS = ("disable group.version", "upgrade group.version", "beyond support", "release upgrade")


def quota_session(bootstrap: str, short: bool = False) -> dict[str, str]:
    said = {}
    for name, args in QUOTA_CHANGES:
        if short and name not in SHORT_QUOTA_CHANGES:
            continue
        said[f"alter {name}"] = _said(run_tool("kafka-configs", "--bootstrap-server", bootstrap, "--alter",
                                               *args, check=False, timeout=90))
    # The broker answers from its own metadata image: wait until it applied the delete.
    deadline = time.monotonic() + 30
    while True:
        clients = _said(run_tool("kafka-configs", "--bootstrap-server", bootstrap, "--describe",
                                 *QUOTA_VIEWS[0][1], check=False, timeout=90))
        if "consumer_byte_rate" not in clients or time.monotonic() > deadline:
            break
    said["describe clients"] = clients
    for name, args in QUOTA_VIEWS[1:]:
        if short and name not in SHORT_QUOTA_VIEWS:
            continue
        said[f"describe {name}"] = _said(run_tool("kafka-configs", "--bootstrap-server", bootstrap, "--describe",
                                                  *args, check=False, timeout=90))
    return said


def features_described(bootstrap: str, flag: str = "--bootstrap-server") -> str:
    out = _said(run_tool("kafka-features", flag, bootstrap, "describe", check=False, timeout=90))
    return re.sub(r"Epoch: \d+", "Epoch: N", out)


def feature_session(bootstrap: str, short: bool = False) -> dict[str, str]:
    said = {"describe before": features_described(bootstrap)}
    for name, args in FEATURE_STEPS:
        if short and name not in SHORT_FEATURE_STEPS:
            continue
        said[name] = _said(run_tool("kafka-features", "--bootstrap-server", bootstrap, *args, check=False,
                                    timeout=90))
    if not short:
        said["describe after"] = features_described(bootstrap)
    return said


def quorum_status(bootstrap: str) -> dict[str, str]:
    """``describe --status`` through a broker, without what differs run to run."""
    proc = run_tool("kafka-metadata-quorum", "--bootstrap-server", bootstrap, "describe", "--status",
                    check=False, timeout=90)
    assert proc.returncode == 0, proc.stderr[-2000:]
    fields = dict(re.findall(r"^(\w+):\s+(.*)$", proc.stdout, re.M))
    for key in ("CurrentVoters", "CurrentObservers"):
        fields[key] = sorted(int(i) for i in re.findall(r'"id": (\d+)', fields.get(key, "")))
    for key in ("ClusterId", "HighWatermark", "MaxFollowerLagTimeMs", "LeaderEpoch"):
        fields.pop(key, None)
    return fields


def quorum_replication(bootstrap: str) -> list[tuple[str, str]]:
    """``describe --replication`` through a broker: (node id, status) rows."""
    proc = run_tool("kafka-metadata-quorum", "--bootstrap-server", bootstrap, "describe", "--replication",
                    check=False, timeout=90)
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = [l.split() for l in proc.stdout.splitlines()[1:] if l.strip()]
    return sorted((r[0], r[-1]) for r in rows)
