"""The verification keys of a JWKS endpoint, cached and refreshed as Kafka's
``RefreshingHttpsJwks`` does:

- the keys are fetched when the listener is configured (a token that comes before
  that fetch ends is refused, never waited for on the event loop), then every
  ``sasl.oauthbearer.jwks.endpoint.refresh.ms`` on a background thread;
- a failed fetch is retried with backoff from ``...jwks.endpoint.retry.backoff.ms``
  doubling up to ``...jwks.endpoint.retry.backoff.max.ms``; if it still fails the
  cached keys stay;
- a token whose key id is not cached fails, and asks for a refresh at once (at most
  one per key id a minute, 16 key ids remembered), so the next token with that key id
  finds it (Kafka's ``maybeExpediteRefresh``).

``https:`` URLs are checked against the JAAS options' ``ssl.truststore.*`` (else the
system's roots); ``http:`` and ``file:`` URLs are read as they are.
"""
from __future__ import annotations

import json
import logging
import ssl
import threading
import time
import urllib.request
from collections import OrderedDict

import jwt

log = logging.getLogger(__name__)

MISSING_KID_MAX = 16
MISSING_KID_WAIT_S = 60.0
MISSING_KID_MAX_LENGTH = 1000


def fetch_keys(url: str, context: ssl.SSLContext | None, timeout: float = 10.0) -> list[jwt.PyJWK]:
    """The usable keys of a JWKS document (keys PyJWT cannot load are skipped)."""
    with urllib.request.urlopen(url, timeout=timeout, context=context if url.startswith("https:") else None) as r:
        document = json.loads(r.read())
    keys = []
    for entry in document.get("keys", []):
        try:
            keys.append(jwt.PyJWK(entry))
        except jwt.PyJWTError as exc:
            log.debug("JWKS %s: skipping key %s: %s", url, entry.get("kid"), exc)
    return keys


class RefreshingJwks:
    def __init__(self, url: str, context: ssl.SSLContext | None = None, refresh_ms: int = 3600000,
                 backoff_ms: int = 100, backoff_max_ms: int = 10000, fetch=fetch_keys):
        self.url, self._context, self._fetch = url, context, fetch
        self.refresh_s, self.backoff_s, self.backoff_max_s = refresh_ms / 1000, backoff_ms / 1000, backoff_max_ms / 1000
        self._keys: list[jwt.PyJWK] = []
        self._missing: OrderedDict[str, float] = OrderedDict()  # key id -> when it may ask again
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._fetched = threading.Event()
        self._thread: threading.Thread | None = None
        self._stopped = False

    def start(self) -> None:
        with self._lock:
            if self._thread is not None:
                return
            self._thread = threading.Thread(target=self._run, name=f"jwks-refresh {self.url}", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stopped = True
        self._wake.set()

    def keys(self, wait: float = 0.0) -> list[jwt.PyJWK]:
        """The cached keys (none before the first fetch ends). The event loop calls this
        without waiting: a token that comes before the first fetch is refused as one with
        an unknown key id; a caller off the loop may ``wait`` that long for the first fetch."""
        if not self._fetched.is_set():
            self.start()
            if wait:
                self._fetched.wait(wait)
        return self._keys

    def expedite(self, kid: str) -> bool:
        """A token named a key id that is not cached: refresh now, unless one was
        asked for this key id within the last minute."""
        if len(kid) > MISSING_KID_MAX_LENGTH:
            log.warning("Key ID %s (trimmed to first %d characters out of %d total) was too long to cache",
                        kid[:MISSING_KID_MAX_LENGTH], MISSING_KID_MAX_LENGTH, len(kid))
            return False
        now = time.monotonic()
        with self._lock:
            due = self._missing.get(kid)
            if due is not None and due > now:
                return False
            self._missing[kid] = now + MISSING_KID_WAIT_S
            self._missing.move_to_end(kid)
            while len(self._missing) > MISSING_KID_MAX:
                self._missing.popitem(last=False)
        self.start()
        self._wake.set()
        return True

    def refresh(self) -> bool:
        """One refresh with retries; True when the keys were replaced."""
        wait, waited = self.backoff_s, 0.0
        while True:
            try:
                keys = self._fetch(self.url, self._context)
                break
            except Exception as exc:  # noqa: BLE001 - any failure is retried, then logged
                if self._stopped or waited + wait > self.backoff_max_s:
                    log.warning("OAuth JWKS refresh of %s encountered an error; not updating local JWKS "
                                "cache: %s", self.url, exc)
                    return False
                time.sleep(wait)
                waited, wait = waited + wait, min(wait * 2, self.backoff_max_s)
        with self._lock:
            for key in keys:
                self._missing.pop(key.key_id or "", None)
            self._keys = keys
        log.info("OAuth JWKS refresh of %s complete (%d keys)", self.url, len(keys))
        return True

    def _run(self) -> None:
        while not self._stopped:
            self.refresh()
            self._fetched.set()
            self._wake.wait(self.refresh_s)
            self._wake.clear()
