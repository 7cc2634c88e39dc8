"""A small OIDC provider for the OAUTHBEARER tests, started by the test: a token
endpoint (OAuth client credentials, RFC 6749 4.4) and a JWKS endpoint over HTTPS with
the test CA's certificate (``tests/support/certs.py``), RSA signing keys that can be
rotated mid-test, and ``mint`` for the tokens the refusal tests need (expired, another
audience or issuer, an unknown or rotated-away key id)."""
from __future__ import annotations

import base64
import json
import ssl
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa

ISSUER_PATH = "/realms/kraft"


class _Key:
    def __init__(self, kid: str):
        self.kid = kid
        self.private = rsa.generate_private_key(public_exponent=65537, key_size=2048)

    def jwk(self) -> dict:
        entry = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(self.private.public_key()))
        entry.update(kid=self.kid, use="sig", alg="RS256")
        return entry


class OidcProvider:
    """``clients``: client id -> secret. ``audience``: the ``aud`` of issued tokens."""

    def __init__(self, pki, clients: dict[str, str], audience: str = "kraft", lifetime_s: int = 3600):
        self.clients, self.audience, self.lifetime_s = dict(clients), audience, lifetime_s
        self._serial = 0
        self.keys = [self._new_key()]  # first: signs; all: published
        self.jwks_requests = 0
        self.token_requests = 0
        provider = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _send(self, status: int, body: dict) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                if self.path == "/jwks":
                    provider.jwks_requests += 1
                    return self._send(200, {"keys": [k.jwk() for k in provider.keys]})
                self._send(404, {"error": "not_found"})

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                form = urllib.parse.parse_qs(self.rfile.read(length).decode())
                if self.path != "/token":
                    return self._send(404, {"error": "not_found"})
                provider.token_requests += 1
                client_id, secret = None, None
                auth = self.headers.get("Authorization", "")
                if auth.startswith("Basic "):
                    client_id, _, secret = base64.b64decode(auth[6:]).decode().partition(":")
                    client_id, secret = urllib.parse.unquote(client_id), urllib.parse.unquote(secret)
                client_id = client_id or form.get("client_id", [None])[0]
                secret = secret or form.get("client_secret", [None])[0]
                if form.get("grant_type", [None])[0] != "client_credentials":
                    return self._send(400, {"error": "unsupported_grant_type"})
                if client_id not in provider.clients or provider.clients[client_id] != secret:
                    return self._send(401, {"error": "invalid_client"})
                scope = form.get("scope", [None])[0]
                token = provider.mint(client_id, scope=scope)
                self._send(200, {"access_token": token, "token_type": "Bearer",
                                 "expires_in": provider.lifetime_s, "scope": scope or ""})

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(pki.server.key_pem)
        self._server.socket = context.wrap_socket(self._server.socket, server_side=True)
        self.port = self._server.server_address[1]
        self.base = f"https://localhost:{self.port}"
        self.issuer = self.base + ISSUER_PATH
        self.jwks_url, self.token_url = self.base + "/jwks", self.base + "/token"
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True)

    def _new_key(self) -> _Key:
        self._serial += 1
        return _Key(f"key-{self._serial}")

    def start(self) -> OidcProvider:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    def rotate(self, keep_old: bool = False) -> None:
        """A new signing key; the old one stays published only with ``keep_old``."""
        key = self._new_key()
        self.keys = [key, *self.keys] if keep_old else [key]

    def mint(self, sub: str, *, scope: str | None = None, audience=None, issuer=None, expires_in=None,
             issued_at=None, key: _Key | None = None, kid: str | None = None, extra: dict | None = None) -> str:
        """A signed token; each argument overrides what the provider normally puts in."""
        now = int(time.time())
        key = key or self.keys[0]
        claims = {"sub": sub, "iss": issuer or self.issuer, "aud": audience or self.audience,
                  "iat": issued_at if issued_at is not None else now,
                  "exp": now + (expires_in if expires_in is not None else self.lifetime_s)}
        if scope:
            claims["scope"] = scope
        claims.update(extra or {})
        claims = {k: v for k, v in claims.items() if v is not None}
        return jwt.encode(claims, key.private, algorithm="RS256", headers={"kid": kid or key.kid})


FIRST_WAIT_S = 15.0  # how long a test waits for a first JWKS fetch or token


def validator_for(provider: OidcProvider, pki, **settings):
    """Our validator for ``provider``'s tokens (audience ``kraft``, its issuer), trusting
    the test CA, with short JWKS retries."""
    from kraft_server.security.jwks import RefreshingJwks
    from kraft_server.security.oauth_config import https_context
    from kraft_server.security.oauth_validator import JwtValidator, ValidatorSettings
    context = https_context({"ssl.truststore.location": str(pki.truststore_pem), "ssl.truststore.type": "PEM"})
    jwks = RefreshingJwks(provider.jwks_url, context, backoff_ms=10, backoff_max_ms=50)
    jwks.keys(wait=FIRST_WAIT_S)  # the first fetch, as the node's listener set-up starts it
    return JwtValidator(jwks, ValidatorSettings(**{"audiences": [provider.audience], "issuer": provider.issuer,
                                                   **settings}))


# -- a controller listener checking this provider's tokens, Kafka's and ours alike --------

VALIDATOR = "org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler"
MODULE = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
PLAIN_JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" '
              'password="admin-secret" user_admin="admin-secret";')
ADMIN = ("PLAIN", "admin", "admin-secret")  # PLAIN between controllers and for polling


def controller_settings(idp: OidcProvider, pki=None) -> dict[str, str]:
    """A SASL controller listener with PLAIN between controllers and OAUTHBEARER for
    clients checked against ``idp`` (audience ``kraft``, its issuer). With ``pki``, the
    JAAS entry trusts the test CA for the JWKS, as ours reads it (Kafka's JaasOptionsUtils
    options); Kafka's JVM trusts it through ``java_env``."""
    prefix = "listener.name.controller.oauthbearer."
    trust = f' ssl.truststore.location="{pki.truststore_pem}" ssl.truststore.type="PEM"' if pki else ""
    return {"sasl.enabled.mechanisms": "PLAIN,OAUTHBEARER", "sasl.mechanism.controller.protocol": "PLAIN",
            "listener.name.controller.plain.sasl.jaas.config": PLAIN_JAAS,
            f"{prefix}sasl.jaas.config": f"{MODULE} required{trust};",
            f"{prefix}sasl.server.callback.handler.class": VALIDATOR,
            f"{prefix}sasl.oauthbearer.jwks.endpoint.url": idp.jwks_url,
            f"{prefix}sasl.oauthbearer.expected.audience": "kraft",
            f"{prefix}sasl.oauthbearer.expected.issuer": idp.issuer}


def java_env(pki, idp: OidcProvider) -> dict[str, str]:
    """Kafka 4 fetches only the OAuth URLs its system property allows; the JVM trusts the test CA."""
    from tests.support.certs import PASSWORD
    return {"KAFKA_OPTS": f"-Dorg.apache.kafka.sasl.oauthbearer.allowed.urls={idp.jwks_url},{idp.token_url} "
                          f"-Djavax.net.ssl.trustStore={pki.truststore_p12} "
                          f"-Djavax.net.ssl.trustStorePassword={PASSWORD} -Djavax.net.ssl.trustStoreType=PKCS12"}
