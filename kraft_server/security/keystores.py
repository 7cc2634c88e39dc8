"""Key and trust stores as Kafka's ``DefaultSslEngineFactory`` reads them, turned
into the PEM text Python's ``ssl`` module loads.

- ``ssl.keystore.type=PEM``: ``ssl.keystore.location`` is one file holding the
  private key and the certificate chain, or the key and chain are inline
  (``ssl.keystore.key``, ``ssl.keystore.certificate.chain``); an encrypted key is
  opened with ``ssl.key.password``.
- ``PKCS12`` (``ssl.keystore.password``): read with the ``cryptography`` package.
- ``JKS`` is refused at start-up with the ``keytool`` command that converts it.
- Trust stores likewise: PEM (``ssl.truststore.location`` or inline
  ``ssl.truststore.certificates``), PKCS12, JKS refused; none at all means the
  system's default roots (Kafka: the JVM's).

Secrets never appear in an error message: only property names and paths.
"""
from __future__ import annotations

from pathlib import Path

from cryptography.hazmat.primitives.serialization import (
    Encoding, NoEncryption, PrivateFormat, load_pem_private_key, pkcs12)

from kraft_server.config import ConfigError


def _jks_error(prefix: str, kind: str, location: str | None) -> ConfigError:
    listener = f" (listener {prefix.split('.')[2].upper()})" if prefix.count(".") >= 3 else ""
    return ConfigError(
        f"ssl.{kind}.type JKS is not supported{listener}: convert it with keytool -importkeystore "
        f"-srckeystore {location or '<store.jks>'} -destkeystore <store.p12> -deststoretype PKCS12 "
        f"and set ssl.{kind}.type=PKCS12", f"ssl.{kind}.type")


def _read(path: str, prop: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise ConfigError(f"Cannot read {prop} {path}: {exc.strerror or exc}", prop) from None


def _store_bytes(location: str | None, kind: str, prefix: str, store: str) -> tuple[bytes, str] | None:
    """The store file's bytes and its property name (None: no file configured)."""
    if not location:
        return None
    if kind == "JKS":
        raise _jks_error(prefix, store, location)
    prop = f"{prefix}ssl.{store}.location"
    return _read(location, prop), prop


def _pem_blocks(text: str, kind: str) -> list[str]:
    """The ``-----BEGIN <kind>-----`` blocks of ``text`` (kind: CERTIFICATE, or a key)."""
    out, block = [], None
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("-----BEGIN ") and kind in line:
            block = [line]
        elif block is not None:
            block.append(line)
            if line.startswith("-----END "):
                out.append("\n".join(block) + "\n")
                block = None
    return out


def _unencrypted_key_pem(key_pem: str, password: str | None, prop: str) -> bytes:
    try:
        key = load_pem_private_key(key_pem.encode(), password.encode() if password else None)
    except (ValueError, TypeError) as exc:
        raise ConfigError(f"Invalid PEM private key in {prop}: {exc}", prop) from None
    return key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption())


def load_keystore(get, prefix: str) -> tuple[bytes, bytes] | None:
    """(certificate chain PEM, unencrypted private key PEM), or None without a keystore.
    ``get(name)`` reads a (listener-resolved) property."""
    kind = (get("ssl.keystore.type") or "JKS").upper()
    location = get("ssl.keystore.location")
    chain, key = get("ssl.keystore.certificate.chain"), get("ssl.keystore.key")
    if chain or key:  # inline PEM (Kafka requires ssl.keystore.type=PEM for these)
        if kind != "PEM":
            raise ConfigError(f"{prefix}ssl.keystore.certificate.chain and ssl.keystore.key need "
                              f"ssl.keystore.type=PEM", f"{prefix}ssl.keystore.type")
        if not chain or not key:
            raise ConfigError(f"{prefix}ssl.keystore.key and ssl.keystore.certificate.chain must both be set",
                              f"{prefix}ssl.keystore.key")
        return chain.encode(), _unencrypted_key_pem(key, get("ssl.key.password"), f"{prefix}ssl.keystore.key")
    stored = _store_bytes(location, kind, prefix, "keystore")
    if stored is None:
        return None
    data, prop = stored
    if kind == "PEM":
        text = data.decode("utf-8", "replace")
        certs, keys = _pem_blocks(text, "CERTIFICATE"), _pem_blocks(text, "PRIVATE KEY")
        if not certs or len(keys) != 1:
            raise ConfigError(f"{prop} {location}: a PEM keystore holds one private key and its "
                              f"certificate chain", prop)
        return "".join(certs).encode(), _unencrypted_key_pem(keys[0], get("ssl.key.password"), prop)
    if kind == "PKCS12":
        store = _pkcs12(data, get, "keystore", prop, location)
        if store.key is None or store.cert is None:
            raise ConfigError(f"{prop} {location} holds no private key and certificate", prop)
        chain = [store.cert.certificate, *(c.certificate for c in store.additional_certs)]
        return (b"".join(c.public_bytes(Encoding.PEM) for c in chain),
                store.key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption()))
    raise _type_error(prefix, "keystore", kind)


def _pkcs12(data: bytes, get, kind: str, prop: str, location: str):
    """A PKCS12 key or trust store opened with ``ssl.<kind>.password``."""
    password = get("ssl.keystore.password") if kind == "keystore" else get("ssl.truststore.password")
    try:
        return pkcs12.load_pkcs12(data, password.encode() if password else None)
    except ValueError as exc:
        raise ConfigError(f"Cannot open {prop} {location} as PKCS12 (wrong ssl.{kind}.password?): "
                          f"{exc}", prop) from None


def _type_error(prefix: str, kind: str, value: str) -> ConfigError:
    return ConfigError(f"Invalid value {value} for configuration {prefix}ssl.{kind}.type: "
                       f"one of PEM, PKCS12, JKS", f"{prefix}ssl.{kind}.type")


def load_truststore(get, prefix: str) -> str | None:
    """The trusted certificates as PEM text, or None (the system's default roots)."""
    kind = (get("ssl.truststore.type") or "JKS").upper()
    inline = get("ssl.truststore.certificates")
    if inline:
        return inline
    location = get("ssl.truststore.location")
    stored = _store_bytes(location, kind, prefix, "truststore")
    if stored is None:
        return None
    data, prop = stored
    if kind == "PEM":
        certs = _pem_blocks(data.decode("utf-8", "replace"), "CERTIFICATE")
        if not certs:
            raise ConfigError(f"{prop} {location} holds no PEM certificate", prop)
        return "".join(certs)
    if kind == "PKCS12":
        store = _pkcs12(data, get, "truststore", prop, location)
        certs = [c.certificate for c in store.additional_certs]
        if store.cert is not None:
            certs.append(store.cert.certificate)
        if not certs:
            raise ConfigError(f"{prop} {location} holds no certificate", prop)
        return "".join(c.public_bytes(Encoding.PEM).decode() for c in certs)
    raise _type_error(prefix, "truststore", kind)
