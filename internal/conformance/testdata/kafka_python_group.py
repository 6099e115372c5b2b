"""kafka-python group consumer for weir's consumer group tests
(internal/conformance/groups_proc_test.go).

Usage: /usr/bin/python3 kafka_python_group.py CONFIG_JSON

CONFIG_JSON holds "bootstrap", "group", "topic", "id" (the client.id),
"reset" (auto.offset.reset: "earliest" or "latest") and, when not 0,
"session_timeout_ms". Every other setting is kafka-python's default, except
enable_auto_commit=False: the consumer commits each record's offset
synchronously (commit with the record's offset + 1) before it prints the
record as {"p": partition, "o": offset, "k": key, "c": committed}, one JSON
object a line, "c" false when the commit failed.

It consumes until SIGTERM, then closes the consumer (leaving the group) and
exits 0. Errors go to stderr.
"""

import json
import signal
import sys

from kafka import KafkaConsumer
from kafka.errors import KafkaError
from kafka.structs import OffsetAndMetadata

stopping = []


def emit(obj):
    sys.stdout.write(json.dumps(obj, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def main():
    cfg = json.loads(sys.argv[1])
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))
    kwargs = {
        "bootstrap_servers": cfg["bootstrap"],
        "group_id": cfg["group"],
        "client_id": cfg["id"],
        "auto_offset_reset": cfg["reset"],
        "enable_auto_commit": False,
    }
    if cfg.get("session_timeout_ms"):
        kwargs["session_timeout_ms"] = cfg["session_timeout_ms"]
    consumer = KafkaConsumer(**kwargs)
    consumer.subscribe([cfg["topic"]])
    while not stopping:
        for tp, msgs in consumer.poll(timeout_ms=100).items():
            for m in msgs:
                committed = True
                try:
                    consumer.commit({tp: OffsetAndMetadata(m.offset + 1, None)})
                except KafkaError as exc:
                    committed = False
                    sys.stderr.write("commit %s-%d offset %d: %r\n" % (tp.topic, tp.partition, m.offset, exc))
                emit({"p": m.partition, "o": m.offset, "k": m.key.decode("ascii"), "c": committed})
    consumer.close(autocommit=False)


if __name__ == "__main__":
    main()
