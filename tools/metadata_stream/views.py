"""Current-state views over a table of typed rows (a batch DataFrame: the batch job's
output, the Parquet directory or the memory table a stream writes).

Each view folds the rows in offset order, as a metadata image does:

- ``brokers``: the last registration of each broker id, unless a later
  UnregisterBrokerRecord (same id and epoch) removed it; ``fenced`` is the latest of the
  registration, Fence/UnfenceBroker and BrokerRegistrationChange.
- ``topics``: TopicRecords whose id no RemoveTopicRecord removed.
- ``partitions``: PartitionRecord with each field replaced by the last
  PartitionChangeRecord that set it, for live topics; as in Kafka's
  ``PartitionRegistration.merge`` every change bumps the partition epoch and one that
  names a leader (not -2) bumps the leader epoch.
- ``features``: the last FeatureLevelRecord of each name (level 0 removes it).
- ``controllers``: the last RegisterControllerRecord of each controller id.
- ``voters``: not here. The voter set lives in control records (VotersRecord), which no
  Kafka consumer returns; the node serves them as data in ``__cluster_metadata_control``
  and ``control.py`` decodes them and has the voters views.
"""
from __future__ import annotations

VIEWS = ("brokers", "topics", "partitions", "features", "controllers")


def _latest(df, key_cols, order_col="offset"):
    from pyspark.sql import Window
    from pyspark.sql import functions as F
    w = Window.partitionBy(*key_cols).orderBy(F.col(order_col).desc())
    return df.withColumn("_rank", F.row_number().over(w)).where("_rank = 1").drop("_rank")


def brokers(rows):
    from pyspark.sql import functions as F
    reg = rows.where("type = 0").select("offset", "register_broker_record.*")
    latest = _latest(reg, ["broker_id"])
    unreg = rows.where("type = 1").select(
        F.col("offset").alias("u_offset"), "unregister_broker_record.*")
    live = latest.join(unreg, (latest.broker_id == unreg.broker_id) & (latest.broker_epoch == unreg.broker_epoch)
                       & (unreg.u_offset > latest["offset"]), "left_anti")
    fence_events = (
        rows.where("type = 7").select("offset", F.col("fence_broker_record.id").alias("id"), F.lit(True).alias("f"))
        .unionByName(rows.where("type = 8").select(
            "offset", F.col("unfence_broker_record.id").alias("id"), F.lit(False).alias("f")))
        .unionByName(rows.where("type = 17 AND broker_registration_change_record.fenced != 0").select(
            "offset", F.col("broker_registration_change_record.broker_id").alias("id"),
            (F.col("broker_registration_change_record.fenced") == 1).alias("f"))))
    last_fence = _latest(fence_events, ["id"]).select(
        F.col("id").alias("fid"), F.col("offset").alias("f_offset"), "f")
    joined = live.join(last_fence, (live.broker_id == last_fence.fid) & (last_fence.f_offset > live["offset"]), "left")
    return joined.select(
        "broker_id", "broker_epoch", "incarnation_id", "end_points", "rack",
        F.coalesce("f", "fenced").alias("fenced"), F.col("offset").alias("registered_at"))


def topics(rows):
    from pyspark.sql import functions as F
    created = rows.where("type = 2").select("offset", "topic_record.*")
    removed = rows.where("type = 9").select(F.col("remove_topic_record.topic_id").alias("removed_id"))
    return created.join(removed, created.topic_id == removed.removed_id, "left_anti").select(
        "name", "topic_id", F.col("offset").alias("created_at"))


def partitions(rows):
    from pyspark.sql import functions as F
    base = rows.where("type = 3").select("offset", "partition_record.*")
    base = _latest(base, ["topic_id", "partition_id"])
    changes = rows.where("type = 5").select("offset", "partition_change_record.*")
    fields = ("replicas", "isr", "removing_replicas", "adding_replicas", "eligible_leader_replicas",
              "last_known_elr", "directories")
    agg = [F.max_by(F.when(F.col("leader") != -2, F.col("leader")),
                    F.when(F.col("leader") != -2, F.col("offset"))).alias("c_leader")]
    agg += [F.max_by(F.col(f), F.when(F.col(f).isNotNull(), F.col("offset"))).alias(f"c_{f}") for f in fields]
    agg += [F.max("offset").alias("c_offset"), F.count("*").alias("c_changes"),
            F.count(F.when(F.col("leader") != -2, 1)).alias("c_leader_changes")]
    folded = changes.groupBy("topic_id", "partition_id").agg(*agg).withColumnRenamed(
        "topic_id", "c_topic_id").withColumnRenamed("partition_id", "c_partition_id")
    joined = base.join(folded, (base.topic_id == folded.c_topic_id) & (base.partition_id == folded.c_partition_id)
                       & (folded.c_offset > base["offset"]), "left")
    live = joined.join(topics(rows).select("topic_id", "name"), "topic_id")
    return live.select(
        F.col("name").alias("topic"), "topic_id", "partition_id",
        F.coalesce("c_leader", "leader").alias("leader"),
        *[F.coalesce(f"c_{f}", f).alias(f) for f in fields],
        (F.col("leader_epoch") + F.coalesce("c_leader_changes", F.lit(0))).alias("leader_epoch"),
        (F.col("partition_epoch") + F.coalesce("c_changes", F.lit(0))).alias("partition_epoch"))


def features(rows):
    latest = _latest(rows.where("type = 12").select("offset", "feature_level_record.*"), ["name"])
    return latest.where("feature_level > 0").select("name", "feature_level")


def controllers(rows):
    latest = _latest(rows.where("type = 27").select("offset", "register_controller_record.*"), ["controller_id"])
    return latest.select("controller_id", "incarnation_id", "zk_migration_ready", "end_points", "features",
                         latest["offset"].alias("registered_at"))


def view(name: str, rows):
    if name not in VIEWS:
        raise ValueError(f"unknown view {name!r}; one of {', '.join(VIEWS)}")
    return globals()[name](rows)
