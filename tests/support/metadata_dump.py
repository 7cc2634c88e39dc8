"""Read ``kafka-dump-log --cluster-metadata-decoder`` output and reduce it to the
decisions a controller made, with everything that differs between two honest runs
normalised away (issue 11 f, the differential test).

``parse(text)`` gives the batches (control batches skipped) and their records as
``(type, version, data)``. ``normalise(batches, roles)`` gives a ``Decisions``:

* ``kinds``: the set of (record type, version) written.
* ``admin``: the ordered shapes of the batches an admin operation or the bootstrap
  wrote (those starting with BeginTransaction, RegisterController, Topic, Partition
  (CreatePartitions) or RemoveTopic), as runs of (type, version).
* ``lifecycle``: per broker role, the ordered shapes of the batches its registration
  and heartbeats wrote (a batch belongs to the broker its RegisterBroker or
  BrokerRegistrationChange record names).
* ``brokers``: per role, every RegisterBroker / BrokerRegistrationChange record's
  decision fields.
* ``topics``: per live or deleted topic name, its configs, partition count,
  replication factor, sorted leader counts per creating batch (placement spreads
  leaders per request), and whether it was removed.
* ``stories``: per partition, its PartitionRecord and every PartitionChangeRecord
  after it, broker ids as role labels. For a manually placed topic the key is
  (topic, partition); for a placed one it is (topic, the admin batch that created
  it, labelled replica list), since which broker gets which partition is random: the
  distinct stories of one key are compared as a set.

Normalisations (each one a difference two correct controllers may show):

1. NoOpRecords are dropped (written on a timer: ``metadata.max.idle.interval.ms``).
2. A run of consecutive records of one (type, version) inside a batch counts once in
   a shape: how many partitions a broker's fence touches depends on placement.
3. Broker ids become role labels (``roles``: e.g. victim -> V, shutdown -> S, the
   rest O in id order: O1, O2...); broker epochs become ``e<n>``, the n-th
   registration of that broker; incarnation ids, directory ids (per broker:
   ``dir(V)``; ``dir(O1*)`` for any of a broker's several directories, since the
   broker picks one), hosts and ports are dropped or labelled the same way.
4. Topic ids become topic names; ProducerIdsRecords are listed apart
   (``producer_ids``): only that each block follows the previous one by 1000 is
   compared, since how many brokers ask for one depends on which broker the clients'
   InitProducerId reached.
5. ISR and ELR lists of PartitionChangeRecords are compared sorted: an ISR a leader
   sends in AlterPartition is in broker id order, and ids play different roles in
   the two runs (a PartitionRecord's ISR, the replicas' order, is kept).
6. Controller registration, Raft control records and timestamps are ignored.
7. A fence record for a broker that is already fenced is dropped: the session-expiry
   task writes one when a restarted broker registers but is slower than
   ``broker.session.timeout.ms`` to send its first heartbeat (timing).
8. ``differences(..., batches=False)`` (two live runs) leaves out ``lifecycle``: under
   load Kafka's Raft client puts records of consecutive operations in one batch.
9. Heartbeat-driven repeats are not counted: ``lifecycle`` collapses identical
   consecutive shapes, and the order between brokers is not compared (each broker's
   own order is).
10. A BrokerRegistrationChange that only reports cordoned directories (v3: broker,
   epoch, ``cordonedLogDirs``) and shares a batch with other records is read as its
   own batch ahead of them. It rides on the first heartbeat that carries the list;
   whether that heartbeat also unfences the broker depends on how soon the broker
   caught up (timing). Kafka 4.3.1's ``processBrokerHeartbeat`` writes the state
   change first and the cordoned change after it in one batch when one heartbeat
   does both.
11. ``normalise(..., split_ops=True)`` (two live runs) cuts each batch into the
   operations it may hold: before every TopicRecord, RemoveTopicRecord,
   BeginTransaction and RegisterController, before a PartitionRecord that does not
   follow its topic's records, and wherever admin records and other records meet.
   Kafka's Raft client may put a CreateTopics after a heartbeat's change in one batch.
12. In the story of a partition of a removed topic, a PartitionChangeRecord that only
   assigns directories is dropped: whether the JBOD broker's AssignReplicasToDirs
   reached the controller before the topic was deleted is timing (the scenario deletes
   ``doomed`` right after creating it).
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

BATCH = re.compile(r"^baseOffset: (\d+) lastOffset: (\d+) .*isControl: (true|false)")
PAYLOAD = re.compile(r"^\| offset: (\d+) .* payload: (\{.*\})\s*$")

ADMIN_STARTS = {"BEGIN_TRANSACTION_RECORD", "REGISTER_CONTROLLER_RECORD", "TOPIC_RECORD", "PARTITION_RECORD",
                "REMOVE_TOPIC_RECORD"}
ADMIN_KINDS = ADMIN_STARTS | {"FEATURE_LEVEL_RECORD", "CONFIG_RECORD", "END_TRANSACTION_RECORD",
                              "CLEAR_ELR_RECORD"}
TOPIC_PARTS = {"TOPIC_RECORD", "CONFIG_RECORD", "CLEAR_ELR_RECORD", "PARTITION_RECORD"}
BROKER_RECORDS = {"REGISTER_BROKER_RECORD", "BROKER_REGISTRATION_CHANGE_RECORD", "UNREGISTER_BROKER_RECORD"}
SORTED_FIELDS = ("isr", "eligibleLeaderReplicas", "lastKnownElr")
BROKER_LIST_FIELDS = ("replicas", "isr", "removingReplicas", "addingReplicas",
                      "eligibleLeaderReplicas", "lastKnownElr")


@dataclass
class Batch:
    base_offset: int
    records: list = field(default_factory=list)  # (type, version, data)


def parse(text: str) -> list[Batch]:
    """The data batches of a dump (control batches are skipped)."""
    batches: list[Batch] = []
    current: Batch | None = None
    for line in text.splitlines():
        m = BATCH.match(line)
        if m:
            current = Batch(int(m.group(1))) if m.group(3) == "false" else None
            if current is not None:
                batches.append(current)
            continue
        m = PAYLOAD.match(line)
        if m and current is not None:
            payload = json.loads(m.group(2))
            current.records.append((payload["type"], payload["version"], payload.get("data", {})))
    return batches


@dataclass
class Decisions:
    kinds: set = field(default_factory=set)
    admin: list = field(default_factory=list)
    lifecycle: dict = field(default_factory=dict)
    brokers: dict = field(default_factory=dict)
    topics: dict = field(default_factory=dict)
    stories: dict = field(default_factory=dict)
    producer_ids: list = field(default_factory=list)


def shape(records) -> tuple:
    """Runs of (type, version), each run once."""
    out = []
    for t, v, _ in records:
        if not out or out[-1] != (t, v):
            out.append((t, v))
    return tuple(out)


class _Labels:
    def __init__(self, roles: dict, broker_ids) -> None:
        names = {"victim": "V", "shutdown": "S"}
        self.by_id = {bid: names.get(role, role) for role, bid in roles.items()}
        rest = sorted(b for b in broker_ids if b not in self.by_id)
        for i, b in enumerate(rest, 1):
            self.by_id[b] = f"O{i}"
        self.epochs: dict[int, dict[int, str]] = {}  # broker -> epoch -> e<n>
        self.dirs: dict[str, str] = {}

    def broker(self, b: int):
        return self.by_id.get(b, b) if b >= 0 else b

    def epoch(self, b: int, epoch: int) -> str:
        known = self.epochs.setdefault(b, {})
        if epoch not in known:
            known[epoch] = f"e{len(known) + 1}"
        return known[epoch]

    def dir(self, d: str) -> str:
        return self.dirs.get(d, "dir(?)" if d not in ("AAAAAAAAAAAAAAAAAAAAAQ", "AAAAAAAAAAAAAAAAAAAAAA")
                             else {"AAAAAAAAAAAAAAAAAAAAAQ": "UNASSIGNED", "AAAAAAAAAAAAAAAAAAAAAA": "MIGRATING"}[d])


def _broker_ids(batches) -> set[int]:
    return {d["brokerId"] for b in batches for t, _, d in b.records if t == "REGISTER_BROKER_RECORD"}


def normalise(batches: list[Batch], roles: dict, manual_topics=(), split_ops: bool = False) -> Decisions:
    out = Decisions()
    labels = _Labels(roles, _broker_ids(batches))
    names: dict[str, str] = {}  # topic id -> name
    removed: set[str] = set()
    partitions: dict[tuple[str, int], list] = {}  # (topic, index) -> story
    fenced: dict[int, bool] = {}  # broker id -> fenced now
    phase: dict[tuple[str, int], int] = {}  # (topic, index) -> the admin batch that created it
    pieces = _split_cordon_only(batches)
    for records in (_split_ops(pieces) if split_ops else pieces):
        if not records:
            continue
        out.kinds |= {(t, v) for t, v, _ in records}
        first = records[0][0]
        if first in ADMIN_STARTS:
            out.admin.append(shape(records))
        records = [r for r in records if not _refence(r, fenced)]
        if not records:
            continue
        owner = next((d["brokerId"] for t, _, d in records if t in BROKER_RECORDS), None)
        if owner is not None:
            seq = out.lifecycle.setdefault(labels.broker(owner), [])
            s = shape(records)
            if not seq or seq[-1] != s:
                seq.append(s)
        for t, v, d in records:
            if t == "REGISTER_BROKER_RECORD":
                b = d["brokerId"]
                dirs = d.get("logDirs", [])
                for dir_id in dirs:  # which of several dirs a broker picks is its own choice
                    labels.dirs[dir_id] = f"dir({labels.broker(b)}{'' if len(dirs) == 1 else '*'})"
                out.brokers.setdefault(labels.broker(b), []).append((t, v, {
                    "epoch": labels.epoch(b, d["brokerEpoch"]), "fenced": d.get("fenced", True),
                    "inControlledShutdown": d.get("inControlledShutdown", False),
                    "rack": d.get("rack"), "listeners": sorted(e["name"] for e in d.get("endPoints", [])),
                    "features": sorted((f["name"], f["minSupportedVersion"], f["maxSupportedVersion"])
                                       for f in d.get("features", [])),
                    "logDirs": [labels.dir(x) for x in d.get("logDirs", [])],
                    "cordonedLogDirs": d.get("cordonedLogDirs")}))
            elif t in ("BROKER_REGISTRATION_CHANGE_RECORD", "UNREGISTER_BROKER_RECORD"):
                b = d["brokerId"]
                fields = {k: w for k, w in d.items() if k not in ("brokerId", "brokerEpoch")}
                if "logDirs" in fields:
                    fields["logDirs"] = [labels.dir(x) for x in fields["logDirs"]]
                fields["epoch"] = labels.epoch(b, d["brokerEpoch"])
                out.brokers.setdefault(labels.broker(b), []).append((t, v, fields))
            elif t == "TOPIC_RECORD":
                names[d["topicId"]] = d["name"]
                out.topics[d["name"]] = {"configs": {}, "partitions": 0, "rf": set(), "removed": False}
            elif t == "CONFIG_RECORD":
                if d["resourceType"] == 2 and d["resourceName"] in out.topics:
                    out.topics[d["resourceName"]]["configs"][d["name"]] = d.get("value")
                else:
                    out.topics.setdefault("<cluster>", {"configs": {}})["configs"][
                        (d["resourceType"], d["resourceName"], d["name"])] = d.get("value")
            elif t == "CLEAR_ELR_RECORD":
                name = d.get("topicName", "")
                if name in out.topics:
                    out.topics[name].setdefault("clear_elr", 0)
                    out.topics[name]["clear_elr"] += 1
            elif t == "REMOVE_TOPIC_RECORD":
                name = names.get(d["topicId"], "?")
                removed.add(name)
                if name in out.topics:
                    out.topics[name]["removed"] = True
            elif t == "PARTITION_RECORD":
                name = names.get(d["topicId"], "?")
                topic = out.topics.setdefault(name, {"configs": {}, "partitions": 0, "rf": set(), "removed": False})
                topic["partitions"] += 1
                topic["rf"].add(len(d["replicas"]))
                partitions[(name, d["partitionId"])] = [(t, v, _partition_fields(d, labels, sort=False))]
                phase[(name, d["partitionId"])] = len(out.admin) - 1
            elif t == "PARTITION_CHANGE_RECORD":
                name = names.get(d["topicId"], "?")
                partitions.setdefault((name, d["partitionId"]), []).append((t, v, _partition_fields(d, labels)))
            elif t == "PRODUCER_IDS_RECORD":
                n = len(out.producer_ids) + 1
                out.producer_ids.append((t, v, d["nextProducerId"] == 1000 * n))
    for name, topic in out.topics.items():
        if name == "<cluster>":
            continue
        topic["rf"] = sorted(topic["rf"])
        leaders: dict = {}  # creating batch -> leader -> count
        for (n, index), story in partitions.items():
            if n == name:
                first = story[0][2]
                per = leaders.setdefault(phase.get((n, index), -1), {})
                per[first["leader"]] = per.get(first["leader"], 0) + 1
        topic["leader_counts"] = [sorted(per.values(), reverse=True) for _, per in sorted(leaders.items())]
    for (name, index), story in sorted(partitions.items()):
        if name in removed:
            story = [r for r in story if not (r[0] == "PARTITION_CHANGE_RECORD" and set(r[2]) == {"directories"})]
        if name in manual_topics:
            out.stories[(name, index)] = story
        else:
            key = (name, phase.get((name, index), -1), tuple(story[0][2]["replicas"]))
            out.stories.setdefault(key, [])
            if story not in out.stories[key]:
                out.stories[key].append(story)
                out.stories[key].sort(key=repr)
    return out


def _cordon_only(record) -> bool:
    t, v, d = record
    return t == "BROKER_REGISTRATION_CHANGE_RECORD" and v >= 3 \
        and set(d) <= {"brokerId", "brokerEpoch", "cordonedLogDirs"} and "cordonedLogDirs" in d


def _split_cordon_only(batches):
    """Each batch's records without NoOps; a cordon-only change that shares its batch
    comes out first, as a batch of its own (normalisation 10)."""
    for batch in batches:
        records = [r for r in batch.records if r[0] != "NO_OP_RECORD"]
        alone, rest = [], []
        for r in records:
            (alone if _cordon_only(r) else rest).append(r)
        if alone and rest:
            yield alone
            yield rest
        else:
            yield records


def _split_ops(pieces):
    """Each piece cut where one operation may end and another begin (normalisation 11)."""
    for records in pieces:
        cut: list = []
        for r in records:
            prev = cut[-1][0] if cut else None
            if prev is not None and _starts_op(prev, r[0]):
                yield cut
                cut = []
            cut.append(r)
        yield cut


def _starts_op(prev: str, kind: str) -> bool:
    if (prev in ADMIN_KINDS) != (kind in ADMIN_KINDS):
        return True
    if kind in ("TOPIC_RECORD", "REMOVE_TOPIC_RECORD", "BEGIN_TRANSACTION_RECORD", "REGISTER_CONTROLLER_RECORD"):
        return True
    return kind == "PARTITION_RECORD" and prev not in TOPIC_PARTS


def _refence(record, fenced: dict) -> bool:
    """Track fencing; True for a fence record of a broker already fenced."""
    t, _, d = record
    if t == "REGISTER_BROKER_RECORD":
        fenced[d["brokerId"]] = d.get("fenced", True)
    elif t == "BROKER_REGISTRATION_CHANGE_RECORD" and d.get("fenced", 0) != 0:
        again = d["fenced"] == 1 and fenced.get(d["brokerId"], False)
        fenced[d["brokerId"]] = d["fenced"] == 1
        return again and set(d) <= {"brokerId", "brokerEpoch", "fenced"}
    return False


def _partition_fields(d: dict, labels: _Labels, sort: bool = True) -> dict:
    out = {}
    for k, v in d.items():
        if k in ("topicId", "partitionId"):
            continue
        if k in BROKER_LIST_FIELDS:
            out[k] = [labels.broker(b) for b in v] if v is not None else None
            if sort and k in SORTED_FIELDS and out[k] is not None:
                out[k] = sorted(out[k], key=str)
        elif k == "leader":
            out[k] = labels.broker(v)
        elif k == "directories":
            out[k] = [labels.dir(x) for x in v]
        else:
            out[k] = v
    return out


def differences(ours: Decisions, theirs: Decisions, batches: bool = True) -> list[str]:
    """Human-readable differences (empty when the runs decided the same); ``batches``:
    compare each broker's lifecycle batches too."""
    out = []
    if ours.kinds != theirs.kinds:
        out.append(f"record kinds: only ours {sorted(ours.kinds - theirs.kinds)}, "
                   f"only Kafka's {sorted(theirs.kinds - ours.kinds)}")
    if ours.admin != theirs.admin:
        out.append(f"admin batches:\n  ours  {ours.admin}\n  Kafka {theirs.admin}")
    for role in sorted(set(ours.lifecycle) | set(theirs.lifecycle), key=str) if batches else ():
        if ours.lifecycle.get(role) != theirs.lifecycle.get(role):
            out.append(f"lifecycle of {role}:\n  ours  {ours.lifecycle.get(role)}\n  Kafka {theirs.lifecycle.get(role)}")
    for role in sorted(set(ours.brokers) | set(theirs.brokers), key=str):
        a, b = ours.brokers.get(role), theirs.brokers.get(role)
        if a != b:
            out.append(f"broker records of {role}:\n  ours  {a}\n  Kafka {b}")
    if set(ours.producer_ids) != set(theirs.producer_ids):
        out.append(f"producer ids: ours {ours.producer_ids}, Kafka {theirs.producer_ids}")
    for name in sorted(set(ours.topics) | set(theirs.topics)):
        a, b = ours.topics.get(name), theirs.topics.get(name)
        if a != b:
            out.append(f"topic {name}:\n  ours  {a}\n  Kafka {b}")
    for key in sorted(set(ours.stories) & set(theirs.stories), key=str):
        a, b = ours.stories[key], theirs.stories[key]
        if a != b:
            out.append(f"partition {key}:\n  ours  {a}\n  Kafka {b}")
    return out
