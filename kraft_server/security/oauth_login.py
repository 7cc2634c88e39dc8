"""This node's OAUTHBEARER login (Kafka's ``OAuthBearerLoginModule`` with its
``OAuthBearerLoginCallbackHandler``): an access token from the OAuth client
credentials grant (RFC 6749 4.4) at ``sasl.oauthbearer.token.endpoint.url``.

- the client id, secret and scope come from ``sasl.oauthbearer.client.credentials.
  client.id``/``...client.secret``/``sasl.oauthbearer.scope``, else from the JAAS
  options ``clientId``, ``clientSecret`` and ``scope``, as Kafka's ``ConfigOrJaas``;
- the request: a form POST ``grant_type=client_credentials[&scope=...]`` with HTTP
  Basic ``clientId:clientSecret``; the answer's ``access_token`` is the JWT, whose
  ``exp`` (read, not verified: the server verifies it) gives its lifetime;
- a failed request is retried with ``sasl.login.retry.backoff.ms`` doubling up to
  ``sasl.login.retry.backoff.max.ms``;
- the token is replaced on a background thread once 80% of its lifetime has passed
  (Kafka's default ``sasl.login.refresh.window.factor``), so a re-authentication
  (KIP-368, ``net/peers.py``) presents a fresh one.
"""
from __future__ import annotations

import base64
import json
import logging
import ssl
import threading
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass, field

import jwt

log = logging.getLogger(__name__)

WINDOW_FACTOR = 0.8  # sasl.login.refresh.window.factor, Kafka's default


class LoginFailed(Exception):
    pass


@dataclass
class ClientCredentials:
    url: str
    client_id: str
    client_secret: str = field(repr=False)
    scope: str | None = None
    context: ssl.SSLContext | None = None
    backoff_ms: int = 100
    backoff_max_ms: int = 10000
    timeout_s: float = 10.0


def request_token(c: ClientCredentials) -> str:
    """One client-credentials request; the access token."""
    form = {"grant_type": "client_credentials"}
    if c.scope:
        form["scope"] = c.scope
    basic = base64.b64encode(f"{c.client_id}:{c.client_secret}".encode()).decode()
    request = urllib.request.Request(c.url, data=urllib.parse.urlencode(form).encode(), method="POST", headers={
        "Authorization": f"Basic {basic}", "Content-Type": "application/x-www-form-urlencoded",
        "Accept": "application/json", "Cache-Control": "no-cache"})
    context = c.context if c.url.startswith("https:") else None
    with urllib.request.urlopen(request, timeout=c.timeout_s, context=context) as answer:
        body = json.loads(answer.read())
    token = body.get("access_token") if isinstance(body, dict) else None
    if not token:
        raise LoginFailed(f"The token endpoint response did not contain an access_token value: {body}")
    return token


def expiry_ms(token: str) -> int:
    try:
        claims = jwt.decode(token, options={"verify_signature": False})
    except jwt.PyJWTError as exc:
        raise LoginFailed(f"The access token is not a JWT: {exc}") from None
    if not isinstance(claims.get("exp"), (int, float)):
        raise LoginFailed("The access token has no exp claim")
    return int(claims["exp"] * 1000)


class TokenSource:
    """The current token, renewed in the background."""

    def __init__(self, credentials: ClientCredentials, fetch=request_token):
        self.credentials, self._fetch = credentials, fetch
        self._token: str | None = None
        self._expires_ms = 0
        self._lock = threading.Lock()
        self._ready = threading.Event()
        self._thread: threading.Thread | None = None
        self.fetches = 0

    def start(self) -> None:
        """Log in on a background thread, which then renews the token."""
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="oauth-login", daemon=True)
                self._thread.start()

    def token(self, wait: float = 0.0) -> str:
        """A valid token, or LoginFailed. The event loop asks without waiting (before the
        first login ends the connection attempt fails and is retried with backoff); a
        caller off the loop may ``wait`` that long for the first token."""
        self.start()
        if wait:
            self._ready.wait(wait)
        token = self._token
        if token is None or self._expires_ms <= time.time() * 1000:
            raise LoginFailed(f"no valid access token from {self.credentials.url}")
        return token

    def login(self) -> None:
        """One token, with retries; raises LoginFailed."""
        c = self.credentials
        wait, waited = c.backoff_ms / 1000, 0.0
        while True:
            try:
                token = self._fetch(c)
                expires = expiry_ms(token)
                break
            except Exception as exc:  # noqa: BLE001 - retried, then reported
                if waited + wait > c.backoff_max_ms / 1000:
                    raise LoginFailed(f"Could not obtain an access token from {c.url}: {exc}") from None
                time.sleep(wait)
                waited, wait = waited + wait, min(wait * 2, c.backoff_max_ms / 1000)
        self.fetches += 1
        self._token, self._expires_ms = token, expires
        self._ready.set()
        log.info("OAUTHBEARER login: a token from %s, valid for %.0f s", c.url, expires / 1000 - time.time())

    def _run(self) -> None:
        while True:
            try:
                self.login()
                left = self._expires_ms / 1000 - time.time()
                time.sleep(max(left * WINDOW_FACTOR, 1.0))
            except LoginFailed as exc:
                log.warning("%s", exc)
                self._ready.set()
                time.sleep(max(self.credentials.backoff_max_ms / 1000, 1.0))
