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
- the token is replaced on a background thread when ``refresh_at`` says, as Kafka's
  ``ExpiringCredentialRefreshingLogin``: at ``sasl.login.refresh.window.factor`` (0.8)
  plus up to ``...window.jitter`` (0.05) of its life (from ``iat``), but no later
  than ``sasl.login.refresh.buffer.seconds`` (300) before ``exp`` and no sooner than
  ``sasl.login.refresh.min.period.seconds`` (60) from now; a token that expires
  within the sum of the two is renewed at that fraction of what is left. So a
  re-authentication (KIP-368, ``net/peers.py``) presents a fresh token.
"""
from __future__ import annotations

import base64
import json
import logging
import random
import ssl
import threading
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass, field

import jwt

log = logging.getLogger(__name__)



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


@dataclass(frozen=True)
class RefreshSettings:
    """``sasl.login.refresh.*``, Kafka's defaults."""
    window_factor: float = 0.8
    window_jitter: float = 0.05
    min_period_s: int = 60
    buffer_s: int = 300


def refresh_at(now_ms: int, start_ms: int, expires_ms: int, r: RefreshSettings, chance: float) -> int:
    """When to renew a token valid from ``start_ms`` to ``expires_ms`` (``chance`` in [0, 1)
    picks the jitter)."""
    fraction = r.window_factor + r.window_jitter * chance
    if now_ms + 1000 * (r.min_period_s + r.buffer_s) > expires_ms:  # too short for both margins
        return now_ms + int((expires_ms - now_ms) * fraction)
    proposed = start_ms + int((expires_ms - start_ms) * fraction)
    return max(min(proposed, expires_ms - 1000 * r.buffer_s), now_ms + 1000 * r.min_period_s)


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


def lifetime_ms(token: str) -> tuple[int | None, int]:
    """(``iat``, ``exp``) of ``token`` in ms, read, not verified (the server verifies)."""
    try:
        claims = jwt.decode(token, options={"verify_signature": False})
    except jwt.PyJWTError as exc:
        raise LoginFailed(f"The access token is not a JWT: {exc}") from None
    if not isinstance(claims.get("exp"), (int, float)):
        raise LoginFailed("The access token has no exp claim")
    issued = claims.get("iat")
    return (int(issued * 1000) if isinstance(issued, (int, float)) else None), int(claims["exp"] * 1000)


def expiry_ms(token: str) -> int:
    return lifetime_ms(token)[1]


class TokenSource:
    """The current token, renewed in the background."""

    def __init__(self, credentials: ClientCredentials, fetch=request_token,
                 refresh: RefreshSettings = RefreshSettings()):
        self.credentials, self._fetch, self.refresh = credentials, fetch, refresh
        self._token: str | None = None
        self._issued_ms: int | None = None
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
                issued, expires = lifetime_ms(token)
                break
            except Exception as exc:  # noqa: BLE001 - retried, then reported
                if waited + wait > c.backoff_max_ms / 1000:
                    raise LoginFailed(f"Could not obtain an access token from {c.url}: {exc}") from None
                time.sleep(wait)
                waited, wait = waited + wait, min(wait * 2, c.backoff_max_ms / 1000)
        self.fetches += 1
        self._token, self._issued_ms, self._expires_ms = token, issued, expires
        self._ready.set()
        log.info("OAUTHBEARER login: a token from %s, valid for %.0f s", c.url, expires / 1000 - time.time())

    def _run(self) -> None:
        while True:
            try:
                self.login()
                now = int(time.time() * 1000)
                when = refresh_at(now, self._issued_ms or now, self._expires_ms, self.refresh, random.random())
                log.debug("OAUTHBEARER login: the next token at %.1f s from now", (when - now) / 1000)
                time.sleep(max(when - now, 1000) / 1000)
            except LoginFailed as exc:
                log.warning("%s", exc)
                self._ready.set()
                time.sleep(max(self.credentials.backoff_max_ms / 1000, 1.0))
