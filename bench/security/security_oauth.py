"""OAUTHBEARER rows for ``bench/security/security.py`` (issue 42): one controller of
ours and one Kafka 4.4.0 controller (``tools/kafka_dist``, the default release), each
with a SASL_PLAINTEXT controller listener checking the tokens of the same OIDC
provider (``tests/support/oidc_provider.py``: JWKS URL, expected audience ``kraft`` and
issuer), PLAIN between controllers. No TLS, so the rows measure SASL and the token check.

On each node, with one token (RS256, valid an hour) minted by the provider:

* OAUTHBEARER logins per second: ``threads`` clients in a loop, each time TCP connect,
  ApiVersions v3, SaslHandshake v1, SaslAuthenticate v2 with the token (the server
  checks its signature, ``exp``, ``aud`` and ``iss``), close; timed after half as long
  untimed (the JVM compiles);
* DescribeQuorum answered per second on authenticated sessions: the same clients, each
  on one session, one request at a time;
* the node's RSS before and with ``idle`` idle authenticated sessions.
"""
from __future__ import annotations

import time
from pathlib import Path

from kraft_server.security.oauth_response import InitialResponse
from tests.support.kraft_nodes import OurNode, storage_format, wait_for
from tests.support.oidc_provider import ADMIN, OidcProvider, controller_settings, java_env
from tests.support.secure_client import SecureSession, describe_quorum_body, quorum_partition
from tools.kafka_dist.controller import KafkaController, random_cluster_id
from tools.kafka_dist.releases import DEFAULT_RELEASE
from wire.messages import SaslAuthenticateRequest, SaslHandshakeRequest

from bench.raft.raft_cluster import rss_kb
from bench.security.security_clients import API_VERSIONS, close_all, loop_rate

KAFKA = f"Kafka {DEFAULT_RELEASE} controller (tools/kafka_dist), one node"


def login(port: int, token: str) -> SecureSession:
    """A session authenticated with OAUTHBEARER; raises if refused."""
    s = SecureSession(port, None, timeout=10.0)
    try:
        assert s.request(API_VERSIONS, 3).error_code == 0
        assert s.request(SaslHandshakeRequest(mechanism="OAUTHBEARER"), 1).error_code == 0
        answer = s.request(SaslAuthenticateRequest(auth_bytes=InitialResponse(token).to_bytes()), 2)
        if answer.error_code or answer.auth_bytes:  # a challenge is a refusal
            raise RuntimeError(f"OAUTHBEARER refused: {answer.error_code} {bytes(answer.auth_bytes)!r}")
    except BaseException:
        s.close()
        raise
    return s


def measure(port: int, pid: int, token: str, args, log, impl: str) -> dict:
    seconds, threads = args.handshake_s, args.handshake_threads
    logins = loop_rate(seconds, threads, lambda i: login(port, token).close(), seconds / 2)
    sessions = [login(port, token) for _ in range(threads)]
    try:
        body = describe_quorum_body()
        requests = loop_rate(seconds, threads, lambda i: sessions[i].request(body, 2))
    finally:
        close_all(sessions)
    log(f"{impl} OAUTHBEARER: {logins['per_s']:.0f} logins/s, {requests['per_s']:.0f} DescribeQuorum/s"
        f"{' errors ' + str(logins['errors'] + requests['errors']) if logins['errors'] or requests['errors'] else ''}")
    time.sleep(1.0)  # closed connections let go (a settling pause before a reading, as tls_rows)
    before = rss_kb(pid)
    idle = []
    try:
        for _ in range(args.idle):
            idle.append(login(port, token))
        time.sleep(1.0)  # the same settling pause
        held = rss_kb(pid)
    finally:
        close_all(idle)
    log(f"{impl} OAUTHBEARER: RSS {before / 1024:.0f} MiB -> {held / 1024:.0f} MiB with {args.idle} sessions")
    return {"logins": logins, "requests": requests, "rss_before_kb": before, "rss_idle_kb": held,
            "idle": args.idle}


def run_oauth(base: Path, args, log) -> dict:
    """The rows' figures, ours then Kafka's, on one provider."""
    out = {}
    with OidcProvider(args.pki, {}) as idp:
        token = idp.mint("bench-client", expires_in=3600)
        (base / "oauth-ours").mkdir(parents=True)
        node = OurNode(base / "oauth-ours", extra=(
            "listener.security.protocol.map=CONTROLLER:SASL_PLAINTEXT,CLIENT:PLAINTEXT",
            *(f"{k}={v}" for k, v in controller_settings(idp, args.pki).items())))
        storage_format(node.config, random_cluster_id(), "--standalone")  # quiet: stdout is the report
        node.start(log_level="INFO")
        try:
            wait_for(lambda: quorum_partition(node.port, None, ADMIN).leader_id == 1, 60, "our node")
            out["ours"] = measure(node.port, node.proc.pid, token, args, log, "ours")
        finally:
            node.stop()
        ctl = KafkaController(base / "oauth-kafka", node_id=1, cluster_id=random_cluster_id(), overrides={
            "listener.security.protocol.map": "CONTROLLER:SASL_PLAINTEXT", **controller_settings(idp)},
            env=java_env(args.pki, idp))
        try:
            ctl.start()
            wait_for(lambda: quorum_partition(ctl.port, None, ADMIN).leader_id == 1, 90, "Kafka's controller")
            out["kafka"] = measure(ctl.port, ctl.proc.pid, token, args, log, "kafka")
        finally:
            ctl.close()
    return out


def oauth_rows(res: dict, add) -> None:
    """The OAUTHBEARER rows of the report's table (``add(metric, ours, kafka)``)."""
    o, k = res["ours"], res["kafka"]
    add("OAUTHBEARER logins (connect, ApiVersions, SASL, close) per second", o["logins"]["per_s"],
        k["logins"]["per_s"])
    add("OAUTHBEARER: DescribeQuorum answered per second on sessions", o["requests"]["per_s"],
        k["requests"]["per_s"])
    n = o["idle"]
    add(f"OAUTHBEARER: RSS with {n:,} idle sessions (MiB)", o["rss_idle_kb"] / 1024, k["rss_idle_kb"] / 1024)
    add("  RSS per idle OAUTHBEARER session (KiB)", (o["rss_idle_kb"] - o["rss_before_kb"]) / n,
        (k["rss_idle_kb"] - k["rss_before_kb"]) / n)
