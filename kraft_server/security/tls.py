"""``ssl.SSLContext`` objects for a listener (server side) and for outbound
connections (client side), from Kafka's ``ssl.*`` properties:

- ``ssl.client.auth`` none / requested / required (server side);
- ``ssl.enabled.protocols`` (TLSv1.2, TLSv1.3; default both);
- ``ssl.cipher.suites`` by their IANA names (``ciphers.py``); Python's ``ssl``
  cannot narrow TLS 1.3's suites, so TLS 1.3 names are accepted and all of
  TLS 1.3's stay enabled;
- ``ssl.endpoint.identification.algorithm`` (client side): ``https`` (the default)
  checks the server certificate's names against the host dialled; empty disables.
"""
from __future__ import annotations

import os
import ssl
import tempfile

from kraft_server.config import ConfigError

from .ciphers import openssl_cipher_list
from .keystores import load_keystore, load_truststore

_PROTOCOLS = {"TLSv1.2": ssl.TLSVersion.TLSv1_2, "TLSv1.3": ssl.TLSVersion.TLSv1_3}
_CLIENT_AUTH = {"none": ssl.CERT_NONE, "requested": ssl.CERT_OPTIONAL, "required": ssl.CERT_REQUIRED}


def _load_chain(context: ssl.SSLContext, chain_pem: bytes, key_pem: bytes) -> None:
    """``load_cert_chain`` reads files only: the PEM goes through a private
    temporary file that is removed at once."""
    directory = tempfile.mkdtemp(prefix="kraft-tls-")
    path = os.path.join(directory, "keystore.pem")
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(key_pem + b"\n" + chain_pem)
        context.load_cert_chain(path)
    finally:
        try:
            os.unlink(path)
        finally:
            os.rmdir(directory)


def _versions(context: ssl.SSLContext, get, prefix: str) -> None:
    names = [p.strip() for p in (get("ssl.enabled.protocols") or "TLSv1.2,TLSv1.3").split(",") if p.strip()]
    unknown = [n for n in names if n not in _PROTOCOLS]
    if unknown or not names:
        raise ConfigError(f"Invalid value {','.join(names)} for configuration {prefix}ssl.enabled.protocols: "
                          f"supported are TLSv1.2, TLSv1.3", f"{prefix}ssl.enabled.protocols")
    versions = sorted(_PROTOCOLS[n] for n in names)
    context.minimum_version, context.maximum_version = versions[0], versions[-1]


def _common(context: ssl.SSLContext, get, prefix: str, purpose) -> bool:
    """Protocols, suites, trust and the keystore; True when a keystore was loaded."""
    _versions(context, get, prefix)
    suites = get("ssl.cipher.suites")
    if suites:
        ciphers = openssl_cipher_list(suites, prefix)
        if ciphers:
            context.set_ciphers(ciphers)
    trusted = load_truststore(get, prefix)
    if trusted is None:
        context.load_default_certs(purpose)
    else:
        context.load_verify_locations(cadata=trusted)
    stores = load_keystore(get, prefix)
    if stores is not None:
        _load_chain(context, *stores)
    return stores is not None


def server_context(get, prefix: str) -> ssl.SSLContext:
    """The TLS context of a listener; ``get`` reads its listener-resolved properties."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    auth = (get("ssl.client.auth") or "none").strip().lower()
    if auth not in _CLIENT_AUTH:
        raise ConfigError(f"Invalid value {auth} for configuration {prefix}ssl.client.auth: "
                          f"String must be one of: required, requested, none", f"{prefix}ssl.client.auth")
    if not _common(context, get, prefix, ssl.Purpose.CLIENT_AUTH):
        raise ConfigError(f"{prefix}ssl.keystore.location (or ssl.keystore.key and "
                          f"ssl.keystore.certificate.chain) must be set on a TLS listener",
                          f"{prefix}ssl.keystore.location")
    context.verify_mode = _CLIENT_AUTH[auth]
    return context


def client_context(get, prefix: str) -> tuple[ssl.SSLContext, bool]:
    """The TLS context for dialling peers and whether the host name is checked."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    algorithm = get("ssl.endpoint.identification.algorithm")
    check = (algorithm if algorithm is not None else "https").strip().lower() == "https"
    context.check_hostname = check
    context.verify_mode = ssl.CERT_REQUIRED
    _common(context, get, prefix, ssl.Purpose.SERVER_AUTH)
    return context, check
