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

KAFKA_VERSION = "4.3.1"
SCALA_BINARY_VERSION = "2.13"

# The logging backend the 4.3.1 release tarball ships in libs/ (Kafka's
# build adds these as release-only dependencies, so they are not in the
# published poms): log4j2 core + the slf4j-1.x binding + the log4j 1.2
# bridge. 2.25.4 is the log4j version kafka-server-4.3.1.pom declares;
# slf4j-api 1.7.36 is what every Kafka 4.3.1 pom declares (jetty 12 would
# otherwise drag in slf4j 2.x, which the 1.x binding cannot serve).
LOG4J2_VERSION = "2.25.4"
SLF4J_VERSION = "1.7.36"

MAVEN_DEPENDENCY_PLUGIN = "org.apache.maven.plugins:maven-dependency-plugin:3.8.1"

# (groupId, artifactId, version)
DEPENDENCIES: tuple[tuple[str, str, str], ...] = (
    ("org.apache.kafka", f"kafka_{SCALA_BINARY_VERSION}", KAFKA_VERSION),
    ("org.apache.kafka", "kafka-tools", KAFKA_VERSION),
    ("org.apache.logging.log4j", "log4j-api", LOG4J2_VERSION),
    ("org.apache.logging.log4j", "log4j-core", LOG4J2_VERSION),
    ("org.apache.logging.log4j", "log4j-slf4j-impl", LOG4J2_VERSION),
    ("org.apache.logging.log4j", "log4j-1.2-api", LOG4J2_VERSION),
)

# Versions forced over Maven's nearest-wins mediation.
MANAGED: tuple[tuple[str, str, str], ...] = (
    ("org.slf4j", "slf4j-api", SLF4J_VERSION),
    ("org.apache.logging.log4j", "log4j-api", LOG4J2_VERSION),
    ("org.apache.logging.log4j", "log4j-core", LOG4J2_VERSION),
)

# Jars that must be in libs/ for the preparation to count as complete.
REQUIRED_JARS: tuple[str, ...] = (
    f"kafka_{SCALA_BINARY_VERSION}-{KAFKA_VERSION}.jar",
    f"kafka-tools-{KAFKA_VERSION}.jar",
    f"kafka-clients-{KAFKA_VERSION}.jar",
    f"kafka-raft-{KAFKA_VERSION}.jar",
    f"kafka-metadata-{KAFKA_VERSION}.jar",
    f"kafka-server-common-{KAFKA_VERSION}.jar",
    f"log4j-core-{LOG4J2_VERSION}.jar",
    f"log4j-slf4j-impl-{LOG4J2_VERSION}.jar",
    f"slf4j-api-{SLF4J_VERSION}.jar",
)

# Wrapper script -> (main class, jar that must contain it). Class names were
# checked against the 4.3.1 jars: DumpLogSegments moved from core
# (kafka.tools) to the tools module in 4.x.
TOOLS: dict[str, tuple[str, str]] = {
    "kafka-storage": ("kafka.tools.StorageTool", f"kafka_{SCALA_BINARY_VERSION}-{KAFKA_VERSION}.jar"),
    "kafka-server-start": ("kafka.Kafka", f"kafka_{SCALA_BINARY_VERSION}-{KAFKA_VERSION}.jar"),
    "kafka-metadata-quorum": (
        "org.apache.kafka.tools.MetadataQuorumCommand",
        f"kafka-tools-{KAFKA_VERSION}.jar",
    ),
    "kafka-dump-log": ("org.apache.kafka.tools.DumpLogSegments", f"kafka-tools-{KAFKA_VERSION}.jar"),
    "kafka-console-consumer": (
        "org.apache.kafka.tools.consumer.ConsoleConsumer",
        f"kafka-tools-{KAFKA_VERSION}.jar",
    ),
    "kafka-features": ("org.apache.kafka.tools.FeatureCommand", f"kafka-tools-{KAFKA_VERSION}.jar"),
    # Broker-side tools (a quorum of ours with Apache Kafka brokers attached).
    "kafka-topics": ("org.apache.kafka.tools.TopicCommand", f"kafka-tools-{KAFKA_VERSION}.jar"),
    "kafka-console-producer": ("org.apache.kafka.tools.ConsoleProducer", f"kafka-tools-{KAFKA_VERSION}.jar"),
    "kafka-consumer-groups": (
        "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand",
        f"kafka-tools-{KAFKA_VERSION}.jar",
    ),
    "kafka-broker-api-versions": (
        "org.apache.kafka.tools.BrokerApiVersionsCommand",
        f"kafka-tools-{KAFKA_VERSION}.jar",
    ),
    "kafka-producer-perf-test": ("org.apache.kafka.tools.ProducerPerformance", f"kafka-tools-{KAFKA_VERSION}.jar"),
    "kafka-consumer-perf-test": ("org.apache.kafka.tools.ConsumerPerformance", f"kafka-tools-{KAFKA_VERSION}.jar"),
    "kafka-cluster": ("org.apache.kafka.tools.ClusterTool", f"kafka-tools-{KAFKA_VERSION}.jar"),
    "kafka-reassign-partitions": (
        "org.apache.kafka.tools.reassign.ReassignPartitionsCommand",
        f"kafka-tools-{KAFKA_VERSION}.jar",
    ),
    "kafka-leader-election": ("org.apache.kafka.tools.LeaderElectionCommand", f"kafka-tools-{KAFKA_VERSION}.jar"),
    "kafka-configs": ("kafka.admin.ConfigCommand", f"kafka_{SCALA_BINARY_VERSION}-{KAFKA_VERSION}.jar"),
    "kafka-acls": ("org.apache.kafka.tools.AclCommand", f"kafka-tools-{KAFKA_VERSION}.jar"),
}


def _dep_xml(group: str, artifact: str, version: str, indent: str) -> str:
    return (
        f"{indent}<dependency>\n"
        f"{indent}  <groupId>{group}</groupId>\n"
        f"{indent}  <artifactId>{artifact}</artifactId>\n"
        f"{indent}  <version>{version}</version>\n"
        f"{indent}</dependency>\n"
    )


def pom_xml() -> str:
    managed = "".join(_dep_xml(*d, indent="      ") for d in MANAGED)
    deps = "".join(_dep_xml(*d, indent="    ") for d in DEPENDENCIES)
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<!-- Generated by tools.kafka_dist: resolves the Apache Kafka {KAFKA_VERSION} runtime. -->
<project xmlns="http://maven.apache.org/POM/4.0.0"
         xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
         xsi:schemaLocation="http://maven.apache.org/POM/4.0.0 https://maven.apache.org/xsd/maven-4.0.0.xsd">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local.kraft-server</groupId>
  <artifactId>kafka-dist</artifactId>
  <version>{KAFKA_VERSION}</version>
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

# Word splitting of the *_OPTS variables is intended (as in Kafka's script).
# shellcheck disable=SC2086
exec "$JAVA" $KAFKA_HEAP_OPTS $KAFKA_JVM_PERFORMANCE_OPTS \\
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


def scripts() -> dict[str, str]:
    out = {"kafka-run-class": KAFKA_RUN_CLASS.replace("@VERSION@", KAFKA_VERSION)}
    for name, (cls, _jar) in TOOLS.items():
        template = KAFKA_SERVER_START if name == "kafka-server-start" else KAFKA_TOOL
        out[name] = template.replace("@CLASS@", cls)
    return out


def fingerprint() -> str:
    """A hash of everything that shapes the distribution."""
    blob = json.dumps(
        {
            "version": KAFKA_VERSION,
            "pom": pom_xml(),
            "plugin": MAVEN_DEPENDENCY_PLUGIN,
            "required": REQUIRED_JARS,
            "tools": TOOLS,
            "configs": CONFIGS,
            "scripts": scripts(),
        },
        sort_keys=True,
    )
    return hashlib.sha256(blob.encode()).hexdigest()
