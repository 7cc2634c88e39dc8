"""The pieces of issue 28's security configuration, without sockets: principal
mapping rules (Kafka's documented examples), the RFC 2253 subject, JAAS options,
key and trust stores (PEM file, inline PEM, encrypted key, PKCS12; JKS refused
with the keytool conversion), cipher suite names and per-listener prefixes."""
from __future__ import annotations

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from kraft_server.config import ConfigError, KafkaConfig
from kraft_server.security.ciphers import openssl_cipher_list
from kraft_server.security.jaas import JaasError, parse_jaas
from kraft_server.security.keystores import load_keystore, load_truststore
from kraft_server.security.listeners import controller_client_security, getter, listener_security
from kraft_server.security.principal import NoMatchingRule, PrincipalMapper, distinguished_name
from tests.support.certs import PASSWORD, Pki


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    return Pki(tmp_path_factory.mktemp("pki"))


@pytest.mark.parametrize("rules, dn, name", [
    ("DEFAULT", "CN=Duke,OU=JavaSoft,O=Sun Microsystems,C=US", "CN=Duke,OU=JavaSoft,O=Sun Microsystems,C=US"),
    (r"RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/,DEFAULT", "CN=kafka1,OU=ServiceUsers,O=Org,C=US", "kafka1"),
    (r"RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L", "CN=Duke,OU=ServiceUsers,O=Org,C=US", "duke"),
    (r"RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/U",
     "CN=duke,OU=JavaSoft,O=Sun Microsystems,L=Santa Clara,ST=CA,C=US", "DUKE@JAVASOFT"),
    (r"RULE:^cn=(.*?),ou=(.*?),dc=(.*?),dc=(.*?)$/$1@$2/L, DEFAULT", "cn=X,ou=Y,dc=z,dc=w", "x@y"),
    (r"RULE:^CN=(.*?),OU=(.*?)$/$1\/$2/", "CN=a,OU=b", "a/b"),
])
def test_principal_mapping_rules(rules, dn, name):
    assert PrincipalMapper(rules).name(dn) == name


def test_a_dn_no_rule_matches_is_refused():
    with pytest.raises(NoMatchingRule, match="No rules apply to CN=x"):
        PrincipalMapper(r"RULE:^CN=(.*?),OU=Only$/$1/").name("CN=x")


def test_subject_in_rfc2253_form_as_java_prints_it():
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([
        x509.NameAttribute(NameOID.COUNTRY_NAME, "US"), x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Acme, Inc"),
        x509.NameAttribute(NameOID.EMAIL_ADDRESS, "a@b.c"), x509.NameAttribute(NameOID.COMMON_NAME, "alice")])
    import datetime as dt
    now = dt.datetime.now(dt.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(1).not_valid_before(now).not_valid_after(now + dt.timedelta(days=1))
            .sign(key, hashes.SHA256()))
    dn = distinguished_name(cert.public_bytes(serialization.Encoding.DER))
    # Java: keywords for CN/O/C, the e-mail attribute as OID=#DER (IA5String 0x16), "," escaped.
    assert dn == "CN=alice,1.2.840.113549.1.9.1=#16056140622e63,O=Acme\\, Inc,C=US"


def test_jaas_options_and_errors():
    module = parse_jaas('org.apache.kafka.common.security.plain.PlainLoginModule required '
                        'username="admin" password="admin-secret" user_admin="admin-secret" user_alice="a;b";')
    assert module.flag == "required"
    assert module.options == {"username": "admin", "password": "admin-secret", "user_admin": "admin-secret",
                              "user_alice": "a;b"}
    with pytest.raises(JaasError, match="not terminated"):
        parse_jaas("x.Module required a=b")
    with pytest.raises(JaasError, match="2 login modules"):
        parse_jaas("a.A required; b.B required;")


def test_keystores_pem_inline_encrypted_pkcs12_and_jks(pki, tmp_path):
    chain, key = load_keystore({"ssl.keystore.type": "PEM", "ssl.keystore.location": str(pki.server.key_pem)}.get, "")
    assert chain.count(b"BEGIN CERTIFICATE") == 2 and b"PRIVATE KEY" in key
    inline = {"ssl.keystore.type": "PEM", "ssl.keystore.certificate.chain": chain.decode(),
              "ssl.keystore.key": _encrypted(key, "kp"), "ssl.key.password": "kp"}
    assert load_keystore(inline.get, "")[1] == key
    p12 = {"ssl.keystore.type": "PKCS12", "ssl.keystore.location": str(pki.server.p12),
           "ssl.keystore.password": PASSWORD}
    assert load_keystore(p12.get, "")[0].count(b"BEGIN CERTIFICATE") == 2
    with pytest.raises(ConfigError, match="wrong ssl.keystore.password"):
        load_keystore(dict(p12, **{"ssl.keystore.password": "nope"}).get, "")
    jks = {"ssl.keystore.location": "/etc/kafka/server.jks"}  # JKS is Kafka's default type
    with pytest.raises(ConfigError) as err:
        load_keystore(jks.get, "listener.name.controller.")
    assert "keytool -importkeystore -srckeystore /etc/kafka/server.jks" in str(err.value)
    assert "-deststoretype PKCS12" in str(err.value) and "\n" not in str(err.value)
    trusted = load_truststore({"ssl.truststore.type": "PKCS12", "ssl.truststore.location": str(pki.truststore_p12),
                               "ssl.truststore.password": PASSWORD}.get, "")
    assert trusted == pki.truststore_pem.read_text()


def _encrypted(key_pem: bytes, password: str) -> str:
    key = serialization.load_pem_private_key(key_pem, None)
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.BestAvailableEncryption(password.encode())).decode()


def test_cipher_suites_by_their_iana_names():
    assert openssl_cipher_list("TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,TLS_AES_256_GCM_SHA384") == \
        "ECDHE-ECDSA-AES256-GCM-SHA384"
    with pytest.raises(ConfigError, match="Unsupported CipherSuite: TLS_NOT_A_SUITE"):
        openssl_cipher_list("TLS_NOT_A_SUITE")


def _config(pki, **extra):
    props = {"node.id": "1", "process.roles": "controller", "controller.listener.names": "CONTROLLER",
             "listeners": "CONTROLLER://127.0.0.1:9093,CLIENT://127.0.0.1:9094",
             "listener.security.protocol.map": "CONTROLLER:SSL,CLIENT:SASL_SSL",
             "controller.quorum.bootstrap.servers": "127.0.0.1:9093", "log.dirs": "/tmp/x",
             "ssl.keystore.type": "PEM", "ssl.keystore.location": str(pki.server.key_pem),
             "ssl.truststore.type": "PEM", "ssl.truststore.location": str(pki.truststore_pem)}
    props.update(extra)
    return KafkaConfig.from_props(props)


def test_listener_prefixes_fall_back_to_the_plain_property(pki):
    config = _config(pki, **{"listener.name.client.ssl.client.auth": "required", "ssl.client.auth": "requested",
                             "listener.name.client.sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-512",
                             "listener.name.client.plain.sasl.jaas.config":
                                 'org.apache.kafka.common.security.plain.PlainLoginModule required user_bob="b";'})
    get = getter(config.raw, "CLIENT")
    assert get("ssl.client.auth") == "required" and getter(config.raw, "CONTROLLER")("ssl.client.auth") == "requested"
    client = listener_security(config, "CLIENT")
    assert client.sasl.mechanisms == ["PLAIN", "SCRAM-SHA-512"] and client.sasl.plain_users == {"bob": "b"}
    import ssl
    assert client.ssl_context.verify_mode == ssl.CERT_REQUIRED
    assert listener_security(config, "CONTROLLER").ssl_context.verify_mode == ssl.CERT_OPTIONAL
    outbound = controller_client_security(config)
    assert outbound.protocol == "SSL" and outbound.check_hostname and outbound.sasl is None
    off = controller_client_security(_config(pki, **{"ssl.endpoint.identification.algorithm": ""}))
    assert not off.check_hostname


def test_sasl_listener_without_a_supported_mechanism_fails_start_up(pki):
    config = _config(pki)  # sasl.enabled.mechanisms defaults to GSSAPI, not served here
    with pytest.raises(ConfigError, match="GSSAPI is not supported"):
        listener_security(config, "CLIENT")
