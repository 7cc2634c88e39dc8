"""Our generic error answer (``kraft_server/api/error_answer``) against Kafka's own
``<X>Request.getErrorResponse``, byte for byte.

For every request type our codecs know (``wire.messages.REQUESTS``) and every version,
several request bodies: the all-defaults body, the every-field-non-default body
(``strategies.filled_message``), ``ERROR_ANSWER_EXAMPLES`` (default 4) hypothesis bodies
from a fixed regression seed and as many from a fresh seed (printed; set
``ERROR_ANSWER_SEED`` to replay one), and for Produce a wide body (more partitions than a
Java HashMap's first table holds, some named twice) and an acks=0 one. Each body, at each
error of ``CODES``, goes to the long-lived JVM (``tests/java/CodecTester.java``, mode
``error_response``): Kafka parses our encoding of the body with
``AbstractRequest.parseRequest``, calls ``getErrorResponse(0, Errors.forCode(code)
.exception(message))`` and serialises the answer at the request's version; our
``error_answer`` must encode to the same bytes.

Where Kafka builds no answer we build none either, and say why:

- Kafka's parse refuses ACL requests holding the UNKNOWN code 0
  (``error_answer/refused.py`` must say so for exactly those bodies);
- a Produce with acks 0 is answered null, and one with null records makes
  ``getErrorResponse`` throw (``partitionSizes`` sizes the records): ``error_answer``
  returns None for both;
- ``EXTENSIONS``: versions that are ours only (DescribeQuorum v3), which Kafka cannot
  parse; they are left out.
"""
from __future__ import annotations

import base64
import os
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, seed, settings

from kraft_server.api.error_answer import error_answer
from kraft_server.api.error_answer.refused import refused
from tests.support import strategies as S
from tests.support.java_tester import JavaCodecTester
from tests.support.schemas_release import SCHEMAS_RELEASE
from wire.messages import REQUESTS

pytestmark = pytest.mark.java

EXAMPLES = int(os.environ.get("ERROR_ANSWER_EXAMPLES", "4"))
REGRESSION_SEED = 20261203
FRESH_SEED = int(os.environ.get("ERROR_ANSWER_SEED") or random.SystemRandom().randrange(1 << 32))
EXTENSIONS = {("DescribeQuorumRequest", 3): "ours only (KIP-1204 draft); Kafka has no v3 to parse"}

SASL_MESSAGE = "Unexpected Kafka request of type {} during SASL authentication."
# (code, message): ILLEGAL_SASL_STATE as the SASL gate sends it, NOT_CONTROLLER and
# CLUSTER_AUTHORIZATION_FAILED with the default exception, one with a message of its
# own, one whose message is the default text (ApiError drops it), UNKNOWN_SERVER_ERROR
# (never carries a message) and UNSUPPORTED_VERSION (ApiVersions lists itself).
CODES = [(34, SASL_MESSAGE), (41, None), (31, None), (31, "Denied by the test."),
         (41, "This is not the correct controller for this cluster."), (-1, "secret"), (35, None)]

STATS = {"pairs": set(), "bodies": 0, "compared": 0, "identical": 0, "unanswered": 0, "refused": 0}
NAMES = sorted(cls.__name__ for cls in REQUESTS.values())
BY_NAME = {cls.__name__: cls for cls in REQUESTS.values()}


@pytest.fixture(scope="module")
def kafka(tmp_path_factory):
    with JavaCodecTester.running(tmp_path_factory.mktemp("error-answer"), version=SCHEMAS_RELEASE) as tester:
        yield tester


def _api_name(cls) -> str:
    from kraft_server.net.sasl_gate import _api_name
    return _api_name(cls.API_KEY)


def _examples(model, cls, version: int, which: int) -> list:
    got = []

    @settings(max_examples=EXAMPLES, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @seed(which)
    @given(S.messages(model, cls, version))
    def draw(body):
        got.append(body)

    draw()
    return got


def _wide_produce(cls, version: int, acks: int):
    """Three topics of 9 partitions each, one partition named twice: 27 distinct keys,
    so Kafka's HashMap resizes twice before the answer walks it."""
    import uuid

    from wire.messages.produce_request import PartitionProduceData, TopicProduceData
    topics = []
    for n in range(3):
        name = f"topic-{n}" if version < 13 else ""
        topic_id = uuid.UUID(int=0) if version < 13 else uuid.UUID(int=(n + 1) * 0x1234567890ABCDEF1234567)
        parts = [PartitionProduceData(index=i, records=b"") for i in (*range(9), 4)]
        topics.append(TopicProduceData(name=name, topic_id=topic_id, partition_data=parts))
    return cls(acks=acks, timeout_ms=100, topic_data=topics)


def _bodies(name: str, cls, version: int) -> list[tuple[str, object]]:
    model = S.models()[name]
    bodies = [("all defaults", cls()), ("every field non-default", S.filled_message(model, cls, version))]
    bodies += [(f"regression seed {REGRESSION_SEED}", b) for b in _examples(model, cls, version, REGRESSION_SEED)]
    bodies += [(f"fresh seed {FRESH_SEED}", b) for b in _examples(model, cls, version, FRESH_SEED)]
    if name == "ProduceRequest":
        bodies += [("wide, acks -1", _wide_produce(cls, version, -1)), ("wide, acks 0", _wide_produce(cls, version, 0))]
    return bodies


def _explain(name, version, what, body, code, message, why, ours=None, theirs=None) -> str:
    lines = [f"{name} v{version} ({what}), code {code}, message {message!r}: {why}",
             f"  fresh seed {FRESH_SEED} (ERROR_ANSWER_SEED={FRESH_SEED} replays it)",
             f"  request: {body!r}"[:1500]]
    if ours is not None:
        lines.append(f"  ours:  {ours.hex()[:800]}")
    if theirs is not None:
        lines.append(f"  kafka: {theirs.hex()[:800]}")
    return "\n".join(lines)


@pytest.mark.parametrize("name", NAMES)
def test_error_answer_as_kafka_builds_it(kafka, name):
    cls = BY_NAME[name]
    cases, items = [], []
    for version in S.versions_of(cls):
        if (name, version) in EXTENSIONS:
            continue
        for what, body in _bodies(name, cls, version):
            data = bytes(body.encode(version))
            STATS["bodies"] += 1
            for code, message in CODES:
                if message == SASL_MESSAGE:
                    message = SASL_MESSAGE.format(_api_name(cls))
                cases.append((version, what, body, code, message))
                items.append((cls.API_KEY, version, data, code, message))
        STATS["pairs"].add((name, version))
    for (version, what, body, code, message), reply in zip(cases, kafka.error_responses(items)):
        explain = (lambda why, ours=None, theirs=None:
                   _explain(name, version, what, body, code, message, why, ours, theirs))
        refusal = refused(cls.API_KEY, version, body)
        if not reply.get("ok") and reply.get("stage") == "parse":
            assert refusal is not None, explain(f"Kafka's parse refused it, refused() did not: {reply['error']}")
            STATS["refused"] += 1
            continue
        assert refusal is None, explain(f"refused() says {refusal!r}, Kafka parsed it")
        ours = error_answer(cls.API_KEY, version, body, code, message)
        if not reply.get("ok"):
            assert reply.get("stage") == "error_response" and ours is None, explain(
                f"Kafka failed ({reply.get('stage')}: {reply.get('error')}); ours answered {ours!r}")
            STATS["unanswered"] += 1
            continue
        if reply.get("null"):
            assert ours is None, explain("Kafka answers nothing; ours answered")
            STATS["unanswered"] += 1
            continue
        theirs = base64.b64decode(reply["bytes"])
        assert ours is not None, explain("Kafka answered; ours did not", theirs=theirs)
        mine = bytes(ours.encode(version))
        STATS["compared"] += 1
        assert mine == theirs, explain("bytes differ", mine, theirs)
        STATS["identical"] += 1


def test_zz_summary(kafka, capsys):
    """Runs last (file order): the sweep's size and its seeds, in the test output."""
    expected = sum(len(S.versions_of(c)) for c in REQUESTS.values()) - len(EXTENSIONS)
    with capsys.disabled():
        print(f"\nerror answers vs Kafka {kafka.kafka_version}'s getErrorResponse: {len(STATS['pairs'])} of "
              f"{expected} (request, version) pairs, {STATS['bodies']} bodies x {len(CODES)} errors; "
              f"{STATS['identical']} of {STATS['compared']} answers byte-identical, "
              f"{STATS['unanswered']} unanswered by both, {STATS['refused']} refused by Kafka's parse "
              f"(and by refused()); seeds {REGRESSION_SEED} and {FRESH_SEED} (fresh)")
