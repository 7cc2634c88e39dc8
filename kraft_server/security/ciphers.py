"""``ssl.cipher.suites`` names (IANA/JSSE, as Kafka takes them) to OpenSSL's.

TLS 1.2 suites are spelled differently by the two (``TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256``
is OpenSSL's ``ECDHE-RSA-AES128-GCM-SHA256``); TLS 1.3 suites keep their IANA name.
A name OpenSSL does not offer fails start-up, as Java's ``Unsupported CipherSuite``.
"""
from __future__ import annotations

import ssl

from kraft_server.config import ConfigError

_KEY_EXCHANGE = {"RSA": "", "ECDHE_RSA": "ECDHE-RSA", "ECDHE_ECDSA": "ECDHE-ECDSA",
                 "DHE_RSA": "DHE-RSA", "DHE_DSS": "DHE-DSS"}
_ENCRYPTION = {"AES_128_GCM": "AES128-GCM", "AES_256_GCM": "AES256-GCM", "AES_128_CBC": "AES128",
               "AES_256_CBC": "AES256", "CHACHA20_POLY1305": "CHACHA20-POLY1305",
               "AES_128_CCM": "AES128-CCM", "AES_256_CCM": "AES256-CCM"}


def _openssl_name(iana: str) -> str | None:
    if not iana.startswith("TLS_") or "_WITH_" not in iana:
        return None
    kx, _, rest = iana[4:].partition("_WITH_")
    for enc, name in _ENCRYPTION.items():
        if rest.startswith(enc):
            mac = rest[len(enc):].lstrip("_")
            if kx not in _KEY_EXCHANGE:
                return None
            parts = [p for p in (_KEY_EXCHANGE[kx], name) if p]
            if mac and not name.startswith("CHACHA20"):
                parts.append(mac)
            return "-".join(parts)
    return None


def openssl_cipher_list(value: str, prefix: str = "") -> str:
    """The ``set_ciphers`` string for the TLS 1.2 suites named (empty: only TLS 1.3 ones)."""
    offered = {c["name"] for c in ssl.create_default_context().get_ciphers()}
    offered |= {c["name"] for c in _all_ciphers()}
    names = []
    for suite in (s.strip() for s in value.split(",") if s.strip()):
        if suite in offered and suite.startswith("TLS_") and "_WITH_" not in suite:
            continue  # a TLS 1.3 suite: always on (Python cannot narrow them)
        name = _openssl_name(suite)
        if name is None or name not in offered:
            raise ConfigError(f"Invalid value {value} for configuration {prefix}ssl.cipher.suites: "
                              f"Unsupported CipherSuite: {suite}", f"{prefix}ssl.cipher.suites")
        names.append(name)
    return ":".join(names)


def _all_ciphers() -> list[dict]:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.set_ciphers("ALL")
    return context.get_ciphers()
