"""The pipeline's decoder and transaction filter without Spark: Arrow batches of records
our node really wrote (read from its segment) in, typed rows out; KIP-868 aborts dropped
across batch boundaries."""
from __future__ import annotations

import uuid

import pytest

pa = pytest.importorskip("pyarrow", reason="pyarrow (the `spark` extra) is not installed")
pd = pytest.importorskip("pandas", reason="pandas (the `spark` extra) is not installed")

from tests.support.kraft_nodes import OurNode, wait_for  # noqa: E402
from tests.support.metadata_rows import source_rows  # noqa: E402
from tools.kafka_dist.releases import DEFAULT_RELEASE, release_facts  # noqa: E402
from tools.metadata_stream import transactions as txn  # noqa: E402
from tools.metadata_stream.decode import decode_batch  # noqa: E402
from tools.metadata_stream.rowtype import RowType, uuid_text  # noqa: E402
from wire.messages import AbortTransactionRecord, NoOpRecord  # noqa: E402
from wire.records import decode_metadata_record, encode_metadata_record  # noqa: E402

BEGIN, END, ABORT = 23, 24, 25


@pytest.fixture(scope="module")
def real_rows(tmp_path_factory):
    """The data records of a log our node wrote: the bootstrap transaction, its
    registration and some NoOps."""
    node = OurNode(tmp_path_factory.mktemp("node"), extra=("metadata.max.idle.interval.ms=50",))
    node.format_with_ours(uuid.uuid4().hex[:22])
    node.start()
    try:
        node.wait_leader(60)
        wait_for(lambda: len(source_rows(node.data)) >= 15, 60, "15 data records in the segment")
    finally:
        node.stop()
    return source_rows(node.data)


@pytest.fixture(scope="module")
def row_type():
    return RowType.load()


def arrow_rows(rows) -> pa.RecordBatch:
    """What Spark's Kafka source hands ``mapInArrow``: timestamps in microseconds."""
    return pa.RecordBatch.from_pydict({
        "partition": pa.array([r["partition"] for r in rows], pa.int32()),
        "offset": pa.array([r["offset"] for r in rows], pa.int64()),
        "timestamp": pa.array([r["timestamp"] * 1000 for r in rows], pa.timestamp("us", tz="UTC")),
        "value": pa.array([r["value"] for r in rows], pa.binary()),
    })


def frame(rows) -> pd.DataFrame:
    return arrow_rows(rows).to_pandas()


def types(rows) -> list[int]:
    return [decode_metadata_record(r["value"]).api_key for r in rows]


class State:
    """The slice of pyspark's GroupState the stream step uses."""

    def __init__(self):
        self.value = None

    @property
    def exists(self):
        return self.value is not None

    @property
    def get(self):
        return self.value

    def update(self, value):
        self.value = value

    def remove(self):
        self.value = None


def run_stream(chunks) -> tuple[list[list[int]], State]:
    """The offsets each micro-batch emits, feeding ``chunks`` of rows in turn."""
    state, emitted = State(), []
    for chunk in chunks:
        out = list(txn.stream_step((0,), [frame(chunk)] if chunk else [], state))
        emitted.append([int(o) for f in out for o in f["offset"]])
    return emitted, state


def test_real_log_decodes_to_typed_rows(real_rows, row_type):
    out = decode_batch(arrow_rows(real_rows), row_type).to_pylist()
    assert [r["offset"] for r in out] == [r["offset"] for r in real_rows]
    assert all(r["error"] is None for r in out)
    assert [r["type"] for r in out][:10] == [BEGIN, 12, 12, 12, 12, 12, 12, 4, END, 27]
    for row, src in zip(out, real_rows):
        record = decode_metadata_record(src["value"])
        assert row["type_name"] == type(record.message).__name__
        assert row["version"] == record.version
        assert int(row["timestamp"].timestamp() * 1000) == src["timestamp"]
        assert row["leader_epoch"] is None  # the Kafka source has no such column
        set_columns = [c for c in row_type.columns.values() if row[c] is not None]
        assert set_columns == ([row_type.columns[record.api_key]] if record.api_key in row_type.columns else [])
    features = {r["feature_level_record"]["name"]: r["feature_level_record"]["feature_level"]
                for r in out if r["type"] == 12}
    level = release_facts(DEFAULT_RELEASE)["metadata"][1]  # formatted at the pinned release
    assert features["metadata.version"] == level and features["transaction.version"] == 2
    controller = next(r for r in out if r["type"] == 27)
    message = decode_metadata_record(real_rows[9]["value"]).message
    assert controller["register_controller_record"]["controller_id"] == 1
    assert controller["register_controller_record"]["incarnation_id"] == uuid_text(message.incarnation_id)
    assert [e["port"] for e in controller["register_controller_record"]["end_points"]] == [
        e.port for e in message.end_points]


def test_undecodable_value_is_an_error_row_not_a_crash(real_rows, row_type):
    bad = [dict(real_rows[0], value=b"\x01\x63\x00"), dict(real_rows[1], value=None),
           dict(real_rows[2], value=real_rows[2]["value"] + b"\x00")]
    out = decode_batch(arrow_rows(bad + real_rows[3:4]), row_type).to_pylist()
    assert [r["error"] is not None for r in out] == [True, True, True, False]
    assert "Unknown metadata id 99" in out[0]["error"] and "garbage" in out[2]["error"]
    assert out[0]["type_name"] is None and out[3]["type_name"] == "FeatureLevelRecord"


def test_committed_transaction_split_across_micro_batches_is_held_then_emitted(real_rows):
    assert types(real_rows)[0] == BEGIN and types(real_rows)[8] == END
    offsets = [r["offset"] for r in real_rows]
    emitted, state = run_stream([real_rows[:4], real_rows[4:7], real_rows[7:12], real_rows[12:]])
    assert emitted[0] == [] and emitted[1] == []  # held while the transaction is open
    assert state.value is None  # ...and released once it ended
    assert emitted[2] == offsets[:12]
    assert sum(emitted, []) == offsets  # every record once, in order


def test_aborted_transaction_across_micro_batches_is_dropped(real_rows):
    abort = encode_metadata_record(AbortTransactionRecord(reason="leader changed"), 0)
    rows = real_rows[:8] + [dict(real_rows[8], value=abort)] + real_rows[9:]
    offsets = [r["offset"] for r in rows]
    emitted, _ = run_stream([rows[:3], rows[3:8], [], rows[8:]])
    assert emitted[:3] == [[], [], []]
    # Begin and Abort markers stay; the six FeatureLevels and the Config are gone.
    assert sum(emitted, []) == [offsets[0], offsets[8]] + offsets[9:]


def test_held_rows_survive_a_restart_through_the_serialized_state(real_rows):
    state = State()
    assert list(txn.stream_step((0,), [frame(real_rows[:5])], state)) == []
    restored = State()
    restored.update((bytes(state.value[0]),))  # what the checkpoint gives back
    out = list(txn.stream_step((0,), [frame(real_rows[5:10])], restored))
    assert [int(o) for o in out[0]["offset"]] == [r["offset"] for r in real_rows[:10]]


def test_begin_inside_an_open_transaction_drops_the_first(real_rows):
    begin = real_rows[0]["value"]
    noop = encode_metadata_record(NoOpRecord(), 0)
    end = real_rows[8]["value"]
    kinds = [begin, noop, begin, noop, end, noop]
    rows = [{"partition": 0, "offset": 100 + i, "timestamp": 1, "value": v} for i, v in enumerate(kinds)]
    assert list(txn.batch_step(frame(rows))["offset"]) == [100, 102, 103, 104, 105]


def test_batch_leaves_out_a_transaction_still_open(real_rows):
    out = txn.batch_step(frame(real_rows[:6]))
    assert len(out) == 0
    out = txn.batch_step(frame(real_rows[10:] + real_rows[:6]))  # also sorts by offset
    assert list(out["offset"]) == []  # offsets 0-5 come first and open a transaction
    out = txn.batch_step(frame(real_rows))
    assert list(out["offset"]) == [r["offset"] for r in real_rows]
