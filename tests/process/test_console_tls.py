"""The console over HTTPS with a login (``kraft.console.listener=SASL_SSL://``) and
under mutual TLS (``SSL://`` with ``ssl.client.auth=required``), on our node with the
StandardAuthorizer (PLAIN users, and a SCRAM-SHA-512 user formatted with
``--add-scram``): an HTTPS client trusting the test CA and Debian's Chromium see
the page after a login, 401 without one or with a wrong password, 403 for a user
without DESCRIBE on CLUSTER; the node's log (DEBUG) never holds a password."""
from __future__ import annotations

import base64
import hashlib
import http.client
import ssl
import subprocess
import sys
import uuid

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization

from tests.support.browser import headless_chromium, statuses, texts, wait_page
from tests.support.certs import Pki
from tests.support.kraft_nodes import REPO, OurNode, free_port, kafka_release, wait_for
from tests.support.secure_client import SecureSession, client_context, describe_quorum_body, sasl_ssl_controller
from wire.messages import CreateAclsRequest
from wire.messages.create_acls_request import AclCreation

PLAIN_USERS = {"admin": "admin-Secret-1", "alice": "alice-Secret-2", "bob": "bob-Secret-3"}
SECRETS = {**PLAIN_USERS, "carol": "carol-Scram-4"}  # carol: a SCRAM-SHA-512 credential
JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" '
        f'password="{SECRETS["admin"]}" ' + " ".join(f'user_{u}="{p}"' for u, p in PLAIN_USERS.items()) + ";")
AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"


def _admin(node, pki, body, version):
    session = SecureSession(node.port, client_context(pki), timeout=5.0)
    try:
        session.sasl("PLAIN", "admin", SECRETS["admin"])
        return session.request(body, version)
    finally:
        session.close()


def _leader(node, pki) -> int:
    return _admin(node, pki, describe_quorum_body(), 2).topics[0].partitions[0].leader_id


def _allow_describe_cluster(node, pki, principal: str) -> None:
    answer = _admin(node, pki, CreateAclsRequest(creations=[AclCreation(
        resource_type=4, resource_name="kafka-cluster", resource_pattern_type=3, principal=principal,
        host="*", operation=8, permission_type=3)]), 3)  # CLUSTER kafka-cluster LITERAL DESCRIBE ALLOW
    assert [c.error_code for c in answer.results] == [0]


def _start(root, pki, console: str, *extra) -> tuple[OurNode, int]:
    port = free_port()
    node = OurNode(root, extra=(*sasl_ssl_controller(pki, "PLAIN", JAAS), f"authorizer.class.name={AUTHORIZER}",
                                "super.users=User:admin", f"kraft.console.listener={console}://127.0.0.1:{port}",
                                *extra))
    subprocess.run([sys.executable, "-m", "tools.storage", "format", "--cluster-id", uuid.uuid4().hex[:22],
                    "--standalone", "--release-version", kafka_release(), "--config", str(node.config),
                    "--add-scram", f"SCRAM-SHA-512=[name=carol,password={SECRETS['carol']}]"],
                   check=True, cwd=REPO, timeout=60)
    node.start()
    try:
        wait_for(lambda: _leader(node, pki) == 1, 60, "a leader over SASL_SSL")
    except BaseException:
        node.kill()
        raise
    return node, port


def get(port: int, context, path: str = "/", user: str | None = None, password: str | None = None):
    conn = http.client.HTTPSConnection("127.0.0.1", port, context=context, timeout=10)
    try:
        headers = {}
        if user is not None:
            headers["Authorization"] = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
        conn.request("GET", path, headers=headers)
        answer = conn.getresponse()
        return answer.status, dict(answer.getheaders()), answer.read()
    finally:
        conn.close()


@pytest.fixture(scope="module")
def login_node(tmp_path_factory):
    root = tmp_path_factory.mktemp("console-login")
    pki = Pki(root / "pki")
    node, port = _start(root, pki, "SASL_SSL", f"listener.name.console.plain.sasl.jaas.config={JAAS}",
                        "listener.name.console.sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-512")
    try:
        _allow_describe_cluster(node, pki, "User:alice")
        _allow_describe_cluster(node, pki, "User:carol")
        yield node, port, pki
    finally:
        node.kill()


def test_https_client_logs_in(login_node):
    node, port, pki = login_node
    context = client_context(pki)
    wait_for(lambda: get(port, context, "/api/state", "alice", SECRETS["alice"])[0] == 200, 20, "alice's ACL")
    status, headers, body = get(port, context, "/", "alice", SECRETS["alice"])
    assert status == 200 and b"<html" in body.lower()
    status, headers, _ = get(port, context, "/api/state")
    assert status == 401 and headers["WWW-Authenticate"].startswith('Basic realm="kraft console"')
    assert get(port, context, "/", "alice", "not-her-password")[0] == 401
    assert get(port, context, "/", "nobody", SECRETS["alice"])[0] == 401
    status, _, body = get(port, context, "/api/state", "bob", SECRETS["bob"])
    assert status == 403 and b"DESCRIBE" in body
    assert get(port, context, "/api/state", "admin", SECRETS["admin"])[0] == 200  # super.users
    wait_for(lambda: get(port, context, "/api/state", "carol", SECRETS["carol"])[0] == 200, 20, "carol (SCRAM)")
    assert get(port, context, "/api/state", "carol", "not-carols")[0] == 401
    with pytest.raises(ssl.SSLCertVerificationError):  # the node's certificate, from the test CA
        get(port, ssl.create_default_context())
    log = node.log_path.read_text(errors="replace")
    assert "console" in log and not any(p in log for p in SECRETS.values())


def _spki(pki) -> str:
    """The server key's SPKI hash, for Chromium's ``--ignore-certificate-errors-spki-list``
    (the test CA is not in Chromium's trust store; only this key is let through)."""
    cert = x509.load_pem_x509_certificates(pki.server.key_pem.read_bytes())[0]
    spki = cert.public_key().public_bytes(serialization.Encoding.DER,
                                          serialization.PublicFormat.SubjectPublicKeyInfo)
    return base64.b64encode(hashlib.sha256(spki).digest()).decode()


def _as(browser, user: str | None) -> None:
    """Every request of the page (the page, its script, /events) with ``user``'s login."""
    headers = {} if user is None else {
        "Authorization": "Basic " + base64.b64encode(f"{user}:{SECRETS[user]}".encode()).decode()}
    browser.execute_cdp_cmd("Network.enable", {})
    browser.execute_cdp_cmd("Network.setExtraHTTPHeaders", {"headers": headers})


def test_chromium_sees_the_page_after_login_only(login_node):
    node, port, pki = login_node
    browser = headless_chromium(flags=(f"--ignore-certificate-errors-spki-list={_spki(pki)}",), network_log=True)
    try:
        url = f"https://127.0.0.1:{port}/"
        _as(browser, "alice")
        browser.get(url)
        wait_page(browser, lambda b: texts(b, "#connection") == ["live"], 15, "the event stream")
        wait_page(browser, lambda b: texts(b, "#leader") == ["1"], 10, "the leader's id")
        assert 200 in statuses(browser, url)
        _as(browser, "bob")
        browser.get(url)
        wait_page(browser, lambda b: "DESCRIBE on the cluster" in b.page_source, 10, "403 for bob")
        statuses(browser, url)  # what came before
        _as(browser, None)
        browser.get(url)
        # Chromium asks for a login (no page shown): the answer it got was 401
        wait_page(browser, lambda b: 401 in statuses(b, url), 10, "401 without login")
    finally:
        browser.quit()


def test_mutual_tls_principal(tmp_path):
    pki = Pki(tmp_path / "pki")
    node, port = _start(tmp_path, pki, "SSL", "listener.name.console.ssl.client.auth=required",
                        "listener.name.console.ssl.truststore.type=PEM",
                        f"listener.name.console.ssl.truststore.location={pki.truststore_pem}",
                        r"listener.name.console.ssl.principal.mapping.rules=RULE:^CN=(.*?),OU=Clients.*$/$1/")
    try:
        bob = pki.issue("bob", "bob", ou="Clients")
        assert get(port, client_context(pki, pki.client))[0] == 403  # alice, before her ACL
        _allow_describe_cluster(node, pki, "User:alice")
        wait_for(lambda: get(port, client_context(pki, pki.client))[0] == 200, 20, "alice's ACL")
        assert get(port, client_context(pki, bob))[0] == 403
        with pytest.raises((ssl.SSLError, ConnectionError, http.client.HTTPException)):
            get(port, client_context(pki))  # no certificate: the handshake fails
    finally:
        node.kill()
