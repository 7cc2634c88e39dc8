"""Kafka's own ``DelegationTokenCommand`` straight at our node's SASL_SSL client
listener (SCRAM-SHA-512 users alice and bob, StandardAuthorizer, ``super.users``
the PLAINTEXT controller listener's ANONYMOUS): create, describe, renew and expire,
DescribeDelegationToken answered from our image as a Kafka broker answers it (each
user sees the tokens they own, requested or renew; another's once a DESCRIBE ACL on
its DELEGATION_TOKEN allows it; a token login is refused; without
``--owner-principal`` the tool asks for an empty owner list and gets no token). The same rules compared
with a Kafka broker's answers: ``test_kafka_brokers_delegation_tokens.py``.
"""
from __future__ import annotations

import re
import uuid

import pytest

from tests.interop.test_kafka_brokers_delegation_tokens import TOOL, _created
from tests.support.certs import Pki
from tests.support.jdk import need_jdk
from tests.support.kraft_nodes import agreed_leader, make_quorum, wait_for
from tests.support.secure_client import sasl_command_config, scram_reader_node
from tools.kafka_dist.controller import run_tool

pytestmark = pytest.mark.java  # about 15 JVM tool runs
MECHANISM = "SCRAM-SHA-512"
USERS = {"alice": "alice-secret", "bob": "bob-secret"}
AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"


def _rows(out: str) -> list[tuple[str, ...]]:
    """``--describe``'s table: (token id, HMAC, owner, requester, renewers) a token."""
    total = re.search(r"Total number of tokens : (\d+)", out)
    assert total, out[-2000:]
    rows = [tuple(line.split()[:5]) for line in out.splitlines() if re.match(r"\S{22} ", line)]
    assert len(rows) == int(total.group(1)), out
    return sorted(rows)


@pytest.fixture(scope="module")
def node(tmp_path_factory):
    need_jdk()
    root = tmp_path_factory.mktemp("tokens-at-our-node")
    pki = Pki(root / "pki")
    alice, password = next(iter(USERS.items()))
    ours = scram_reader_node(root, pki, alice, password, "delegation.token.secret.key=issue-42-describe",
                             f"authorizer.class.name={AUTHORIZER}", "super.users=User:ANONYMOUS",
                             others={u: p for u, p in USERS.items() if u != alice})
    configs = {u: sasl_command_config(root / f"{u}.properties", pki, MECHANISM, u, p) for u, p in USERS.items()}
    ours.start()
    try:
        ours.wait_leader(60)
        yield ours, configs, root
    finally:
        ours.stop()


def test_the_token_tool_against_our_node(node):
    ours, configs, root = node
    bootstrap = f"127.0.0.1:{ours.client_port}"

    def tool(who, *args):
        proc = run_tool(*TOOL, "--bootstrap-server", bootstrap, "--command-config", str(configs[who]), *args,
                        check=False, timeout=90)
        return proc.stdout + proc.stderr

    first = wait_for(lambda: (lambda out: out if "Created delegation token" in out else None)(
        tool("alice", "--create", "--max-life-time-period", "-1", "--renewer-principal", "User:bob")),
        90, "alice's token created at our node")
    a_id, a_mac = _created(first)
    b_id, b_mac = _created(tool("bob", "--create", "--max-life-time-period", "-1"))
    a_row = (a_id, a_mac, "User:alice", "User:alice", "[User:bob]")
    b_row = (b_id, b_mac, "User:bob", "User:bob", "[]")

    # without --owner-principal the tool sends an empty Owners list: no tokens, as from Kafka
    assert _rows(tool("alice", "--describe")) == []
    assert _rows(tool("alice", "--describe", "--owner-principal", "User:alice")) == [a_row]  # HMAC as created
    assert _rows(tool("bob", "--describe", "--owner-principal", "User:bob")) == sorted([a_row, b_row])  # he renews A
    assert _rows(tool("alice", "--describe", "--owner-principal", "User:bob")) == [a_row]  # bob's own is hidden
    run_tool("kafka-acls", "--bootstrap-controller", ours.bootstrap, "--add", "--allow-principal", "User:alice",
             "--operation", "Describe", "--delegation-token", b_id, timeout=60)
    seen = wait_for(lambda: (lambda rows: rows if len(rows) == 2 else None)(
        _rows(tool("alice", "--describe", "--owner-principal", "User:bob"))), 30, "bob's token shown to alice")
    assert seen == sorted([a_row, b_row])

    token = root / "token.properties"
    token.write_text(configs["alice"].read_text().replace(
        'username="alice" password="alice-secret"', f'username="{a_id}" password="{a_mac}" tokenauth="true"'))
    configs["token"] = token
    assert "DelegationTokenDisabled" not in (refused := tool("token", "--describe"))
    assert "UnsupportedByAuthenticationException" in refused, refused[-2000:]  # REQUEST_NOT_ALLOWED

    assert "Completed renew operation" in tool("bob", "--renew", "--hmac", a_mac, "--renew-time-period", "-1")
    assert "Completed expire operation" in tool("alice", "--expire", "--hmac", a_mac, "--expiry-time-period", "-1")
    assert _rows(tool("alice", "--describe", "--owner-principal", "User:alice")) == []  # A removed
    assert _rows(tool("alice", "--describe", "--owner-principal", "User:bob")) == [b_row]  # B through the ACL
    assert _rows(tool("bob", "--describe", "--owner-principal", "User:bob")) == [b_row]


@pytest.mark.slow  # a three-node SASL_SSL quorum: make test-slow (the default suite's time, issue 37)
def test_a_follower_forwards_create_to_the_active_controller(tmp_path):
    """Three nodes of ours, SASL_SSL client listeners: CreateDelegationToken sent to a
    follower is forwarded in an Envelope (the follower answers with the active
    controller's answer); the token then logs in on every node."""
    need_jdk()
    pki = Pki(tmp_path / "pki")
    alice, password = next(iter(USERS.items()))
    nodes = make_quorum(tmp_path, "dynamic", uuid.uuid4().hex[:22], extra=(
        "listener.security.protocol.map=CONTROLLER:PLAINTEXT,CLIENT:SASL_SSL", *pki.server_keystore(),
        f"sasl.enabled.mechanisms={MECHANISM}", "delegation.token.secret.key=issue-42-forward"),
        flags=("--add-scram", f"{MECHANISM}=[name={alice},password={password}]"))
    config = sasl_command_config(tmp_path / "alice.properties", pki, MECHANISM, alice, password)
    for n in nodes:
        n.start()
    try:
        leader, _ = agreed_leader(nodes, 60)
        follower = next(n for n in nodes if n.node_id != leader.node_id)

        def tool(node, path, *args):
            proc = run_tool(*TOOL, "--bootstrap-server", f"127.0.0.1:{node.client_port}", "--command-config",
                            str(path), *args, check=False, timeout=90)
            return proc.stdout + proc.stderr
        out = wait_for(lambda: (lambda o: o if "Created delegation token" in o else None)(
            tool(follower, config, "--create", "--max-life-time-period", "-1")), 90, "a token created at a follower")
        token_id, mac = _created(out)
        token = tmp_path / "token.properties"
        token.write_text(config.read_text().replace(
            f'username="{alice}" password="{password}"', f'username="{token_id}" password="{mac}" tokenauth="true"'))
        # logged in, the token's own token requests are refused (REQUEST_NOT_ALLOWED);
        # a login refused would be a SaslAuthenticationException
        for n in nodes:
            wait_for(lambda: "UnsupportedByAuthenticationException" in tool(n, token, "--describe"), 60,
                     f"a token login on node {n.node_id}")
        rows = _rows(tool(follower, config, "--describe", "--owner-principal", "User:alice"))
        assert rows == [(token_id, mac, "User:alice", "User:alice", "[]")]
    finally:
        for n in nodes:
            n.stop()
