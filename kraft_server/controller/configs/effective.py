"""The configs a CreateTopics answer (v5+) lists for each new topic, as Kafka 4.3.1's
controller computes them (``ConfigurationControlManager.computeEffectiveTopicConfigs``,
i.e. ``KafkaConfigSchema.resolveEffectiveTopicConfigs``), sorted by name.

Every topic config, internal ones only when the request sets them. Its value, first
found: the request's own (DYNAMIC_TOPIC_CONFIG, as given), else the broker configs it
falls back to, layer by layer (this controller's dynamic config, DYNAMIC_BROKER_CONFIG;
the cluster default, DYNAMIC_DEFAULT_BROKER_CONFIG; its properties file,
STATIC_BROKER_CONFIG), each layer tried with every synonym in order (a ``.hours`` or
``.minutes`` one converted to ms), else the default (DEFAULT_CONFIG). Never read-only;
sensitive (PASSWORD) values are null. The layers are DescribeConfigs'
(``describe.NodeConfig``); DescribeConfigs itself tries synonyms before layers, as the
broker's ``KafkaConfig`` does, so the two can differ when layers set different synonyms.
"""
from __future__ import annotations

from kraft_server.common.java_numbers import parse_java_integer

from .definitions import TOPIC_DEFS
from .describe import DEFAULT_CONFIG, TOPIC_CONFIG, UNIT_MS, Entry, NodeConfig


def _converted(synonym: str, raw: str) -> str:
    """``ConfigSynonym``'s converters: hours/minutes to ms (an unreadable int is 0)."""
    for suffix, factor in UNIT_MS.items():
        if synonym.endswith(suffix):
            s = raw.strip()
            n = parse_java_integer(s, "INT") or 0
            return str(n * factor)
    return raw


def _inherited(node: NodeConfig, d) -> tuple[str | None, int]:
    for values, source in node.layers:
        for synonym in d.synonyms:
            if synonym in values:
                return _converted(synonym, values[synonym]), source
    return (d.default if d.has_default else None), DEFAULT_CONFIG


def effective_topic_configs(node: NodeConfig, given: dict[str, str]) -> list[Entry]:
    """``given``: the creation configs, name -> value."""
    out = []
    for d in TOPIC_DEFS.values():
        if d.internal and d.name not in given:
            continue
        value, source = (given[d.name], TOPIC_CONFIG) if d.name in given else _inherited(node, d)
        out.append(Entry(d.name, None if d.sensitive else value, source, d.sensitive, False))
    out.sort(key=lambda e: e.name)
    return out
