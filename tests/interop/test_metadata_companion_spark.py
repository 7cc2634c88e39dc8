"""Spark 4.2.0's Kafka source over our node's companion topics:
``__cluster_metadata_control`` read as a batch and as a stream (``tools/metadata_stream/
control.py``) gives exactly the control records of the node's log, decoded, and the
voters views fold them."""
from __future__ import annotations

import uuid

import pytest

pytest.importorskip("pyspark", reason="pyspark (the `spark` extra) is not installed")
pytest.importorskip("pyarrow", reason="pyarrow (the `spark` extra) is not installed")

from tests.interop.test_metadata_companion_clients import control_log, latest  # noqa: E402
from tests.interop.test_metadata_stream_spark import spark  # noqa: E402,F401 (fixture)
from tests.support.kraft_nodes import OurNode, wait_for  # noqa: E402
from tools.metadata_stream import control, pipeline  # noqa: E402
from wire.messages import LeaderChangeMessage, VotersRecord  # noqa: E402


@pytest.fixture
def node(tmp_path):
    n = OurNode(tmp_path, extra=("metadata.max.idle.interval.ms=300",))
    n.format_with_ours(uuid.uuid4().hex[:22])
    n.start()
    try:
        n.wait_leader(60)
        wait_for(lambda: latest(n) >= 6, 30, "a few records")
        n.stop()
        n.start()  # a second LeaderChange, after data
        wait_for(lambda: len([k for k, _ in control_log(n, latest(n)).values() if k == "LeaderChange"]) >= 2,
                 60, "the second LeaderChange committed")
        yield n
    finally:
        n.stop()


@pytest.mark.slow  # its own Spark session (~95 s); the default suite streams the main topic through Spark
def test_control_topic_batch_and_stream_decode_to_the_log_control_records(spark, node, tmp_path):  # noqa: F811
    options = pipeline.kafka_options(f"127.0.0.1:{node.client_port}", control.CONTROL_TOPIC)
    rows = control.read_control_batch(spark, options)
    got = rows.collect()
    end = latest(node)
    want = control_log(node, end)
    got = [r for r in got if r.offset < end]
    assert [(r.offset, r.type_name) for r in got] == [(o, k) for o, (k, _) in sorted(want.items())]
    assert all(r.error is None for r in got)
    for r in got:
        value = want[r.offset][1]
        if r.type_name == "LeaderChange":
            assert r.leader_change.leader_id == LeaderChangeMessage.decode(value, 0).leader_id == 1
        if r.type_name == "Voters":
            assert [v.voter_id for v in r.voters.voters] == [
                v.voter_id for v in VotersRecord.decode(value, 0).voters]
    assert [v.voter_id for v in control.voters(rows).collect()] == [1]
    sets = control.voter_sets(rows).collect()
    assert sets and sets[-1].voter_ids == [1]
    assert len(control.leaders(rows).collect()) >= 2

    # The stream (available-now: to the high watermark, across the gaps, then stop).
    out = str(tmp_path / "control_rows")
    query = pipeline.start_stream(control.read_control_stream(spark, options), "parquet",
                                  checkpoint=str(tmp_path / "ckpt"), path=out, trigger={"availableNow": True},
                                  summary=False)
    query.awaitTermination(180)
    assert not query.isActive and query.exception() is None
    streamed = [(r.offset, r.type_name) for r in spark.read.parquet(out).orderBy("offset").collect()]
    assert streamed[:len(got)] == [(r.offset, r.type_name) for r in got]
