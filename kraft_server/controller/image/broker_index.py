"""Partitions by broker (Kafka's ``BrokersToIsrs``): for each broker the partitions
whose ISR or ELR holds it, under ``NO_LEADER`` the leaderless ones, and how many
partitions each broker leads. Fencing, controlled shutdown, unfencing and
re-registration then read only the partitions they can change instead of every
partition (issue 41).

Per broker a dict of topic id -> a bit mask of partition ids: an int per topic, not
an entry per partition. ``TopicsImage`` keeps it up to date once something asked for
it (the first question decodes and indexes every partition).
"""
from __future__ import annotations

NO_LEADER = -1


class BrokerIndex:
    __slots__ = ("masks", "leads")

    def __init__(self) -> None:
        self.masks: dict[int, dict] = {}  # broker id (or NO_LEADER) -> {topic id: mask}
        self.leads: dict[int, int] = {}  # broker id -> partitions it leads

    @staticmethod
    def keys(p) -> set:
        keys = set(p.isr)
        if p.eligible_leader_replicas:
            keys.update(p.eligible_leader_replicas)
        if p.leader == NO_LEADER:
            keys.add(NO_LEADER)
        return keys

    def add(self, p) -> None:
        bit = 1 << p.partition_id
        tid = p.topic_id
        for k in self.keys(p):
            by_topic = self.masks.get(k)
            if by_topic is None:
                by_topic = self.masks[k] = {}
            by_topic[tid] = by_topic.get(tid, 0) | bit
        if p.leader >= 0:
            self.leads[p.leader] = self.leads.get(p.leader, 0) + 1

    def remove(self, p) -> None:
        bit = 1 << p.partition_id
        tid = p.topic_id
        for k in self.keys(p):
            by_topic = self.masks.get(k)
            mask = by_topic.get(tid, 0) & ~bit if by_topic is not None else 0
            if mask:
                by_topic[tid] = mask
            elif by_topic is not None:
                by_topic.pop(tid, None)
        if p.leader >= 0:
            left = self.leads.get(p.leader, 0) - 1
            if left > 0:
                self.leads[p.leader] = left
            else:
                self.leads.pop(p.leader, None)

    def replace(self, old, new) -> None:
        if old is not None:
            self.remove(old)
        self.add(new)

    def leads_any(self, broker_id: int) -> bool:
        return self.leads.get(broker_id, 0) > 0

    def topics_of(self, key: int) -> dict:
        """``{topic id: mask}`` of ``key`` (a broker id or NO_LEADER)."""
        return self.masks.get(key, {})


def mask_ids(mask: int) -> list[int]:
    """The partition ids set in ``mask``, ascending."""
    bits = bin(mask)[:1:-1]  # lowest bit first
    out, i = [], bits.find("1")
    while i >= 0:
        out.append(i)
        i = bits.find("1", i + 1)
    return out
