"""SASL/OAUTHBEARER (KIP-768) with real peers. A small OIDC provider started by the
test (``tests/support/oidc_provider.py``: client-credentials token endpoint and JWKS
over HTTPS with the test CA) signs the tokens; the controller listener is
SASL_PLAINTEXT with PLAIN between controllers and OAUTHBEARER for clients, validated
against the JWKS as Kafka's ``OAuthBearerValidatorCallbackHandler`` does.

- Kafka's ``kafka-metadata-quorum`` with a client-credentials ``--command-config``
  (Kafka's ``OAuthBearerLoginCallbackHandler``) authenticates to our node; a Kafka
  broker with ``sasl.mechanism.controller.protocol=OAUTHBEARER`` registers with our
  node and serves a topic, of the default release and of the matrix's oldest.
- Our node, an observer of a Kafka controller with ``connections.max.reauth.ms`` set,
  logs in with OAUTHBEARER itself, renews its tokens and re-authenticates in band, on
  the same connections past their tokens' lifetimes (slow).
- The same exchanges go to a Kafka controller configured the same way and to ours
  (slow): a good token, then the refusals (expired, another audience, another issuer,
  an unknown key id), then a key rotated at the provider: the first token with the new
  key id is refused and asks for a refresh, a later one is accepted, and a token with
  the key rotated away is refused. Each answer is compared whole: the
  ``{"status":"invalid_token"}`` challenge, then SASL_AUTHENTICATION_FAILED with it.
"""
from __future__ import annotations

import re
import time

import pytest

from kraft_server.security.oauth_response import InitialResponse
from tests.support.certs import Pki
from tests.support.jdk import need_jdk
from tests.support.kraft_nodes import OurNode, wait_for
from tests.support.oidc_provider import ADMIN, MODULE, OidcProvider, controller_settings, java_env
from tests.support.secure_client import SecureSession, quorum_partition
from tools.kafka_dist import MATRIX, RELEASES
from tools.kafka_dist.broker import KafkaBroker
from tools.kafka_dist.controller import KafkaController, random_cluster_id, run_tool
from tools.kafka_dist.releases import DEFAULT_RELEASE
from wire.messages import SaslAuthenticateRequest, SaslHandshakeRequest

pytestmark = pytest.mark.java

LOGIN_HANDLER = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler"
CLIENTS = {"kafka-tool": "tool-secret", "kafka-broker": "broker-secret"}

# Kafka 4.0.2 (the matrix's oldest), read from its kafka-clients jar: the same
# OAuthBearerLoginModule, OAuthBearerLoginCallbackHandler and OAuthBearerValidatorCallbackHandler
# classes and sasl.oauthbearer.token.endpoint.url as 4.4.0, and the client id, secret and
# scope only as JAAS options (sasl.oauthbearer.client.credentials.*, sasl.oauthbearer.scope
# and sasl.oauthbearer.jwt.retriever.class came later). Its ConfigurationUtils refuses every
# URL not listed in the system property org.apache.kafka.sasl.oauthbearer.allowed.urls (empty
# by default), which java_env sets. The tool and broker cases run on both releases.
BOTH = [DEFAULT_RELEASE, MATRIX[0]]


def _our_node(root, pki, idp, cluster_id: str | None = None, release: str | None = None) -> OurNode:
    settings = controller_settings(idp, pki)
    node = OurNode(root, extra=(
        "listener.security.protocol.map=CONTROLLER:SASL_PLAINTEXT,CLIENT:PLAINTEXT",
        *(f"{k}={v}" for k, v in settings.items())))
    node.format_with_ours(cluster_id or random_cluster_id(), release)
    return node


@pytest.fixture(scope="module")
def oauth_env(tmp_path_factory):
    root = tmp_path_factory.mktemp("oauth")
    pki = Pki(root / "pki")
    with OidcProvider(pki, CLIENTS) as idp:
        yield root, pki, idp


def _command_config(path, idp, pki):
    path.write_text(
        "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=OAUTHBEARER\n"
        f"sasl.login.callback.handler.class={LOGIN_HANDLER}\n"
        f"sasl.oauthbearer.token.endpoint.url={idp.token_url}\n"
        f'sasl.jaas.config={MODULE} required clientId="kafka-tool" clientSecret="tool-secret" scope="kafka" '
        f'ssl.truststore.location="{pki.truststore_pem}" ssl.truststore.type="PEM";\n')
    return path


@pytest.mark.parametrize("release", BOTH)
def test_kafka_metadata_quorum_logs_in_with_client_credentials(oauth_env, tmp_path, release):
    root, pki, idp = oauth_env
    (tmp_path / "ours").mkdir()
    node = _our_node(tmp_path / "ours", pki, idp)
    node.start()
    try:
        wait_for(lambda: quorum_partition(node.port, None, ADMIN).leader_id == 1, 60, "our node over SASL")
        before = idp.token_requests
        proc = run_tool("kafka-metadata-quorum", "--bootstrap-controller", node.bootstrap, "--command-config",
                        str(_command_config(tmp_path / "oauth.properties", idp, pki)), "describe", "--status",
                        env=java_env(pki, idp), check=False, version=release)
        assert "LeaderId:               1" in proc.stdout, proc.stdout + proc.stderr
        assert idp.token_requests > before  # the token came from the provider's token endpoint
        assert idp.jwks_requests > 0  # and its signature was checked against the provider's JWKS
    finally:
        node.stop()


def _exchange(port: int, token: str) -> tuple:
    """SaslHandshake OAUTHBEARER, SaslAuthenticate with ``token``, and after a challenge
    the client's ^A: (first answer's error, bytes, lifetime bucket, then the final
    answer's error and message)."""
    s = SecureSession(port, None, timeout=15.0)
    try:
        assert s.request(SaslHandshakeRequest(mechanism="OAUTHBEARER"), 1).error_code == 0
        first = s.request(SaslAuthenticateRequest(auth_bytes=InitialResponse(token).to_bytes()), 2)
        lifetime = round((first.session_lifetime_ms or 0) / 60000)  # minutes
        out = (first.error_code, first.error_message, bytes(first.auth_bytes), lifetime)
        if first.error_code == 0 and first.auth_bytes:
            final = s.request(SaslAuthenticateRequest(auth_bytes=b"\x01"), 2)
            out += (final.error_code, final.error_message, s.closed_within(5))
        return out
    finally:
        s.close()


def _scenario(port: int, idp) -> list:
    """The exchanges, in order; the provider's keys are rotated half-way and put back."""
    original = list(idp.keys)
    answers = [_exchange(port, idp.mint("alice", expires_in=600)),
               _exchange(port, idp.mint("alice", expires_in=-120)),
               _exchange(port, idp.mint("alice", audience="someone-else")),
               _exchange(port, idp.mint("alice", issuer="https://elsewhere/realms/x")),
               _exchange(port, idp.mint("alice", kid="never-published"))]
    idp.rotate()
    fresh = idp.mint("alice", expires_in=600)
    answers.append(_exchange(port, fresh))  # an unknown key id: refused, and the JWKS refreshed
    deadline = time.monotonic() + 20
    while (accepted := _exchange(port, fresh))[0:3] != (0, None, b"") and time.monotonic() < deadline:
        time.sleep(0.5)
    answers.append(accepted)
    answers.append(_exchange(port, idp.mint("alice", key=original[0])))  # the key rotated away
    idp.keys = original
    return answers


@pytest.mark.slow
def test_refusals_match_a_kafka_controller(oauth_env, tmp_path):
    need_jdk()
    root, pki, idp = oauth_env
    ctl = KafkaController(tmp_path / "kafka", node_id=1, cluster_id=random_cluster_id(),
                          overrides={"listener.security.protocol.map": "CONTROLLER:SASL_PLAINTEXT",
                                     **controller_settings(idp)}, env=java_env(pki, idp))
    try:
        ctl.start()
        wait_for(lambda: quorum_partition(ctl.port, None, ADMIN).leader_id == 1, 90, "Kafka's controller")
        theirs = _scenario(ctl.port, idp)
    finally:
        ctl.close()
    (tmp_path / "ours").mkdir()
    node = _our_node(tmp_path / "ours", pki, idp)
    node.start()
    try:
        wait_for(lambda: quorum_partition(node.port, None, ADMIN).leader_id == 1, 60, "our node")
        ours = _scenario(node.port, idp)
    finally:
        node.stop()
    refused = (0, "", b'{"status":"invalid_token"}', 0, 58, '{"status":"invalid_token"}', True)
    assert theirs[0] == (0, "", b"", 10) and theirs[1:6] == [refused] * 5, theirs
    assert theirs[6][:3] == (0, "", b"") and theirs[7] == refused, theirs
    assert ours == theirs


@pytest.mark.slow
def test_our_node_logs_in_to_a_kafka_controller_and_reauthenticates(oauth_env, tmp_path):
    """The client side: our node, an observer of a Kafka controller, dials it with
    OAUTHBEARER (a client-credentials token from the provider). Tokens live 12 s and the
    controller sets ``connections.max.reauth.ms`` to 5 s, so Kafka gives each session at
    most 5 s and closes one used after that without re-authenticating. Our node renews
    its tokens (``sasl.login.refresh.*``: the 12 s token is renewed at 80-85% of its
    life) and re-authenticates in band, and the same connection keeps fetching across
    several token lifetimes."""
    need_jdk()
    root, pki, idp = oauth_env
    idp.lifetime_s = 12
    cluster_id = random_cluster_id()
    ctl = KafkaController(tmp_path / "kafka", node_id=1, cluster_id=cluster_id,
                          overrides={"listener.security.protocol.map": "CONTROLLER:SASL_PLAINTEXT",
                                     "listener.name.controller.oauthbearer.connections.max.reauth.ms": "5000",
                                     **controller_settings(idp)}, env=java_env(pki, idp))
    (tmp_path / "ours").mkdir()
    node = _our_node_as_observer(tmp_path / "ours", pki, idp)
    try:
        ctl.start()
        wait_for(lambda: quorum_partition(ctl.port, None, ADMIN).leader_id == 1, 90, "Kafka's controller")
        node.format_as_observer_of(f"127.0.0.1:{ctl.port}", cluster_id)
        node.start()

        def fetched() -> int:
            """Our observer's log end offset once it has caught up with the leader, else 0."""
            assert ctl.running, ctl.log_tail()
            leader = quorum_partition(ctl.port, None, ADMIN)
            ours = [o for o in leader.observers if o.replica_id == 2]
            return ours[0].log_end_offset if ours and ours[0].log_end_offset >= leader.high_watermark > 0 else 0
        first_offset = wait_for(fetched, 60, "our observer fetching from Kafka over OAUTHBEARER")
        first_tokens, started = idp.token_requests, time.monotonic()
        closed = _closed(node.log_path.read_text())

        def past_two_lifetimes():
            log = node.log_path.read_text()
            return (time.monotonic() - started > 2 * idp.lifetime_s and idp.token_requests >= first_tokens + 2
                    and log.count("SASL re-authentication to") >= 5 and fetched() > first_offset)
        wait_for(past_two_lifetimes, 90, "re-authenticated with renewed tokens across two token lifetimes")
        log = node.log_path.read_text()
        assert "SASL/OAUTHBEARER authentication to" not in log, node.log_tail()  # never refused
        assert _closed(log) == closed, node.log_tail()  # the connections lived on
    finally:
        node.stop()
        ctl.close()
        idp.lifetime_s = 3600


def _closed(log: str) -> int:
    """Outbound connections our node saw closed (``net/peers.py`` logs each)."""
    return len(re.findall(r"connection to \S+ closed", log))


def _our_node_as_observer(root, pki, idp) -> OurNode:
    """Our node 2, dialing controllers with OAUTHBEARER (and serving it too)."""
    settings = controller_settings(idp)
    trust = f'ssl.truststore.location="{pki.truststore_pem}" ssl.truststore.type="PEM"'
    prefix = "listener.name.controller.oauthbearer."
    settings.update({
        "sasl.mechanism.controller.protocol": "OAUTHBEARER",
        f"{prefix}sasl.jaas.config": f'{MODULE} required clientId="kafka-tool" clientSecret="tool-secret" '
                                     f'scope="kafka" {trust};',
        f"{prefix}sasl.login.callback.handler.class": LOGIN_HANDLER,
        f"{prefix}sasl.oauthbearer.token.endpoint.url": idp.token_url})
    return OurNode(root, node_id=2, extra=(
        "listener.security.protocol.map=CONTROLLER:SASL_PLAINTEXT,CLIENT:PLAINTEXT",
        *(f"{k}={v}" for k, v in settings.items())))


@pytest.mark.parametrize("release", BOTH)  # 4.0.2: 7-49 s here, so not slow
def test_a_kafka_broker_logs_in_to_our_controller(oauth_env, tmp_path, release):
    need_jdk()
    root, pki, idp = oauth_env
    (tmp_path / "ours").mkdir()
    cluster_id = random_cluster_id()
    node = _our_node(tmp_path / "ours", pki, idp, cluster_id, RELEASES[release]["metadata"][0])
    jaas = (f'{MODULE} required clientId="kafka-broker" clientSecret="broker-secret" scope="kafka" '
            f'ssl.truststore.location="{pki.truststore_pem}" ssl.truststore.type="PEM";')
    broker = KafkaBroker(tmp_path / "broker", 100, cluster_id, node.bootstrap, version=release, overrides={
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:SASL_PLAINTEXT",
        "sasl.mechanism.controller.protocol": "OAUTHBEARER",
        "listener.name.controller.oauthbearer.sasl.jaas.config": jaas, "sasl.jaas.config": jaas,
        "listener.name.controller.oauthbearer.sasl.login.callback.handler.class": LOGIN_HANDLER,
        "sasl.login.callback.handler.class": LOGIN_HANDLER, "sasl.oauthbearer.token.endpoint.url": idp.token_url})
    broker.env = java_env(pki, idp)
    node.start()
    try:
        wait_for(lambda: quorum_partition(node.port, None, ADMIN).leader_id == 1, 60, "our node over SASL")
        before = idp.token_requests
        broker.start()

        def topic_created():
            proc = run_tool("kafka-topics", "--bootstrap-server", broker.bootstrap, "--create", "--topic", "t1",
                            "--partitions", "2", "--replication-factor", "1", check=False, timeout=60,
                            version=release)
            return proc.returncode == 0 or "already exists" in proc.stderr

        wait_for(topic_created, 120, f"Kafka {release}'s broker registered over OAUTHBEARER and creating a topic")
        assert idp.token_requests > before
    finally:
        broker.close()
        node.stop()
