"""SCRAM credentials in the controller: AlterUserScramCredentials decided as Kafka's
ScramControlManager decides it (results and records, table-tested), and the image
replaying, removing and snapshotting UserScramCredentialRecords."""
from __future__ import annotations

import pytest

from kraft_server.controller.image.metadata_image import MetadataImage
from kraft_server.controller.scram.control import alter_scram_credentials
from kraft_server.security.scram import make_credential, salted_password
from wire.messages import AlterUserScramCredentialsRequest, UserScramCredentialRecord
from wire.messages.alter_user_scram_credentials_request import ScramCredentialDeletion, ScramCredentialUpsertion
from wire.records import encode_metadata_record

SALT = b"salt-salt-salt"


def upsert(name, mechanism=1, iterations=4096, password="pw"):
    mech = {1: "SCRAM-SHA-256", 2: "SCRAM-SHA-512"}.get(mechanism, "SCRAM-SHA-256")
    return ScramCredentialUpsertion(name=name, mechanism=mechanism, iterations=iterations, salt=SALT,
                                    salted_password=salted_password(mech, password, SALT, 4096))


def image_with(name="alice", mechanism=1):
    image = MetadataImage()
    c = make_credential("SCRAM-SHA-256", "pw", SALT)
    image.replay(encode_metadata_record(UserScramCredentialRecord(
        name=name, mechanism=mechanism, salt=c.salt, stored_key=c.stored_key, server_key=c.server_key,
        iterations=c.iterations), 0))
    return image


@pytest.mark.parametrize("deletions, upsertions, expected", [
    ([], [upsert("bob")], [("bob", 0, None)]),
    ([], [upsert("")], [("", 93, "Username must not be empty")]),
    ([], [upsert("bob", mechanism=3)], [("bob", 33, "Unknown SCRAM mechanism")]),
    ([], [upsert("bob", iterations=100)], [("bob", 93, "Too few iterations")]),
    ([], [upsert("bob", iterations=20000)], [("bob", 93, "Too many iterations")]),
    ([ScramCredentialDeletion(name="carol", mechanism=1)], [],
     [("carol", 91, "Attempt to delete a user credential that does not exist")]),
    ([ScramCredentialDeletion(name="alice", mechanism=1)], [upsert("alice", 2)],
     [("alice", 92, "A user credential cannot be altered twice in the same request")]),
    ([ScramCredentialDeletion(name="alice", mechanism=1)], [upsert("bob")], [("alice", 0, None), ("bob", 0, None)]),
])
def test_alter_results(deletions, upsertions, expected):
    request = AlterUserScramCredentialsRequest(deletions=deletions, upsertions=upsertions)
    results, records = alter_scram_credentials(image_with().scram, request)
    assert [(r.user, r.error_code, r.error_message) for r in results] == expected
    assert len(records) == sum(1 for _, code, _ in expected if code == 0)


def test_upsertion_keys_match_a_password_derived_credential_and_the_image_follows():
    image = image_with()
    results, records = alter_scram_credentials(image.scram, AlterUserScramCredentialsRequest(
        deletions=[ScramCredentialDeletion(name="alice", mechanism=1)], upsertions=[upsert("bob", 2)]))
    for record, version in records:
        image.replay(encode_metadata_record(record, version))
    bob = image.scram.get("SCRAM-SHA-512", "bob")
    assert bob == make_credential("SCRAM-SHA-512", "pw", SALT)
    assert image.scram.get("SCRAM-SHA-256", "alice") is None
    again = MetadataImage()
    for value in image.snapshot_records():
        again.replay(value)
    assert again.content() == image.content() and again.scram.users() == [("bob", "SCRAM-SHA-512")]


def test_bootstrap_credentials_serve_until_the_log_commits_metadata():
    """KAFKA-15513: fresh voters look users up in their formatted bootstrap records until
    the image has committed metadata; from then on only the image counts."""
    from types import SimpleNamespace

    from kraft_server.security.credentials import scram_lookup
    from wire.messages import FeatureLevelRecord
    c = make_credential("SCRAM-SHA-512", "pw", SALT)
    formatted = [encode_metadata_record(FeatureLevelRecord(name="metadata.version", feature_level=27), 0),
                 encode_metadata_record(UserScramCredentialRecord(
                     name="admin", mechanism=2, salt=c.salt, stored_key=c.stored_key, server_key=c.server_key,
                     iterations=c.iterations), 0)]
    from kraft_server.controller.tokens.control import TokenSettings
    controller = SimpleNamespace(image=MetadataImage(), settings=SimpleNamespace(tokens=TokenSettings()))
    lookup = scram_lookup(controller, formatted)
    assert lookup("SCRAM-SHA-512", "admin") == c and lookup("SCRAM-SHA-256", "admin") is None
    controller.image.replay(formatted[0])  # committed metadata, without the credential
    assert lookup("SCRAM-SHA-512", "admin") is None
    controller.image.replay(formatted[1])
    assert lookup("SCRAM-SHA-512", "admin") == c
