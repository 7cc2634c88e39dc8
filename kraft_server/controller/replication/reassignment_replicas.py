"""The replica arithmetic of a partition reassignment, pure (Kafka's
``PartitionReassignmentReplicas`` and ``PartitionReassignmentRevert``).

* Start: for a current replica list C and a target T, ``removing = sorted(C - T)``,
  ``adding = sorted(T - C)`` and the replica list while it runs is ``T ++ removing``.
* Completion (checked on every change of a partition that has one): the ISR without
  the removing replicas must be non-empty and hold every adding replica, and when it
  adds fewer replicas than it removes, every replica left once they are gone (4.3.1's
  rule); the replicas become ``replicas - removing`` and the ISR ``ISR - removing``.
  A reassignment that only drops or reorders in-sync replicas completes at once.
* Cancel: back to ``replicas - adding`` with ``ISR - adding``; when that ISR is empty
  it becomes the first original replica, an unclean choice the caller must allow.
"""
from __future__ import annotations

from dataclasses import dataclass


def in_progress(p) -> bool:
    """Does the partition carry a reassignment (adding or removing replicas)?"""
    return bool(p.adding_replicas) or bool(p.removing_replicas)


@dataclass
class Reassignment:
    replicas: list
    removing: list
    adding: list


def start(current, target) -> Reassignment:
    """``PartitionReassignmentReplicas(current, target)``."""
    removing = sorted(set(current) - set(target))
    adding = sorted(set(target) - set(current))
    return Reassignment(list(target) + removing, removing, adding)


def completed(replicas, removing, adding, isr) -> tuple[list, list] | None:
    """``maybeCompleteReassignment``: ``(replicas, isr)`` once it can finish, else None."""
    if not removing and not adding:
        return None
    new_isr, new_replicas = list(isr), list(replicas)
    if removing:
        new_isr = [r for r in isr if r not in removing]
        if not new_isr:
            return None
        new_replicas = [r for r in replicas if r not in removing]
        if not new_replicas:
            return None
    if not set(adding) <= set(new_isr):
        return None
    # adding fewer than it removes: the ISR must hold the whole new replica set
    if len(adding) < len(removing) and not set(new_replicas) <= set(new_isr):
        return None
    return new_replicas, new_isr


@dataclass
class Revert:
    replicas: list
    isr: list
    unclean: bool


def revert(p) -> Revert:
    """``PartitionReassignmentRevert``: what cancelling ``p``'s reassignment leaves."""
    adding = set(p.adding_replicas or ())
    replicas = [r for r in p.replicas if r not in adding]
    isr = [r for r in p.isr if r not in adding]
    if isr:
        return Revert(replicas, isr, False)
    if not replicas:
        raise ValueError("Invalid replica assignment: addingReplicas contains all replicas.")
    return Revert(replicas, [replicas[0]], True)
