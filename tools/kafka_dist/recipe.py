"""What the local Apache Kafka distribution is made of.

Everything that decides the content of ``$KRAFT_CACHE/kafka-<version>/``
lives here as plain data: the Maven coordinates (pinned exactly), the wrapper
scripts, and the log4j2 configurations. :func:`fingerprint` hashes all of it;
the marker written after a successful preparation records that hash, so a
change to this file makes the next :func:`tools.kafka_dist.ensure_dist`
rebuild the distribution (offline when ``~/.m2`` already holds the jars).
"""

from __future__ import annotations

import hashlib
import json

from .releases import DEFAULT_RELEASE, MATRIX, RELEASES, release_facts

KAFKA_VERSION = DEFAULT_RELEASE
SCALA_BINARY_VERSION = "2.13"

MAVEN_DEPENDENCY_PLUGIN = "org.apache.maven.plugins:maven-dependency-plugin:3.8.1"

# Wrapper script -> main class, in the default release. A release names its own
# classes where they moved (``releases.RELEASES[v]["classes"]``). Which jar holds
# each class is found by package: ``kafka.*`` in the core jar, the rest in kafka-tools.
TOOL_CLASSES: dict[str, str] = {
    "kafka-storage": "kafka.tools.StorageTool",
    "kafka-server-start": "kafka.Kafka",
    "kafka-metadata-quorum": "org.apache.kafka.tools.MetadataQuorumCommand",
    "kafka-dump-log": "org.apache.kafka.tools.DumpLogSegments",
    "kafka-console-consumer": "org.apache.kafka.tools.consumer.ConsoleConsumer",
    "kafka-features": "org.apache.kafka.tools.FeatureCommand",
    # Broker-side tools (a quorum of ours with Apache Kafka brokers attached).
    "kafka-topics": "org.apache.kafka.tools.TopicCommand",
    "kafka-console-producer": "org.apache.kafka.tools.ConsoleProducer",
    "kafka-consumer-groups": "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand",
    "kafka-broker-api-versions": "org.apache.kafka.tools.BrokerApiVersionsCommand",
    "kafka-producer-perf-test": "org.apache.kafka.tools.ProducerPerformance",
    "kafka-consumer-perf-test": "org.apache.kafka.tools.ConsumerPerformance",
    "kafka-cluster": "org.apache.kafka.tools.ClusterTool",
    "kafka-reassign-partitions": "org.apache.kafka.tools.reassign.ReassignPartitionsCommand",
    "kafka-leader-election": "org.apache.kafka.tools.LeaderElectionCommand",
    "kafka-configs": "kafka.admin.ConfigCommand",
    "kafka-acls": "org.apache.kafka.tools.AclCommand",
}


class Recipe:
    """Everything that shapes ``$KRAFT_CACHE/kafka-<version>/`` for one release."""

    def __init__(self, version: str) -> None:
        facts = release_facts(version)
        self.version = version
        self.log4j2 = facts["log4j2"]
        self.slf4j = facts["slf4j"]
        core = f"kafka_{SCALA_BINARY_VERSION}-{version}.jar"
        tools_jar = f"kafka-tools-{version}.jar"
        classes = {**TOOL_CLASSES, **facts.get("classes", {})}
        # Wrapper script -> (main class, jar that must contain it).
        self.tools: dict[str, tuple[str, str]] = {
            name: (cls, core if cls.startswith("kafka.") else tools_jar) for name, cls in classes.items()
        }
        # (groupId, artifactId, version); the logging backend the release tarball
        # ships in libs/ (release-only dependencies, not in the published poms).
        self.dependencies: tuple[tuple[str, str, str], ...] = (
            ("org.apache.kafka", f"kafka_{SCALA_BINARY_VERSION}", version),
            ("org.apache.kafka", "kafka-tools", version),
            ("org.apache.logging.log4j", "log4j-api", self.log4j2),
            ("org.apache.logging.log4j", "log4j-core", self.log4j2),
            ("org.apache.logging.log4j", "log4j-slf4j-impl", self.log4j2),
            ("org.apache.logging.log4j", "log4j-1.2-api", self.log4j2),
        )
        # Versions forced over Maven's nearest-wins mediation (jetty 12 would
        # otherwise drag in slf4j 2.x, which the 1.x binding cannot serve).
        self.managed: tuple[tuple[str, str, str], ...] = (
            ("org.slf4j", "slf4j-api", self.slf4j),
            ("org.apache.logging.log4j", "log4j-api", self.log4j2),
            ("org.apache.logging.log4j", "log4j-core", self.log4j2),
        )
        # Jars that must be in libs/ for the preparation to count as complete.
        self.required_jars: tuple[str, ...] = (
            core,
            tools_jar,
            f"kafka-clients-{version}.jar",
            f"kafka-raft-{version}.jar",
            f"kafka-metadata-{version}.jar",
            f"kafka-server-common-{version}.jar",
            f"log4j-core-{self.log4j2}.jar",
            f"log4j-slf4j-impl-{self.log4j2}.jar",
            f"slf4j-api-{self.slf4j}.jar",
        )

    def pom_xml(self) -> str:
        managed = "".join(_dep_xml(*d, indent="      ") for d in self.managed)
        deps = "".join(_dep_xml(*d, indent="    ") for d in self.dependencies)
        return POM.format(version=self.version, managed=managed, deps=deps)

    def scripts(self) -> dict[str, str]:
        out = {"kafka-run-class": KAFKA_RUN_CLASS.replace("@VERSION@", self.version)}
        for name, (cls, _jar) in self.tools.items():
            template = KAFKA_SERVER_START if name == "kafka-server-start" else KAFKA_TOOL
            out[name] = template.replace("@CLASS@", cls)
        return out

    def fingerprint(self) -> str:
        """A hash of everything that shapes the distribution."""
        blob = json.dumps(
            {
                "version": self.version,
                "pom": self.pom_xml(),
                "plugin": MAVEN_DEPENDENCY_PLUGIN,
                "required": self.required_jars,
                "tools": self.tools,
                "configs": CONFIGS,
                "scripts": self.scripts(),
            },
            sort_keys=True,
        )
        return hashlib.sha256(blob.encode()).hexdigest()


def for_release(version: str | None = None) -> Recipe:
    return Recipe(version or DEFAULT_RELEASE)


def _dep_xml(group: str, artifact: str, version: str, indent: str) -> str:
    return (
        f"{indent}<dependency>\n"
        f"{indent}  <groupId>{group}</groupId>\n"
        f"{indent}  <artifactId>{artifact}</artifactId>\n"
        f"{indent}  <version>{version}</version>\n"
        f"{indent}</dependency>\n"
    )


POM = """<?xml version="1.0" encoding="UTF-8"?>
<!-- Generated by tools.kafka_dist: resolves the Apache Kafka {version} runtime. -->
<project xmlns="http://maven.apache.org/POM/4.0.0"
         xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
         xsi:schemaLocation="http://maven.apache.org/POM/4.0.0 https://maven.apache.org/xsd/maven-4.0.0.xsd">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local.kraft-server</groupId>
  <artifactId>kafka-dist</artifactId>
  <version>{version}</version>
  <packaging>pom</packaging>
  <properties>
    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
  </properties>
  <dependencyManagement>
    <dependencies>
{managed}    </dependencies>
  </dependencyManagement>
  <dependencies>
{deps}  </dependencies>
</project>
"""


LOG4J2_SERVER_YAML = """\
# Generated by tools.kafka_dist: server logging, INFO to stderr.
Configuration:
  name: kraft-dist-server
  Appenders:
    Console:
      name: STDERR
      target: SYSTEM_ERR
      PatternLayout:
        pattern: "[%d] %p %m (%c)%n"
  Loggers:
    Root:
      level: INFO
      AppenderRef:
        - ref: STDERR
    Logger:
      - name: org.apache.kafka.clients
        level: WARN
"""

LOG4J2_TOOLS_YAML = """\
# Generated by tools.kafka_dist: command-line tools, WARN to stderr.
Configuration:
  name: kraft-dist-tools
  Appenders:
    Console:
      name: STDERR
      target: SYSTEM_ERR
      PatternLayout:
        pattern: "[%d] %p %m (%c)%n"
  Loggers:
    Root:
      level: WARN
      AppenderRef:
        - ref: STDERR
"""

CONFIGS: dict[str, str] = {
    "log4j2.yaml": LOG4J2_SERVER_YAML,
    "tools-log4j2.yaml": LOG4J2_TOOLS_YAML,
}

KAFKA_RUN_CLASS = """\
#!/usr/bin/env bash
# Generated by tools.kafka_dist (Apache Kafka @VERSION@ from Maven Central).
# Usage: kafka-run-class <main-class> [args...]
# Environment: JAVA_HOME, KAFKA_HEAP_OPTS, KAFKA_JVM_PERFORMANCE_OPTS,
#              KAFKA_LOG4J_OPTS, KAFKA_OPTS, LOG_DIR.
set -euo pipefail
if [ $# -lt 1 ]; then
  echo "USAGE: $0 classname [opts]" >&2
  exit 1
fi
base_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

if [ -n "${JAVA_HOME:-}" ]; then
  JAVA="$JAVA_HOME/bin/java"
else
  JAVA="java"
fi

KAFKA_HEAP_OPTS="${KAFKA_HEAP_OPTS:--Xmx256M}"
KAFKA_JVM_PERFORMANCE_OPTS="${KAFKA_JVM_PERFORMANCE_OPTS:--server -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35 -XX:+ExplicitGCInvokesConcurrent -Djava.awt.headless=true}"
KAFKA_LOG4J_OPTS="${KAFKA_LOG4J_OPTS:--Dlog4j2.configurationFile=$base_dir/config/tools-log4j2.yaml}"
LOG_DIR="${LOG_DIR:-$base_dir/logs}"
# KAFKA_CDS=1: the release's class-data-sharing archive, where there is one (tools/kafka_dist/cds.py)
CDS_OPTS=""
if [ "${KAFKA_CDS:-0}" = 1 ] && [ -f "$base_dir/cds/kafka.jsa" ]; then
  CDS_OPTS="-XX:SharedArchiveFile=$base_dir/cds/kafka.jsa -Xlog:cds=off -Xlog:cds+dynamic=off"
fi

# Word splitting of the *_OPTS variables is intended (as in Kafka's script).
# shellcheck disable=SC2086
exec "$JAVA" $KAFKA_HEAP_OPTS $KAFKA_JVM_PERFORMANCE_OPTS $CDS_OPTS \\
  "-Dkafka.logs.dir=$LOG_DIR" $KAFKA_LOG4J_OPTS ${KAFKA_OPTS:-} \\
  -cp "$base_dir/libs/*" "$@"
"""

KAFKA_SERVER_START = """\
#!/usr/bin/env bash
# Generated by tools.kafka_dist. Usage: kafka-server-start <server.properties> [--override k=v ...]
set -euo pipefail
if [ $# -lt 1 ]; then
  echo "USAGE: $0 server.properties [--override property=value]*" >&2
  exit 1
fi
base_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export KAFKA_HEAP_OPTS="${KAFKA_HEAP_OPTS:--Xmx1G -Xms1G}"
export KAFKA_LOG4J_OPTS="${KAFKA_LOG4J_OPTS:--Dlog4j2.configurationFile=$base_dir/config/log4j2.yaml}"
exec "$base_dir/bin/kafka-run-class" @CLASS@ "$@"
"""

KAFKA_TOOL = """\
#!/usr/bin/env bash
# Generated by tools.kafka_dist: runs @CLASS@.
set -euo pipefail
base_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
exec "$base_dir/bin/kafka-run-class" @CLASS@ "$@"
"""


# The default release's recipe under the names callers used before the matrix.
_DEFAULT = Recipe(DEFAULT_RELEASE)
LOG4J2_VERSION = _DEFAULT.log4j2
SLF4J_VERSION = _DEFAULT.slf4j
DEPENDENCIES = _DEFAULT.dependencies
MANAGED = _DEFAULT.managed
REQUIRED_JARS = _DEFAULT.required_jars
TOOLS = _DEFAULT.tools


def pom_xml() -> str:
    return _DEFAULT.pom_xml()


def scripts() -> dict[str, str]:
    return _DEFAULT.scripts()


def fingerprint() -> str:
    return _DEFAULT.fingerprint()
