"""The clients that run through every cycle: per topic one Kafka VerifiableProducer
(acks=all, idempotent, ``tests/support/verifiable.py``) and one VerifiableConsumer.

The consumer keeps the last value it was given at each offset (a log truncated and
written again under an acknowledged message shows as another value there); so does the
producer, which also keeps each ack a later one at the same offset replaced. The
producer's events carry the tool's clock (``timestamp``, ms), from which the longest
time without an ack is taken."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tests.support.verifiable import VerifiableConsumer, VerifiableProducer

THROUGHPUT = 100  # messages a second per producer


class Producer(VerifiableProducer):
    def __init__(self, *args, **kwargs) -> None:
        self.ack_times: list[int] = []  # the tool's ms clock at each ack, in order
        # (partition, offset, value) of each ack that a later ack at the same offset replaced in
        # ``acked``: the log was truncated under it and written again (an unclean election)
        self.replaced: list[tuple[int, int, str]] = []
        super().__init__(*args, **kwargs)

    def on_event(self, event: dict) -> None:
        if event.get("name") == "producer_send_success":
            self.ack_times.append(event["timestamp"])
            key = (event["partition"], event["offset"])
            if self.acked.get(key, event["value"]) != event["value"]:
                self.replaced.append((*key, self.acked[key]))
        super().on_event(event)


def longest_gap_ms(times: list[int]) -> int:
    return max((b - a for a, b in zip(times, times[1:])), default=0)


@dataclass
class TopicClients:
    topic: str
    producer: Producer
    consumer: VerifiableConsumer

    def poll(self) -> None:
        self.producer.poll()
        self.consumer.poll()

    def alive(self) -> bool:
        return self.producer.alive() and self.consumer.alive()

    def close(self) -> None:
        self.producer.close()
        self.consumer.close()


def start_clients(workdir: Path, bootstrap: str, topic: str) -> TopicClients:
    work = Path(workdir) / topic
    work.mkdir(parents=True, exist_ok=True)
    consumer = VerifiableConsumer(work, bootstrap, topic, group=f"{topic}-group")
    try:
        producer = Producer(work, bootstrap, topic, THROUGHPUT)
    except BaseException:
        consumer.close()
        raise
    return TopicClients(topic, producer, consumer)
