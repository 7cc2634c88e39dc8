"""A tiny Kafka client over TLS and/or SASL with our codecs, for polling a secured
node and for the refusal cases (real clients prove interoperability; this one lets a
test hold a connection half-way: a handshake left unfinished, a request before
authentication)."""
from __future__ import annotations

import socket
import ssl
import struct
import time

from tools.blocking_client import BlockingConnection


class SecureSession(BlockingConnection):
    def __init__(self, port: int, context: ssl.SSLContext | None = None, timeout: float = 10.0,
                 host: str = "127.0.0.1"):
        super().__init__(host, port, timeout=timeout, context=context, client_id="secure-test")

    def raw_token(self, token: bytes) -> bytes:
        """A v0 SASL token exchange (no Kafka header)."""
        self.sock.sendall(struct.pack(">i", len(token)) + token)
        return bytes(self.read_frame())

    def sasl(self, mechanism: str, username: str, password: str, version: int = 1) -> None:
        """SaslHandshake + SaslAuthenticate with our client classes; raises on failure."""
        from kraft_server.net.sasl_client import SaslClient
        from kraft_server.security.sasl_config import ClientSasl
        client = SaslClient(ClientSasl(mechanism, username, password), {17: (0, 1), 36: (0, 2)})
        step = client.first_request()
        while step is not None:
            _, v, body = step
            step = client.on_response(self.request(body, v))

    def closed_within(self, seconds: float) -> bool:
        """True when the server closes the connection within ``seconds``."""
        deadline = time.monotonic() + seconds
        self.sock.settimeout(0.2)
        while time.monotonic() < deadline:
            try:
                if self.sock.recv(65536) == b"":
                    return True
            except socket.timeout:
                continue
            except (ConnectionResetError, ssl.SSLError, OSError):
                return True
        return False


def client_context(pki, who=None) -> ssl.SSLContext:
    """A TLS client context trusting the test CA, showing ``who``'s certificate."""
    context = ssl.create_default_context(cafile=str(pki.truststore_pem))
    if who is not None:
        context.load_cert_chain(str(who.key_pem))
    return context


def describe_quorum_body():
    from wire.messages import DescribeQuorumRequest
    from wire.messages.describe_quorum_request import PartitionData, TopicData
    return DescribeQuorumRequest(topics=[TopicData(topic_name="__cluster_metadata",
                                                   partitions=[PartitionData(partition_index=0)])])


def quorum_partition(port: int, context, sasl: tuple[str, str, str] | None = None):
    """DescribeQuorum v2 over TLS (and SASL: ``(mechanism, user, password)``): the
    partition's answer."""
    session = SecureSession(port, context, timeout=2.0)
    try:
        if sasl is not None:
            session.sasl(*sasl)
        return session.request(describe_quorum_body(), 2).topics[0].partitions[0]
    finally:
        session.close()


def sasl_ssl_controller(pki, mechanism: str, jaas: str, enabled: str | None = None) -> tuple[str, ...]:
    """Our node's properties for a SASL_SSL controller listener (the test CA's PKCS12
    server keystore) and a PLAINTEXT client listener, ``mechanism`` between controllers
    with the ``jaas`` entry for it."""
    from tests.support.certs import PASSWORD
    return ("listener.security.protocol.map=CONTROLLER:SASL_SSL,CLIENT:PLAINTEXT",
            "ssl.keystore.type=PKCS12", f"ssl.keystore.location={pki.server.p12}",
            f"ssl.keystore.password={PASSWORD}", f"sasl.enabled.mechanisms={enabled or mechanism}",
            f"sasl.mechanism.controller.protocol={mechanism}",
            f"listener.name.controller.{mechanism.lower()}.sasl.jaas.config={jaas}")


def sasl_command_config(path, pki, mechanism: str, user: str, password: str):
    """A ``--command-config`` file at ``path`` for a SASL_SSL client of the test CA."""
    module = ("org.apache.kafka.common.security.plain.PlainLoginModule" if mechanism == "PLAIN"
              else "org.apache.kafka.common.security.scram.ScramLoginModule")
    path.write_text("security.protocol=SASL_SSL\n" f"sasl.mechanism={mechanism}\n"
                    f'sasl.jaas.config={module} required username="{user}" password="{password}";\n'
                    + "".join(f"{k}={v}\n" for k, v in pki.pem_client_props().items()))
    return path


def scram_reader_node(root, pki, user: str, password: str, *extra: str, mechanism: str = "SCRAM-SHA-512",
                      others: dict[str, str] | None = None):
    """Our node (not started) whose client listener is SASL_SSL with ``mechanism``
    (the test CA's server certificate), ``user`` (and ``others``, name -> password)
    formatted into its log with ``kraft-storage format --add-scram``, a NoOp every
    200 ms; ``extra`` properties."""
    import uuid

    from tests.support.kraft_nodes import OurNode, storage_format
    node = OurNode(root, extra=("listener.security.protocol.map=CONTROLLER:PLAINTEXT,CLIENT:SASL_SSL",
                                *pki.server_keystore(), f"sasl.enabled.mechanisms={mechanism}",
                                "metadata.max.idle.interval.ms=200", *extra))
    users = {user: password, **(others or {})}
    storage_format(node.config, uuid.uuid4().hex[:22], "--standalone",
                   *(a for u, p in users.items() for a in ("--add-scram", f"{mechanism}=[name={u},password={p}]")))
    return node
