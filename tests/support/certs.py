"""Certificates made by the tests (never committed keys): a CA, a server certificate
for 127.0.0.1/localhost, client certificates, an expired one and one from an
untrusted CA, written as PEM (key + chain in one file, as Kafka's PEM keystore)
and PKCS12, with a PEM and a PKCS12 trust store."""
from __future__ import annotations

import datetime as dt
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import NameOID

PASSWORD = "test-store-secret"


def _name(cn: str, ou: str | None = None) -> x509.Name:
    attrs = [x509.NameAttribute(NameOID.COUNTRY_NAME, "US"), x509.NameAttribute(NameOID.ORGANIZATION_NAME, "kraft")]
    if ou:
        attrs.append(x509.NameAttribute(NameOID.ORGANIZATIONAL_UNIT_NAME, ou))
    attrs.append(x509.NameAttribute(NameOID.COMMON_NAME, cn))
    return x509.Name(attrs)


def _cert(subject, key, issuer, issuer_key, *, ca=False, sans=(), days=(-1, 30)):
    now = dt.datetime.now(dt.timezone.utc)
    builder = (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer)
               .public_key(key.public_key()).serial_number(x509.random_serial_number())
               .not_valid_before(now + dt.timedelta(days=days[0]))
               .not_valid_after(now + dt.timedelta(days=days[1]))
               .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
    if ca:
        builder = builder.add_extension(x509.KeyUsage(
            digital_signature=True, key_cert_sign=True, crl_sign=True, content_commitment=False,
            key_encipherment=False, data_encipherment=False, key_agreement=False,
            encipher_only=False, decipher_only=False), critical=True)
        builder = builder.add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
    else:
        builder = builder.add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(
            issuer_key.public_key()), critical=False)
    if sans:
        builder = builder.add_extension(x509.SubjectAlternativeName(list(sans)), critical=False)
    return builder.sign(issuer_key, hashes.SHA256())


@dataclass
class Identity:
    key_pem: Path  # PEM keystore: key + certificate chain in one file
    p12: Path  # PKCS12 keystore, password PASSWORD
    subject: str  # as Kafka prints it (RFC 2253)


class Pki:
    """Everything under ``directory``."""

    def __init__(self, directory: Path):
        self.dir = directory
        directory.mkdir(parents=True, exist_ok=True)
        self.ca_key = ec.generate_private_key(ec.SECP256R1())
        self.ca = _cert(_name("Test CA"), self.ca_key, _name("Test CA"), self.ca_key, ca=True, days=(-1, 60))
        self.truststore_pem = directory / "truststore.pem"
        self.truststore_pem.write_bytes(self.ca.public_bytes(serialization.Encoding.PEM))
        self.truststore_p12 = directory / "truststore.p12"
        self.truststore_p12.write_bytes(pkcs12.serialize_java_truststore(
            [pkcs12.PKCS12Certificate(self.ca, b"ca")],
            serialization.BestAvailableEncryption(PASSWORD.encode())))
        sans = (x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1")))
        self.server = self.issue("server", "localhost", sans=sans, ou="Servers")
        self.client = self.issue("client", "alice", ou="Clients")
        self.expired = self.issue("expired", "old-client", ou="Clients", days=(-30, -1))
        rogue_key = ec.generate_private_key(ec.SECP256R1())
        self.untrusted = self.issue("untrusted", "mallory", ou="Clients", issuer=(_name("Rogue CA"), rogue_key))

    def issue(self, stem: str, cn: str, *, sans=(), ou=None, days=(-1, 30), issuer=None) -> Identity:
        key = ec.generate_private_key(ec.SECP256R1())
        issuer_name, issuer_key = issuer or (self.ca.subject, self.ca_key)
        cert = _cert(_name(cn, ou), key, issuer_name, issuer_key, sans=sans, days=days)
        key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                    serialization.NoEncryption())
        pem = self.dir / f"{stem}.pem"
        pem.write_bytes(key_pem + cert.public_bytes(serialization.Encoding.PEM)
                        + (self.ca.public_bytes(serialization.Encoding.PEM) if issuer is None else b""))
        pem.chmod(0o600)
        p12 = self.dir / f"{stem}.p12"
        p12.write_bytes(pkcs12.serialize_key_and_certificates(
            stem.encode(), key, cert, [self.ca] if issuer is None else None,
            serialization.BestAvailableEncryption(PASSWORD.encode())))
        subject = ",".join(f"{k}={v}" for k, v in (("CN", cn), ("OU", ou), ("O", "kraft"), ("C", "US")) if v)
        return Identity(pem, p12, subject)

    def pem_client_props(self, who: Identity | None = None) -> dict[str, str]:
        """Kafka client settings (PEM) trusting our CA, with ``who``'s certificate."""
        props = {"ssl.truststore.type": "PEM", "ssl.truststore.location": str(self.truststore_pem)}
        if who is not None:
            props.update({"ssl.keystore.type": "PEM", "ssl.keystore.location": str(who.key_pem)})
        return props

    def p12_client_props(self, who: Identity | None = None) -> dict[str, str]:
        """The same as PKCS12 stores."""
        props = {"ssl.truststore.type": "PKCS12", "ssl.truststore.location": str(self.truststore_p12),
                 "ssl.truststore.password": PASSWORD}
        if who is not None:
            props.update({"ssl.keystore.type": "PKCS12", "ssl.keystore.location": str(who.p12),
                          "ssl.keystore.password": PASSWORD})
        return props

    def server_keystore(self) -> tuple[str, ...]:
        """A node's properties for the server certificate as a PKCS12 keystore."""
        return ("ssl.keystore.type=PKCS12", f"ssl.keystore.location={self.server.p12}",
                f"ssl.keystore.password={PASSWORD}")
