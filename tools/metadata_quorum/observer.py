"""``add-controller --controller-id N``: what AddRaftVoter needs, taken from the
quorum instead of the new controller's properties file (KAFKA-18775).

- The directory id: the leader's DescribeQuorum lists each observer with the
  directory id it fetches with (KIP-853). Exactly one observer entry must have
  the id (or the one ``--controller-directory-id`` names).
- The endpoints: the controller's registration (RegisterControllerRecord,
  KIP-919), which the leader's controllers report through DescribeCluster with
  controller endpoints. One such answer lists each registered controller on the
  listener it was asked on, so the tool asks the leader on each of its controller
  endpoints (DescribeQuorum's ``Nodes``) and names each endpoint found after that
  listener, in the leader's listener order. A listener the leader does not have is
  not found; pass ``--command-config`` with the properties file then, as Kafka's
  tool needs.

Every refusal is a ``TerseError`` naming what is missing and what to do.
"""
from __future__ import annotations

import uuid

from wire.uuids import uuid_to_str

from .client import Endpoint, QuorumInfo, Replica
from .errors import KafkaApiError, TerseError

_CONFIG_HINT = "or pass --command-config with its properties file instead of --controller-id"


def observer_directory(quorum: QuorumInfo, node_id: int, directory_id: uuid.UUID | None) -> Replica:
    """The one observer entry of ``node_id`` (with ``directory_id`` if given)."""
    voters = [v for v in quorum.voters if v.replica_id == node_id]
    observers = [o for o in quorum.observers if o.replica_id == node_id]
    if directory_id is not None:
        observers = [o for o in observers if o.directory_id == directory_id]
    if voters:
        voter = voters[0]
        text = f"Controller {node_id} is already a voter (directory id {uuid_to_str(voter.directory_id)})"
        if observers:
            dirs = ", ".join(uuid_to_str(o.directory_id) for o in observers)
            text += (f"; its observer directory {dirs} can only join once that voter is removed "
                     f"(remove-controller --controller-id {node_id} --controller-directory-id "
                     f"{uuid_to_str(voter.directory_id)})")
        raise TerseError(text)
    if not observers:
        which = f"with directory id {uuid_to_str(directory_id)} " if directory_id is not None else ""
        known = sorted({o.replica_id for o in quorum.observers})
        raise TerseError(
            f"Controller {node_id} {which}is not an observer of the quorum (observers: "
            f"{', '.join(str(i) for i in known) or 'none'}): start it, formatted with --no-initial-controllers "
            f"and controller.quorum.bootstrap.servers naming the voters, so that it fetches from the leader, "
            + _CONFIG_HINT)
    if len(observers) > 1:
        dirs = ", ".join(uuid_to_str(o.directory_id) for o in observers)
        raise TerseError(f"Controller {node_id} is an observer with several directory ids ({dirs}): "
                         f"pass --controller-directory-id to say which one to add")
    return observers[0]


def registered_endpoints(admin, quorum: QuorumInfo, node_id: int) -> list[Endpoint]:
    """``node_id``'s registered endpoints on the leader's controller listeners."""
    leader_endpoints = quorum.nodes.get(quorum.leader_id) or []
    if not leader_endpoints:
        raise TerseError(f"The leader ({quorum.leader_id}) did not report its controller endpoints "
                         f"(DescribeQuorum v2 or later): cannot look up controller {node_id}'s registration, "
                         + _CONFIG_HINT)
    found: list[Endpoint] = []
    problems: list[str] = []
    for listener in leader_endpoints:
        try:
            md = admin.registered_controllers_at(listener.host, listener.port)
        except OSError as exc:
            problems.append(f"{listener}: {exc}")
            continue
        except KafkaApiError as exc:
            problems.append(f"{listener}: {exc.java_text()}")
            continue
        for node in md.nodes:
            if node.node_id == node_id:
                endpoint = Endpoint(listener.name, node.host, node.port)
                if endpoint not in found:
                    found.append(endpoint)
    if found:
        return found
    asked = ", ".join(str(e) for e in leader_endpoints)
    why = f" ({'; '.join(problems)})" if problems else ""
    raise TerseError(
        f"Controller {node_id} is not registered: the leader's controllers report no registration "
        f"(KIP-919) for it on {asked}{why}. A controller registers once it has caught up, with "
        f"metadata.version 3.7-IV0 or later; wait for it, " + _CONFIG_HINT)


def resolve(admin, node_id: int, directory_id: uuid.UUID | None) -> tuple[uuid.UUID, list[Endpoint]]:
    """(directory id, endpoints) of the observer ``node_id``, from the leader."""
    quorum = admin.describe_quorum()
    observer = observer_directory(quorum, node_id, directory_id)
    return observer.directory_id, registered_endpoints(admin, quorum, node_id)
