"""confluent-kafka-python driver for weir's conformance suite.

Usage: /usr/bin/python3 confluent_kafka_client.py CONFIG_JSON

The configuration, input and output are those of kafka_python_client.py.
Every client setting not named there is librdkafka's default, except that
the consumer, which the Python client refuses to create without a group.id,
gets one and enable.auto.commit=false: it reads assigned partitions by
offset and never commits, so no consumer group is involved.
"""

import base64
import json
import sys
import time

from confluent_kafka import (Consumer, KafkaException, Producer, TopicPartition,
                             TIMESTAMP_CREATE_TIME, TIMESTAMP_LOG_APPEND_TIME)
from confluent_kafka.admin import AdminClient, NewTopic


def b64(data):
    return None if data is None else base64.b64encode(data).decode("ascii")


def unb64(text):
    return None if text is None else base64.b64decode(text)


def emit(obj):
    sys.stdout.write(json.dumps(obj, separators=(",", ":")) + "\n")


def create(cfg):
    admin = AdminClient({"bootstrap.servers": cfg["bootstrap"]})
    futures = admin.create_topics(
        [NewTopic(cfg["topic"], num_partitions=cfg["partitions"], replication_factor=1)])
    for fut in futures.values():
        fut.result(timeout=cfg["timeout_s"])


def produce(cfg):
    conf = {"bootstrap.servers": cfg["bootstrap"]}
    if cfg.get("acks"):
        conf["acks"] = cfg["acks"]
    if cfg.get("compression"):
        conf["compression.type"] = cfg["compression"]
    producer = Producer(conf)
    results = []

    def on_delivery(i):
        def report(err, msg):
            results[i] = (err, msg.partition(), msg.offset())
        return report

    for line in sys.stdin:
        rec = json.loads(line)
        results.append(None)
        args = dict(
            key=unb64(rec["k"]),
            value=unb64(rec["v"]),
            headers=[(h[0], unb64(h[1])) for h in rec["h"]],
            timestamp=rec["ts"],
            on_delivery=on_delivery(len(results) - 1),
        )
        while True:
            try:
                producer.produce(cfg["topic"], **args)
                break
            except BufferError:
                producer.poll(0.1)  # local queue full: serve delivery reports
        producer.poll(0)
    left = producer.flush(cfg["timeout_s"])
    if left:
        raise RuntimeError("%d records still undelivered after %ss" % (left, cfg["timeout_s"]))
    for i, res in enumerate(results):
        if res is None:
            raise RuntimeError("record %d: no delivery report" % i)
        err, partition, offset = res
        if err is not None:
            raise RuntimeError("record %d: %s" % (i, err))
        emit({"p": partition, "o": offset})


TIMESTAMP_TYPES = {TIMESTAMP_CREATE_TIME: 0, TIMESTAMP_LOG_APPEND_TIME: 1}


def consume(cfg):
    consumer = Consumer({
        "bootstrap.servers": cfg["bootstrap"],
        "group.id": "weir-conformance-unused",
        "enable.auto.commit": False,
    })
    ends = {}
    for p in range(cfg["partitions"]):
        _, high = consumer.get_watermark_offsets(
            TopicPartition(cfg["topic"], p), timeout=cfg["timeout_s"])
        ends[p] = high
    consumer.assign([TopicPartition(cfg["topic"], p, 0) for p in range(cfg["partitions"])])
    pending = {p for p, end in ends.items() if end > 0}
    deadline = time.monotonic() + cfg["timeout_s"]
    while pending:
        if time.monotonic() > deadline:
            raise RuntimeError("timed out; partitions %s not read to their end offsets %s"
                               % (sorted(pending), ends))
        msg = consumer.poll(0.5)
        if msg is None:
            continue
        if msg.error():
            raise KafkaException(msg.error())
        ts_type, ts = msg.timestamp()
        emit({
            "p": msg.partition(), "o": msg.offset(), "k": b64(msg.key()), "v": b64(msg.value()),
            "h": [[k, b64(v)] for k, v in (msg.headers() or [])],
            "ts": ts, "tt": TIMESTAMP_TYPES.get(ts_type, -1),
        })
        if msg.offset() >= ends[msg.partition()] - 1:
            pending.discard(msg.partition())
    consumer.close()


def main():
    cfg = json.loads(sys.argv[1])
    ops = {"create": create, "produce": produce, "consume": consume}
    try:
        ops[cfg["op"]](cfg)
    except Exception as exc:
        sys.stdout.flush()
        sys.stderr.write("confluent-kafka %s failed: %r\n" % (cfg["op"], exc))
        sys.exit(1)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
