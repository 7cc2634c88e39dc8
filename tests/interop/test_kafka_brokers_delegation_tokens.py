"""Delegation tokens through an Apache Kafka broker (the default release), slow; and
straight to a controller's PLAINTEXT listener (refused as by Kafka's, fast).

One session of ``kafka-delegation-tokens`` through a broker's SASL_PLAINTEXT
listener (SCRAM-SHA-256 users made with ``kafka-configs`` through the same broker)
runs first on Kafka's own controller, then on ours. The broker forwards Create, Renew
and Expire to the controller in an Envelope; it answers Describe from the
DelegationTokenRecords it replayed. Both sessions print the same, token ids, HMACs
and dates aside. That covers create, describe, renewal by a renewer and expiry by the
owner, and every refusal with its error: OWNER_MISMATCH, NOT_FOUND, EXPIRED,
INVALID_PRINCIPAL_TYPE, and REQUEST_NOT_ALLOWED for a token login and on PLAINTEXT.

On ours, also:

- the broker's token login succeeds with the HMAC our controller made, since it
  computes the same HMAC from our records;
- a token login on our own SASL listener (``tokenauth=true``) is the token's owner:
  ``kafka-metadata-quorum`` is served, and a wrong HMAC is refused;
- ``--describe`` at our node prints the broker's rows (our node answers
  DescribeDelegationToken from the same records);
- the tokens are in our log as Kafka's ``kafka-dump-log`` decodes them, and they are
  the records Kafka's controller wrote (token ids and times aside).
"""
from __future__ import annotations

import base64
import re
import uuid
from pathlib import Path

import pytest

from tests.support import metadata_dump as md
from tests.support.controller_scenario import dump_segments
from tests.support.jdk import need_jdk
from tests.support.kafka_then_ours import kafka_then_ours
from tests.support.kafka_brokers import BROKER_ID_BASE, KafkaBroker
from tests.support.kraft_nodes import OurNode, wait_for
from tools.kafka_dist.controller import KafkaController, free_port, run_tool

pytestmark = pytest.mark.java  # the session on both sides is slow (about 2-3 minutes)
SECRET = "the-token-secret"
SCRAM = "org.apache.kafka.common.security.scram.ScramLoginModule"
USERS = {"alice": "alice-secret", "bob": "bob-secret", "carol": "carol-secret"}
ERROR = re.compile(r"(\w+(?:Exception|Error))")
# kafka-delegation-tokens' class, through kafka-run-class: a wrapper script of its own
# would change the prepared distribution's fingerprint (tools/kafka_dist/recipe.py).
TOOL = ("kafka-run-class", "org.apache.kafka.tools.DelegationTokenCommand")


def _client(path: Path, user: str, password: str, token: bool = False, protocol: str = "SASL_PLAINTEXT") -> Path:
    extra = ' tokenauth="true"' if token else ""
    text = f"security.protocol={protocol}\n"
    if protocol.startswith("SASL"):
        text += (f"sasl.mechanism=SCRAM-SHA-256\n"
                 f'sasl.jaas.config={SCRAM} required username="{user}" password="{password}"{extra};\n')
    path.write_text(text)
    return path


class Session:
    """``kafka-delegation-tokens`` through one broker, as one user or another."""

    def __init__(self, work: Path, sasl: str, plaintext: str):
        self.work, self.sasl, self.plaintext = work, sasl, plaintext
        self.configs = {u: _client(work / f"{u}.properties", u, p) for u, p in USERS.items()}
        self.configs["plaintext"] = _client(work / "plaintext.properties", "", "", protocol="PLAINTEXT")

    def token_login(self, token_id: str, mac: str) -> str:
        self.configs["token"] = _client(self.work / "token.properties", token_id, mac, token=True)
        return "token"

    def run(self, who: str, *args: str):
        bootstrap = self.plaintext if who == "plaintext" else self.sasl
        proc = run_tool(*TOOL, "--bootstrap-server", bootstrap,
                        "--command-config", str(self.configs[who]), *args, check=False, timeout=90)
        return proc.stdout + proc.stderr


def _created(out: str) -> tuple[str, str]:
    """(token id, HMAC) from ``--create``'s table."""
    token_id = re.search(r"Created delegation token with tokenId : (\S+)", out).group(1)
    row = next(line.split() for line in out.splitlines() if line.startswith(token_id))
    return token_id, row[1]


def _outcome(out: str) -> str:
    """What a step printed, without what differs between runs."""
    if "Completed renew operation" in out:
        return "renewed"
    if "Completed expire operation" in out:
        return "expired"
    if "Created delegation token" in out:
        row = next(line.split() for line in out.splitlines() if line.startswith(_created(out)[0]))
        return "created owner=%s requester=%s renewers=%s" % (row[2], row[3], row[4])
    total = re.search(r"Total number of tokens : (\d+)", out)
    if total:
        owners = sorted(re.findall(r"^\S+\s+\S+\s+(User:\S+)\s+(User:\S+)", out, flags=re.M))
        return f"described {total.group(1)}: {owners}"
    errors = ERROR.findall(out)
    return "error " + (next((e for e in errors if "DelegationToken" in e or "Principal" in e
                             or "Authentication" in e or "UnsupportedByAuthentication" in e), None)
                       or ",".join(dict.fromkeys(errors)) or out[-300:])


def _session(s: Session) -> tuple[list[tuple[str, str]], dict]:
    """The steps and what each printed; the tokens made, for the checks that follow."""
    steps, tokens = [], {}

    def step(name, who, *args):
        out = s.run(who, *args)
        steps.append((name, _outcome(out)))
        return out

    first = wait_for(lambda: (lambda out: out if "Created delegation token" in out else None)(
        s.run("alice", "--create", "--max-life-time-period", "-1", "--renewer-principal", "User:bob")),
        120, "alice's first token through the broker")
    steps.append(("alice creates A, bob renews", _outcome(first)))
    tokens["A"] = _created(first)
    tokens["B"] = _created(step("alice creates B for bob", "alice", "--create", "--max-life-time-period", "60000",
                                "--owner-principal", "User:bob"))
    step("a Group renewer", "alice", "--create", "--max-life-time-period", "-1", "--renewer-principal", "Group:g")
    step("on PLAINTEXT", "plaintext", "--create", "--max-life-time-period", "-1")
    step("alice describes hers", "alice", "--describe", "--owner-principal", "User:alice")
    step("alice describes bob's", "alice", "--describe", "--owner-principal", "User:bob")
    a_mac, b_mac = tokens["A"][1], tokens["B"][1]
    step("bob renews A", "bob", "--renew", "--hmac", a_mac, "--renew-time-period", "-1")
    step("carol renews A", "carol", "--renew", "--hmac", a_mac, "--renew-time-period", "-1")
    step("an unknown HMAC", "alice", "--renew", "--hmac", base64.b64encode(b"x" * 64).decode(),
         "--renew-time-period", "-1")
    login = s.token_login(*tokens["A"])
    step("a token login describes", login, "--describe")
    step("a token login creates", login, "--create", "--max-life-time-period", "-1")
    step("carol expires A", "carol", "--expire", "--hmac", a_mac, "--expiry-time-period", "-1")
    step("alice expires A now", "alice", "--expire", "--hmac", a_mac, "--expiry-time-period", "0")
    step("alice renews A, expired", "alice", "--renew", "--hmac", a_mac, "--renew-time-period", "-1")
    step("bob removes B", "bob", "--expire", "--hmac", b_mac, "--expiry-time-period", "-1")
    step("bob renews B, gone", "bob", "--renew", "--hmac", b_mac, "--renew-time-period", "-1")
    step("bob describes his", "bob", "--describe", "--owner-principal", "User:bob")
    step("alice describes hers, A expired", "alice", "--describe", "--owner-principal", "User:alice")
    return steps, tokens


def _token_records(data: Path) -> list[tuple]:
    """The token records a controller wrote, as ``kafka-dump-log`` decodes them: token
    ids as labels in order of appearance, timestamps as what the controller decided
    (the lifetime and first expiry after the issue time; later, whether the expiry
    is the max timestamp)."""
    labels, out = {}, []
    dump = dump_segments(sorted((data / "__cluster_metadata-0").glob("*.log")))
    for batch in md.parse(dump):
        for kind, version, d in batch.records:
            if kind == "DELEGATION_TOKEN_RECORD":
                new = d["tokenId"] not in labels
                label = labels.setdefault(d["tokenId"], f"T{len(labels)}")
                expiry = (d["expirationTimestamp"] - d["issueTimestamp"] if new
                          else "max" if d["expirationTimestamp"] == d["maxTimestamp"] else "before max")
                out.append((kind, version, label, len(d["tokenId"]), d["owner"], d["requester"],
                            tuple(d["renewers"]), d["maxTimestamp"] - d["issueTimestamp"], expiry))
            elif kind == "REMOVE_DELEGATION_TOKEN_RECORD":
                out.append((kind, version, labels.get(d["tokenId"])))
    return out


def _users(bootstrap: str) -> None:
    for user, password in USERS.items():
        run_tool("kafka-configs", "--bootstrap-server", bootstrap, "--alter", "--entity-type", "users",
                 "--entity-name", user, "--add-config", f"SCRAM-SHA-256=[password={password}]", timeout=90)


def _broker(work: Path, cluster_id: str, controllers: str):
    """A started broker with a PLAINTEXT listener and a SASL_PLAINTEXT one (SCRAM-SHA-256)."""
    b = KafkaBroker(work / "broker", BROKER_ID_BASE, cluster_id, controllers)
    sasl = f"127.0.0.1:{free_port()}"
    b.overrides.update({
        "listeners": f"PLAINTEXT://{b.bootstrap},SASL_PLAINTEXT://{sasl}",
        "advertised.listeners": f"PLAINTEXT://{b.bootstrap},SASL_PLAINTEXT://{sasl}",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT,CONTROLLER:PLAINTEXT",
        "sasl.enabled.mechanisms": "SCRAM-SHA-256",
        "listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config": f"{SCRAM} required;",
        "delegation.token.secret.key": SECRET,
    })
    b.start()
    return b, sasl


def _run_side(kind: str, work: Path, secret: str | None = SECRET) -> dict:
    """One side (``kind``: kafka or ours): its controller (with ``secret`` as
    delegation.token.secret.key, or none), a broker with the key, the users, then the
    session (with no key on the controller, only the refusals)."""
    work.mkdir(parents=True)
    cluster_id = uuid.uuid4().hex[:22]
    settings = {"delegation.token.secret.key": secret} if secret else {}
    if kind == "kafka":
        controller = KafkaController(work / "controller", cluster_id=cluster_id, overrides=settings)
        controller.start_ready(timeout=120)
    else:
        (work / "ours").mkdir()
        controller = OurNode(work / "ours", extra=(
            *(f"{k}={v}" for k, v in settings.items()),
            "listener.security.protocol.map=CONTROLLER:PLAINTEXT,CLIENT:SASL_PLAINTEXT",
            "sasl.enabled.mechanisms=SCRAM-SHA-256"))
        controller.format_with_ours(cluster_id)
        controller.start()
        controller.wait_leader(60)
    broker = None
    try:
        broker, sasl = _broker(work, cluster_id, controller.bootstrap)
        wait_for(lambda: run_tool("kafka-configs", "--bootstrap-server", broker.bootstrap, "--describe",
                                  "--entity-type", "users", check=False, timeout=90).returncode == 0,
                 120, "the broker serving")
        _users(broker.bootstrap)
        s = Session(work, sasl, broker.bootstrap)
        if not secret:
            return {"steps": _disabled_session(s)}
        steps, tokens = _session(s)
        seen = {"steps": steps, "tokens": tokens,
                "records": _token_records(controller.data_dir if kind == "kafka" else controller.data)}
        if kind == "ours":
            seen.update(_our_checks(controller, s))
        return seen
    finally:
        if broker is not None:
            broker.close()
        if kind == "kafka":
            controller.close()
        else:
            controller.stop()


def _disabled_session(s: Session) -> list[tuple[str, str]]:
    """A controller without delegation.token.secret.key: every forwarded request refused."""
    mac = base64.b64encode(b"x" * 64).decode()
    first = wait_for(lambda: (lambda out: out if "Exception" in out and "Authentication" not in out else None)(
        s.run("alice", "--create", "--max-life-time-period", "-1")), 120, "the broker serving alice")
    return [("create", _outcome(first)),
            ("renew", _outcome(s.run("alice", "--renew", "--hmac", mac, "--renew-time-period", "-1"))),
            ("expire", _outcome(s.run("alice", "--expire", "--hmac", mac, "--expiry-time-period", "-1")))]


def _our_checks(node, s: Session) -> dict:
    """A token login on our own SASL listener (CLIENT), and our log as Kafka decodes it."""
    token_id, mac = _created(s.run("alice", "--create", "--max-life-time-period", "-1"))
    ours = f"127.0.0.1:{node.client_port}"

    def status(config: Path):
        return run_tool("kafka-metadata-quorum", "--bootstrap-server", ours, "--command-config", str(config),
                        "describe", "--status", check=False, timeout=90)
    good = wait_for(lambda: (lambda p: p if p.returncode == 0 else None)(
        status(_client(s.work / "ours-token.properties", token_id, mac, token=True))), 60,
        "a token login on our SASL listener")
    wrong = status(_client(s.work / "ours-wrong.properties", token_id, base64.b64encode(b"y" * 64).decode(),
                           token=True))
    segments = sorted((node.data / "__cluster_metadata-0").glob("*.log"))
    return {"describes": _describes_here_and_there(s, ours), "our status": good.stdout, "wrong hmac": wrong.stdout + wrong.stderr, "wrong rc": wrong.returncode,
            "dump": dump_segments(segments), "token C": token_id, "node log": node.log_path.read_text()}


def _describes_here_and_there(s: Session, ours: str) -> list:
    """``--describe`` through the broker and straight at our SASL listener, as alice and
    as carol (no authorizer: every token asked for), their token rows sorted (a broker
    lists them in its hash map's order)."""
    out = []
    for who, owners in (("alice", ("User:alice",)), ("alice", ("User:bob",)), ("carol", ("User:alice",)),
                        ("carol", ())):
        args = [a for o in owners for a in ("--owner-principal", o)]
        for bootstrap in (s.sasl, ours):
            proc = run_tool(*TOOL, "--bootstrap-server", bootstrap, "--command-config", str(s.configs[who]),
                            "--describe", *args, check=False, timeout=90)
            head, _, table = proc.stdout.partition("TOKENID")
            out.append((who, owners, bootstrap == ours, sorted(table.splitlines()), proc.returncode))
    return out


@pytest.fixture(scope="module")
def sides(tmp_path_factory):
    need_jdk()
    work = tmp_path_factory.mktemp("tokens")
    return {kind: _run_side(kind, work / kind) for kind in ("kafka", "ours")}


@pytest.mark.slow
def test_the_same_session_prints_the_same_on_kafkas_controller_and_ours(sides):
    theirs, ours = sides["kafka"]["steps"], sides["ours"]["steps"]
    for name, outcome in ours:
        print(f"{name}: {outcome}")
    for (name, k), (_, o) in zip(theirs, ours):
        assert o == k, f"{name}: Kafka's controller {k!r}, ours {o!r}"
    assert len(ours) == len(theirs)
    outcomes = dict(ours)
    assert outcomes["alice creates A, bob renews"] == "created owner=User:alice requester=User:alice renewers=[User:bob]"
    assert outcomes["bob renews A"] == "renewed"
    assert "OwnerMismatch" in outcomes["carol renews A"]
    assert "NotFound" in outcomes["an unknown HMAC"]
    assert "Expired" in outcomes["alice renews A, expired"]
    assert "NotFound" in outcomes["bob renews B, gone"]
    assert "InvalidPrincipalType" in outcomes["a Group renewer"]
    # the broker lists what the owner owns, requested or may renew: A and B for alice
    both = "described 2: [('User:alice', 'User:alice'), ('User:bob', 'User:alice')]"
    assert outcomes["alice describes hers"] == outcomes["alice describes bob's"] == both
    # B removed; A (bob renews it) expired, not yet swept (delegation.token.expiry.check.interval.ms)
    assert outcomes["bob describes his"] == "described 1: [('User:alice', 'User:alice')]"
    # DELEGATION_TOKEN_REQUEST_NOT_ALLOWED (after a successful token login: the HMAC our
    # controller made is the one the broker computes from our record)
    for refused in ("on PLAINTEXT", "a token login describes", "a token login creates"):
        assert "UnsupportedByAuthentication" in outcomes[refused], (refused, outcomes[refused])


@pytest.mark.slow
def test_a_token_logs_in_on_our_sasl_listener_as_its_owner(sides):
    ours = sides["ours"]
    assert "LeaderId:" in ours["our status"], ours["our status"]
    assert ours["wrong rc"] != 0 and "Authentication" in ours["wrong hmac"], ours["wrong hmac"][-2000:]


@pytest.mark.slow
def test_our_node_describes_tokens_as_the_broker(sides):
    """DescribeDelegationToken at our node answers what the broker answers from the
    same records: the same rows (ids, HMACs, owners, renewers, dates)."""
    describes = sides["ours"]["describes"]
    for broker, ours in zip(describes[::2], describes[1::2]):
        assert (broker[2], ours[2]) == (False, True)
        assert ours[3] == broker[3] and ours[4] == broker[4] == 0, (broker, ours)
    counts = [len([row for row in d[3] if re.match(r"\S{22} ", row)]) for d in describes[::2]]
    # alice's: A (expired, not swept) and C; bob's: A (he renews it; B is gone); carol
    # (no authorizer) sees alice's; no owner named: none
    assert counts == [2, 1, 2, 0], describes


@pytest.mark.slow
def test_the_tokens_are_in_our_log_as_kafka_decodes_them(sides):
    dump = sides["ours"]["dump"]
    token_a = sides["ours"]["tokens"]["A"][0]
    assert re.search(r"DELEGATION_TOKEN_RECORD.*" + re.escape(token_a), dump), dump[-3000:]
    assert re.search(r"REMOVE_DELEGATION_TOKEN_RECORD.*" + re.escape(sides["ours"]["tokens"]["B"][0]), dump)
    assert sides["ours"]["token C"] in dump


@pytest.mark.slow
def test_the_same_token_records_as_kafkas_controller(sides):
    ours, theirs = sides["ours"]["records"], sides["kafka"]["records"]
    assert ours == theirs
    day, week = 24 * 3_600_000, 7 * 24 * 3_600_000
    assert ours[0] == ("DELEGATION_TOKEN_RECORD", 0, "T0", 22, "User:alice", "User:alice", ("User:bob",), week, day)
    assert ("REMOVE_DELEGATION_TOKEN_RECORD", 0, "T1") in ours


def _direct_requests(port: int) -> list:
    """Create/Renew/Expire at every version, straight to a controller's PLAINTEXT
    listener: the answers, as our codecs decode them."""
    from tests.support.kraft_nodes import _roundtrip
    from wire.messages import CreateDelegationTokenRequest, ExpireDelegationTokenRequest, RenewDelegationTokenRequest
    from wire.messages.create_delegation_token_request import CreatableRenewers
    out = []
    for version in (1, 2, 3):
        body = CreateDelegationTokenRequest(renewers=[CreatableRenewers(principal_type="User", principal_name="bob")],
                                            max_lifetime_ms=-1)
        if version >= 3:
            body.owner_principal_type, body.owner_principal_name = "User", "carol"
        out.append(_roundtrip(port, body, version))
    for version in (1, 2):
        out.append(_roundtrip(port, RenewDelegationTokenRequest(hmac=b"x", renew_period_ms=-1), version))
        out.append(_roundtrip(port, ExpireDelegationTokenRequest(hmac=b"x", expiry_time_period_ms=-1), version))
    return out


@pytest.fixture(scope="module")
def disabled_sides(tmp_path_factory):
    need_jdk()
    work = tmp_path_factory.mktemp("disabled")
    return {kind: _run_side(kind, work / kind, secret=None)["steps"] for kind in ("kafka", "ours")}


@pytest.mark.slow
def test_without_a_secret_key_the_controller_refuses_as_kafkas(disabled_sides):
    assert disabled_sides["ours"] == disabled_sides["kafka"]
    assert all("DelegationTokenDisabled" in outcome for _, outcome in disabled_sides["ours"]), disabled_sides


def test_a_direct_plaintext_request_is_refused_as_by_kafkas_controller(tmp_path):
    """ControllerApis' allowTokenRequests: on a PLAINTEXT controller listener, not
    forwarded, DELEGATION_TOKEN_REQUEST_NOT_ALLOWED with -1 timestamps (the owner and
    requester as asked)."""
    settings = {"delegation.token.secret.key": SECRET}
    theirs, ours = kafka_then_ours(tmp_path, settings, lambda node: _direct_requests(node.port), kafka_timeout=120)
    assert ours == theirs
    assert {a.error_code for a in ours} == {64} and ours[2].principal_name == "carol"
