"""``--command-config FILE``: a Kafka client properties file, as Kafka's own tools take
it (``security.protocol``, ``sasl.mechanism``, ``sasl.jaas.config``, ``ssl.truststore.*``,
...), handed to Spark's Kafka source as ``kafka.<key>`` options (the source passes every
``kafka.`` option to its consumers and admin client).

Left out, with a warning: ``bootstrap.servers`` (``--bootstrap-server`` says where) and
the consumer settings the source refuses to take (it manages offsets and deserializes
itself). ``--option`` settings are applied after the file's, so they win."""
from __future__ import annotations

import logging
from pathlib import Path

from kraft_server.java_properties import load_properties

log = logging.getLogger(__name__)

# Spark's KafkaSourceProvider fails a query given any of these.
REFUSED_BY_SPARK = frozenset({"auto.offset.reset", "key.deserializer", "value.deserializer",
                              "enable.auto.commit", "interceptor.classes"})


def command_config_options(path: str | Path | None) -> dict[str, str]:
    """The source options for the properties file at ``path`` (none for None)."""
    if path is None:
        return {}
    if not Path(path).is_file():
        raise FileNotFoundError(f"Properties file {path} does not exist")
    options = {}
    for key, value in load_properties(path).items():
        key = key.removeprefix("kafka.")
        if key == "bootstrap.servers" or key in REFUSED_BY_SPARK:
            log.warning("%s: %s left out (%s)", path, key,
                        "--bootstrap-server says where" if key == "bootstrap.servers"
                        else "Spark's Kafka source does not take it")
            continue
        options[f"kafka.{key}"] = value
    return options
