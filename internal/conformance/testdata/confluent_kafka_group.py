"""confluent-kafka-python group consumer for weir's consumer group tests
(internal/conformance/groups_proc_test.go).

Usage: /usr/bin/python3 confluent_kafka_group.py CONFIG_JSON

The configuration and output are those of kafka_python_group.py. Every
setting not named there is librdkafka's default, except
enable.auto.commit=false: the consumer commits each message synchronously
(commit(message=m, asynchronous=False)) before it prints it.

It consumes until SIGTERM, then closes the consumer (leaving the group) and
exits 0. Errors go to stderr.
"""

import json
import signal
import sys

from confluent_kafka import Consumer, KafkaException

stopping = []


def emit(obj):
    sys.stdout.write(json.dumps(obj, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def main():
    cfg = json.loads(sys.argv[1])
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))
    conf = {
        "bootstrap.servers": cfg["bootstrap"],
        "group.id": cfg["group"],
        "client.id": cfg["id"],
        "auto.offset.reset": cfg["reset"],
        "enable.auto.commit": False,
    }
    if cfg.get("session_timeout_ms"):
        conf["session.timeout.ms"] = cfg["session_timeout_ms"]
    consumer = Consumer(conf)
    consumer.subscribe([cfg["topic"]])
    while not stopping:
        m = consumer.poll(0.1)
        if m is None:
            continue
        if m.error():
            sys.stderr.write("consume: %s\n" % m.error())
            continue
        committed = True
        try:
            consumer.commit(message=m, asynchronous=False)
        except KafkaException as exc:
            committed = False
            sys.stderr.write("commit %s-%d offset %d: %s\n" % (m.topic(), m.partition(), m.offset(), exc))
        emit({"p": m.partition(), "o": m.offset(), "k": m.key().decode("ascii"), "c": committed})
    consumer.close()


if __name__ == "__main__":
    main()
