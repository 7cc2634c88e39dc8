"""The SparkSession for the pipeline: the connector jars via ``spark.jars`` (Spark ships
them to executors), UTC timestamps, one shuffle partition (the topic has one partition)."""
from __future__ import annotations

import os
import sys

from .jars import ensure_jars


def spark_session(master: str | None = None, app_name: str = "kraft-metadata-stream", conf=()):
    """A session with the connector jars; ``master`` None keeps what spark-submit set, or
    ``local[*]``. ``conf``: extra ``(key, value)`` pairs, applied last."""
    from pyspark.sql import SparkSession
    # Python workers run this interpreter (its venv has wire, pandas, pyarrow) unless the
    # cluster says otherwise (PYSPARK_PYTHON, spark.pyspark.python).
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = SparkSession.builder.appName(app_name)
    if master:
        builder = builder.master(master)
    builder = (builder
               .config("spark.jars", ",".join(str(p) for p in ensure_jars()))
               .config("spark.sql.session.timeZone", "UTC")
               .config("spark.sql.shuffle.partitions", "1")
               .config("spark.ui.showConsoleProgress", "false")
               # pyspark 4.2's own pandas concat in applyInPandasWithState warns on every batch.
               .config("spark.executorEnv.PYTHONWARNINGS", "ignore::FutureWarning"))
    for key, value in conf:
        builder = builder.config(key, value)
    spark = builder.getOrCreate() if master else _default_master(builder)
    return spark


def _default_master(builder):
    from pyspark import SparkConf
    if not SparkConf().contains("spark.master"):  # not under spark-submit
        builder = builder.master("local[*]")
    return builder.getOrCreate()
