"""What a Spark test needs before it starts a session: a JDK and the Kafka connector
jars (both installed by `make test`; a skip here names which one is missing)."""
from __future__ import annotations

import shutil

import pytest


def require_java_and_connector_jars() -> None:
    from tools.metadata_stream.jars import JarsError, ensure_jars
    if shutil.which("java") is None:
        pytest.skip("no java on PATH: Spark needs a JDK 17")
    try:
        ensure_jars()
    except JarsError as exc:
        pytest.skip(f"the Kafka connector jars cannot be resolved: {exc}")


def local_spark():
    """A module fixture's body: a ``local[2]`` session of the pipeline (its jars), stopped
    after the module."""
    require_java_and_connector_jars()
    from tools.metadata_stream.session import spark_session
    session = spark_session("local[2]", conf=[("spark.sql.streaming.stopTimeout", "30s")])
    yield session
    session.stop()
