"""Apache Kafka's ``VerifiableProducer`` and ``VerifiableConsumer`` (kafka-tools) as JVM
processes, the clients of Kafka's replication system test. Each prints one JSON event a
line on stdout, which goes to a file in the work directory and is parsed as it grows:

* the producer's ``producer_send_success`` (topic, partition, offset, value) for every
  acknowledged message, ``producer_send_error`` for every given-up one, and at exit
  ``tool_data`` (how many it sent and how many were acknowledged);
* the consumer's ``records_consumed`` (a count and the offset range of each partition
  per poll) and, with ``--verbose``, ``record_data`` (each record's partition, offset
  and value).

The processes run in their own session; ``close`` kills what is left (the caller closes).
``version`` names the Kafka release whose tools jar runs them (default: the default release)."""
from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

from tools.kafka_dist import bin_path
from tools.kafka_dist.controller import tool_env
from tools.kafka_dist.releases import DEFAULT_RELEASE


class VerifiableTool:
    """One tool process and the JSON events it has printed so far."""

    CLASS = ""

    def __init__(self, workdir: Path, name: str, args: list[str], version: str | None = None) -> None:
        self.out_path = Path(workdir) / f"{name}.out"
        self.err_path = Path(workdir) / f"{name}.err"
        self.events: list[dict] = []
        self._pos = 0
        with open(self.out_path, "wb") as out, open(self.err_path, "wb") as err:
            self.proc = subprocess.Popen([str(bin_path("kafka-run-class", version)), self.CLASS, *args],
                                         env=tool_env(), stdin=subprocess.DEVNULL, stdout=out,
                                         stderr=err, start_new_session=True)

    def poll(self) -> list[dict]:
        """Parse the complete lines printed since the last call; every event so far."""
        with open(self.out_path, "rb") as f:
            f.seek(self._pos)
            chunk = f.read()
        end = chunk.rfind(b"\n") + 1
        for line in chunk[:end].splitlines():
            if line.startswith(b"{"):
                self.on_event(json.loads(line))
        self._pos += end
        return self.events

    def on_event(self, event: dict) -> None:
        self.events.append(event)

    def alive(self) -> bool:
        """Running; an AssertionError with its stderr if it has exited."""
        assert self.proc.poll() is None, f"{self.CLASS} exited {self.proc.returncode}\n{self.stderr_tail()}"
        return True

    def named(self, name: str) -> list[dict]:
        return [e for e in self.poll() if e.get("name") == name]

    def stop(self, timeout: float = 60.0) -> bool:
        """SIGTERM (the tool's shutdown hook flushes and prints its last events), then wait;
        whether it printed ``shutdown_complete``."""
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.close()
        return bool(self.named("shutdown_complete"))

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait(10)

    def stderr_tail(self, n: int = 30) -> str:
        return "\n".join(self.err_path.read_text(errors="replace").splitlines()[-n:])


# The tool sets retries=0 itself (idempotence then off); Kafka's replication test runs it
# idempotent too, with these (kafkatest's verifiable_producer service), and so do we.
IDEMPOTENT = {"enable.idempotence": "true", "retries": "2147483647",
              "max.in.flight.requests.per.connection": "5"}


def producer_config_flag(version: str | None) -> str:
    """The producer's properties-file option: ``--command-config`` from Kafka 4.2 (KIP-1147),
    ``--producer.config`` before (still taken, deprecated, by 4.2 and later)."""
    release = tuple(int(x) for x in (version or DEFAULT_RELEASE).split(".")[:2])
    return "--command-config" if release >= (4, 2) else "--producer.config"


class VerifiableProducer(VerifiableTool):
    """Integers 0, 1, 2, ... as values; ``acked`` maps (partition, offset) to the value."""

    CLASS = "org.apache.kafka.tools.VerifiableProducer"

    def __init__(self, workdir: Path, bootstrap: str, topic: str, throughput: int,
                 max_messages: int = -1, version: str | None = None) -> None:
        self.acked: dict[tuple[int, int], str] = {}
        self.errors: list[dict] = []
        config = Path(workdir) / "producer.properties"
        config.write_text("".join(f"{k}={v}\n" for k, v in IDEMPOTENT.items()))
        super().__init__(workdir, "producer", [
            "--bootstrap-server", bootstrap, "--topic", topic, "--acks", "-1",  # all
            "--throughput", str(throughput), "--max-messages", str(max_messages),
            producer_config_flag(version), str(config)], version)

    def on_event(self, event: dict) -> None:
        name = event.get("name")
        if name == "producer_send_success":
            self.acked[(event["partition"], event["offset"])] = event["value"]
        elif name == "producer_send_error":
            self.errors.append(event)
        else:
            super().on_event(event)

    def num_acked(self) -> int:
        self.poll()
        return len(self.acked)


class VerifiableConsumer(VerifiableTool):
    """``--verbose``: ``consumed`` maps (partition, offset) to the value; ``ranges`` holds
    each ``records_consumed`` partition entry as (partition, minOffset, maxOffset, count)."""

    CLASS = "org.apache.kafka.tools.VerifiableConsumer"

    def __init__(self, workdir: Path, bootstrap: str, topic: str, group: str,
                 version: str | None = None) -> None:
        self.consumed: dict[tuple[int, int], str] = {}
        self.ranges: list[tuple[int, int, int, int]] = []
        self.summed = 0
        super().__init__(workdir, "consumer", [
            "--bootstrap-server", bootstrap, "--topic", topic, "--group-id", group,
            "--reset-policy", "earliest", "--verbose"], version)

    def on_event(self, event: dict) -> None:
        name = event.get("name")
        if name == "record_data":
            self.consumed[(event["partition"], event["offset"])] = event["value"]
        elif name == "records_consumed":
            self.summed += event["count"]
            self.ranges.extend((p["partition"], p["minOffset"], p["maxOffset"], p["count"])
                               for p in event["partitions"])
        else:
            super().on_event(event)

    def covered(self, partition: int, offset: int) -> bool:
        """Whether a ``records_consumed`` range of ``partition`` holds ``offset``."""
        return any(p == partition and lo <= offset <= hi for p, lo, hi, _ in self.ranges)
