"""The console behind TLS and a login, without sockets: ``kraft.console.listener``
parsing, the Basic login against PLAIN users and SCRAM credentials, the gate's
401/403 decisions (the node's ACLs: DESCRIBE on CLUSTER), the answers on the wire,
and the TLS context and login built from a node's configuration."""
from __future__ import annotations

import base64
import logging
from types import SimpleNamespace

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization

from kraft_server.config import ConfigError, KafkaConfig
from kraft_server.console.gate import ALLOWED, FORBIDDEN, UNAUTHORIZED, Gate
from kraft_server.console.http import ConsoleProtocol
from kraft_server.console.listener import ConsoleListener, parse_console_listener
from kraft_server.console.login import BasicLogin, basic_credentials
from kraft_server.console.secure import console_security
from kraft_server.security import acls as A
from kraft_server.security.acls import Acl
from kraft_server.security.authorizer import AclIndex, Authorizer
from kraft_server.security.listeners import ListenerSecurity
from kraft_server.security.principal import PrincipalMapper
from kraft_server.security.scram import make_credential
from tests.support.certs import Pki
from tests.unit.node.test_console import FakeConsole, FakeTransport, request, status

SECRET = "s3cret-Pa55"


def basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    return Pki(tmp_path_factory.mktemp("pki"))


# -- kraft.console.listener --------------------------------------------------------

@pytest.mark.parametrize("value, expected", [
    ("127.0.0.1:8080", ConsoleListener("PLAINTEXT", "127.0.0.1", 8080)),
    ("PLAINTEXT://127.0.0.1:8080", ConsoleListener("PLAINTEXT", "127.0.0.1", 8080)),
    ("SSL://0.0.0.0:8443", ConsoleListener("SSL", "0.0.0.0", 8443)),
    ("sasl_ssl://localhost:8443", ConsoleListener("SASL_SSL", "localhost", 8443)),
])
def test_console_listener_parsing(value, expected):
    assert parse_console_listener(value) == expected
    assert expected.scheme == ("http" if expected.protocol == "PLAINTEXT" else "https")


@pytest.mark.parametrize("value, why", [
    ("SASL_PLAINTEXT://127.0.0.1:8080", "in the clear"),
    ("HTTPS://127.0.0.1:8443", "must be one of PLAINTEXT, SSL, SASL_SSL"),
    ("SSL://nohost", "Unable to parse host and port"),
])
def test_console_listener_refusals(value, why):
    with pytest.raises(ConfigError, match=why):
        parse_console_listener(value)
    with pytest.raises(ConfigError, match=why):
        _config(**{"kraft.console.listener": value})


# -- the Basic login -------------------------------------------------------------------

def test_basic_header_parsing():
    assert basic_credentials(basic("alice", "a:b")) == ("alice", "a:b")
    assert basic_credentials("basic " + base64.b64encode(b"bob:").decode()) == ("bob", "")
    for bad in (None, "", "Bearer x", "Basic !!!", "Basic " + base64.b64encode(b"nocolon").decode(),
                "Basic " + base64.b64encode(b":pw").decode()):
        assert basic_credentials(bad) is None


class SyncOffload:
    def __init__(self):
        self.calls = 0

    def __call__(self, fn, done):
        self.calls += 1
        done(fn())


def _login(mechanisms=("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"), offload=None):
    scram = {("SCRAM-SHA-512", "carol"): make_credential("SCRAM-SHA-512", SECRET, iterations=4096)}
    return BasicLogin(list(mechanisms), {"alice": SECRET}, lambda m, u: scram.get((m, u)),
                      offload or SyncOffload())


def _check(login, header):
    out = []
    login.check(header, out.append)
    assert len(out) == 1
    return out[0]


def test_login_with_plain_users_and_scram_credentials():
    offload = SyncOffload()
    login = _login(offload=offload)
    assert _check(login, basic("alice", SECRET)) == "alice"
    assert _check(login, basic("alice", "wrong")) is None
    assert _check(login, basic("nobody", SECRET)) is None
    assert offload.calls == 0  # no SCRAM credential: nothing derived
    assert _check(login, basic("carol", SECRET)) == "carol"
    assert _check(login, basic("carol", "wrong")) is None
    assert offload.calls == 2
    assert _check(login, basic("carol", SECRET)) == "carol"  # remembered: not derived again
    assert offload.calls == 2
    assert _check(login, None) is None


def test_a_remembered_login_ends_when_its_credential_changes_or_goes():
    """The memory of a SCRAM login holds only while the user's credential is the one it
    passed against: a new password (or a deleted user) in the metadata ends it at once."""
    scram = {("SCRAM-SHA-512", "carol"): make_credential("SCRAM-SHA-512", SECRET, iterations=4096)}
    offload = SyncOffload()
    login = BasicLogin(["SCRAM-SHA-512"], {}, lambda m, u: scram.get((m, u)), offload)
    assert _check(login, basic("carol", SECRET)) == "carol"
    assert _check(login, basic("carol", SECRET)) == "carol" and offload.calls == 1  # remembered
    scram[("SCRAM-SHA-512", "carol")] = make_credential("SCRAM-SHA-512", "new-secret", iterations=4096)
    assert _check(login, basic("carol", SECRET)) is None and offload.calls == 2  # checked again: refused
    assert _check(login, basic("carol", "new-secret")) == "carol"
    del scram[("SCRAM-SHA-512", "carol")]
    assert _check(login, basic("carol", "new-secret")) is None


def test_login_only_with_the_mechanisms_enabled():
    assert _check(_login(("SCRAM-SHA-512",)), basic("alice", SECRET)) is None
    assert _check(_login(("PLAIN",)), basic("carol", SECRET)) is None


def test_a_scram_check_runs_off_the_loop_and_answers_later():
    pending = []
    login = _login(offload=lambda fn, done: pending.append((fn, done)))
    out = []
    login.check(basic("carol", SECRET), out.append)
    assert out == [] and len(pending) == 1
    fn, done = pending[0]
    done(fn())
    assert out == ["carol"]


# -- the gate --------------------------------------------------------------------------

def _allowed(acls, super_users=()):
    authorizer, index = Authorizer(super_users), AclIndex(acls)
    return lambda principal, host, op, rtype, name: authorizer.authorize(index, principal, host, op, rtype, name)


def _describe(principal, perm=A.ALLOW, op=A.DESCRIBE):
    return Acl(A.CLUSTER, A.CLUSTER_NAME, A.LITERAL, principal, "*", op, perm)


def _decide(gate, headers=None, transport=None):
    out = []
    gate.decide(transport or FakeTransport(), headers or {}, lambda status, who: out.append((status, who)))
    return out[0]


def test_gate_decisions_with_a_login_and_acls():
    gate = Gate(login=_login(), allowed=_allowed([_describe("User:alice"), _describe("User:carol", op=A.ALTER)]))
    assert _decide(gate) == (UNAUTHORIZED, None)
    assert _decide(gate, {"authorization": basic("alice", "wrong")}) == (UNAUTHORIZED, None)
    assert _decide(gate, {"authorization": basic("alice", SECRET)}) == (ALLOWED, "User:alice")
    # ALTER implies DESCRIBE, as Kafka's authorizer has it
    assert _decide(gate, {"authorization": basic("carol", SECRET)}) == (ALLOWED, "User:carol")


def test_gate_refuses_a_user_without_describe_on_the_cluster():
    gate = Gate(login=_login(), allowed=_allowed([_describe("User:bob")]))
    assert _decide(gate, {"authorization": basic("alice", SECRET)}) == (FORBIDDEN, "User:alice")
    deny = Gate(login=_login(), allowed=_allowed([_describe("User:*"), _describe("User:alice", A.DENY)]))
    assert _decide(deny, {"authorization": basic("alice", SECRET)}) == (FORBIDDEN, "User:alice")
    supers = Gate(login=_login(), allowed=_allowed([_describe("User:bob")], ["User:alice"]))
    assert _decide(supers, {"authorization": basic("alice", SECRET)}) == (ALLOWED, "User:alice")


def test_gate_without_login_nor_authorizer_lets_everyone_in():
    gate = Gate()
    assert gate.open and _decide(gate) == (ALLOWED, "User:ANONYMOUS")
    anonymous = Gate(allowed=_allowed([_describe("User:alice")]))
    assert _decide(anonymous) == (FORBIDDEN, "User:ANONYMOUS")


class TlsTransport(FakeTransport):
    def __init__(self, der):
        super().__init__()
        self.der = der

    def get_extra_info(self, name, default=None):
        if name == "ssl_object":
            return SimpleNamespace(getpeercert=lambda binary_form=False: self.der)
        return ("10.0.0.9", 5555) if name == "peername" else default


def test_gate_takes_the_client_certificate_principal_under_mutual_tls(pki):
    pem = pki.client.key_pem.read_bytes()
    der = x509.load_pem_x509_certificates(pem)[0].public_bytes(serialization.Encoding.DER)
    security = ListenerSecurity("CONSOLE", "SSL", ssl_context=object(), mapper=PrincipalMapper("DEFAULT"))
    subject = f"User:{pki.client.subject}"
    gate = Gate(security, allowed=_allowed([_describe(subject)]))
    assert _decide(gate, transport=TlsTransport(der)) == (ALLOWED, subject)
    assert _decide(gate, transport=TlsTransport(None)) == (FORBIDDEN, "User:ANONYMOUS")
    security.mapper = PrincipalMapper(r"RULE:^CN=(.*?),OU=Clients.*$/$1/")
    named = Gate(security, allowed=_allowed([_describe("User:alice")]))
    assert _decide(named, transport=TlsTransport(der)) == (ALLOWED, "User:alice")
    security.mapper = PrincipalMapper(r"RULE:^CN=(.*?),OU=Nobody$/$1/")
    assert _decide(named, transport=TlsTransport(der)) == (FORBIDDEN, None)


# -- on the wire -------------------------------------------------------------------------

def _page(gate, raw):
    console = FakeConsole()
    console.gate = gate
    return request(console, raw)


def test_answers_401_with_a_basic_challenge_403_and_the_page(caplog):
    caplog.set_level(logging.DEBUG)
    gate = Gate(login=_login(), allowed=_allowed([_describe("User:alice")]))
    _, t = _page(gate, b"GET / HTTP/1.1\r\n\r\n")
    assert status(t) == 401 and b'WWW-Authenticate: Basic realm="kraft console"' in t.data and t.closed
    _, t = _page(gate, f"GET /api/state HTTP/1.1\r\nAuthorization: {basic('alice', 'nope')}\r\n\r\n".encode())
    assert status(t) == 401
    _, t = _page(gate, f"GET /api/state HTTP/1.1\r\nAuthorization: {basic('carol', SECRET)}\r\n\r\n".encode())
    assert status(t) == 403 and b"DESCRIBE" in t.data
    _, t = _page(gate, f"GET / HTTP/1.1\r\nAuthorization: {basic('alice', SECRET)}\r\n\r\n".encode())
    assert status(t) == 200 and b"<html" in t.data.lower()
    assert SECRET not in caplog.text and "nope" not in caplog.text


def test_a_client_gone_during_the_login_check_gets_nothing():
    pending = []
    gate = Gate(login=_login(offload=lambda fn, done: pending.append((fn, done))))
    page, t = _page(gate, f"GET / HTTP/1.1\r\nAuthorization: {basic('carol', SECRET)}\r\n\r\n".encode())
    assert page.deciding and t.data == b""
    page.data_received(b"more")  # ignored while deciding
    page.connection_lost(None)
    fn, done = pending[0]
    done(fn())
    assert t.data == b""


# -- from a node's configuration -----------------------------------------------------------

def _config(**extra):
    props = {"node.id": "1", "process.roles": "controller", "controller.listener.names": "CONTROLLER",
             "listeners": "CONTROLLER://127.0.0.1:9093",
             "controller.quorum.bootstrap.servers": "127.0.0.1:9093", "log.dirs": "/tmp/x"}
    props.update(extra)
    return KafkaConfig.from_props(props)


def _tls(pki, **extra):
    props = {"ssl.keystore.type": "PEM", "ssl.keystore.location": str(pki.server.key_pem),
             "ssl.truststore.type": "PEM", "ssl.truststore.location": str(pki.truststore_pem)}
    props.update(extra)
    return props


JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required '
        f'username="admin" password="x" user_admin="x" user_alice="{SECRET}";')


def test_security_from_the_node_configuration(pki):
    config = _config(**{"kraft.console.listener": "127.0.0.1:8080",
                        "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer"})
    context, gate = console_security(config, parse_console_listener(config["kraft.console.listener"]),
                                     SimpleNamespace(image=None))
    assert context is None and gate.open  # plain HTTP unchanged: no login, no ACL check

    config = _config(**_tls(pki, **{"kraft.console.listener": "SSL://127.0.0.1:8443",
                                   "listener.name.console.ssl.client.auth": "required"}))
    context, gate = console_security(config, parse_console_listener(config["kraft.console.listener"]))
    import ssl
    assert context.verify_mode == ssl.CERT_REQUIRED and gate.login is None and gate.allowed is None

    config = _config(**_tls(pki, **{
        "kraft.console.listener": "SASL_SSL://127.0.0.1:8443",
        "sasl.enabled.mechanisms": "OAUTHBEARER,PLAIN,SCRAM-SHA-512",
        "listener.name.console.plain.sasl.jaas.config": JAAS,
        "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer"}))
    image = SimpleNamespace(acls=SimpleNamespace(index=lambda: AclIndex([_describe("User:alice")])))
    context, gate = console_security(config, parse_console_listener(config["kraft.console.listener"]),
                                     SimpleNamespace(image=image), lambda m, u: None, SyncOffload())
    assert context.verify_mode == ssl.CERT_NONE
    assert gate.login.mechanisms == ["PLAIN", "SCRAM-SHA-512"]  # no bearer tokens in a Basic login
    assert _decide(gate, {"authorization": basic("alice", SECRET)}) == (ALLOWED, "User:alice")
    assert _decide(gate, {"authorization": basic("admin", "x")}) == (FORBIDDEN, "User:admin")


def test_configuration_refusals(pki):
    config = _config(**_tls(pki, **{"kraft.console.listener": "SASL_SSL://127.0.0.1:8443"}))
    with pytest.raises(ConfigError, match="needs PLAIN or SCRAM"):
        console_security(config, parse_console_listener(config["kraft.console.listener"]))
    config = _config(**{"kraft.console.listener": "SSL://127.0.0.1:8443"})
    with pytest.raises(ConfigError, match="ssl.keystore.location"):
        console_security(config, parse_console_listener(config["kraft.console.listener"]))
    config = _config(**_tls(pki, **{"kraft.console.listener": "SASL_SSL://127.0.0.1:8443",
                                    "listener.name.console.sasl.enabled.mechanisms": "PLAIN"}))
    with pytest.raises(ConfigError, match="sasl.jaas.config"):
        console_security(config, parse_console_listener(config["kraft.console.listener"]))


def test_a_tls_console_does_not_share_the_prometheus_address(pki):
    from kraft_server.console import attach
    config = _config(**_tls(pki, **{"kraft.console.listener": "SSL://127.0.0.1:8443",
                                   "kraft.metrics.prometheus.listener": "127.0.0.1:8443"}))
    with pytest.raises(ConfigError, match="cannot share its address"):
        attach(config, None, None, None, None, None, None, [("PROMETHEUS", "127.0.0.1", 8443, None)])
