"""kafka-python driver for weir's conformance suite (internal/conformance).

Usage: /usr/bin/python3 kafka_python_client.py CONFIG_JSON

CONFIG_JSON holds "op" ("create", "produce" or "consume"), "bootstrap",
"topic", "partitions", "timeout_s", and for produce "acks" ("" for the
client's default, "1" or "all") and "compression" ("" for the default, or a
codec name). Every client setting not named here is kafka-python's default.

produce reads records from stdin, one JSON object a line:
{"k": key, "v": value, "h": [[name, value], ...], "ts": milliseconds}, with
keys and header and record values base64-encoded; it prints, for each record
in input order, {"p": partition, "o": offset} where the producer says it was
acknowledged.

consume reads every partition from its beginning to its end offset and
prints each record as {"p", "o", "k", "v", "h", "ts", "tt"}, encoded the
same way, "tt" being 0 for CreateTime and 1 for LogAppendTime.

Errors go to stderr with exit status 1.
"""

import base64
import json
import sys
import time

from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import KafkaAdminClient, NewTopic


def b64(data):
    return None if data is None else base64.b64encode(data).decode("ascii")


def unb64(text):
    return None if text is None else base64.b64decode(text)


def emit(obj):
    sys.stdout.write(json.dumps(obj, separators=(",", ":")) + "\n")


def create(cfg):
    admin = KafkaAdminClient(bootstrap_servers=cfg["bootstrap"])
    try:
        resp = admin.create_topics([NewTopic(cfg["topic"], cfg["partitions"], 1)])
        for topic, code, message in resp.topic_errors:
            if code != 0:
                raise RuntimeError("create %s: error %d %s" % (topic, code, message))
    finally:
        admin.close()


def produce(cfg):
    kwargs = {"bootstrap_servers": cfg["bootstrap"]}
    if cfg.get("acks"):
        kwargs["acks"] = "all" if cfg["acks"] == "all" else int(cfg["acks"])
    if cfg.get("compression"):
        kwargs["compression_type"] = cfg["compression"]
    producer = KafkaProducer(**kwargs)
    futures = []
    for line in sys.stdin:
        rec = json.loads(line)
        futures.append(producer.send(
            cfg["topic"],
            key=unb64(rec["k"]),
            value=unb64(rec["v"]),
            headers=[(h[0], unb64(h[1])) for h in rec["h"]],
            timestamp_ms=rec["ts"],
        ))
    producer.flush(timeout=cfg["timeout_s"])
    for i, fut in enumerate(futures):
        try:
            md = fut.get(timeout=cfg["timeout_s"])
        except Exception as exc:
            raise RuntimeError("record %d: %r" % (i, exc))
        emit({"p": md.partition, "o": md.offset})
    producer.close(timeout=cfg["timeout_s"])


def consume(cfg):
    consumer = KafkaConsumer(bootstrap_servers=cfg["bootstrap"])
    tps = [TopicPartition(cfg["topic"], p) for p in range(cfg["partitions"])]
    consumer.assign(tps)
    consumer.seek_to_beginning(*tps)
    ends = consumer.end_offsets(tps)
    pending = {tp for tp in tps if ends[tp] > 0}
    deadline = time.monotonic() + cfg["timeout_s"]
    while pending:
        if time.monotonic() > deadline:
            raise RuntimeError("timed out; partitions %s not read to their end offsets %s"
                               % (sorted(tp.partition for tp in pending), ends))
        for tp, msgs in consumer.poll(timeout_ms=500).items():
            for m in msgs:
                emit({
                    "p": m.partition, "o": m.offset, "k": b64(m.key), "v": b64(m.value),
                    "h": [[k, b64(v)] for k, v in (m.headers or [])],
                    "ts": m.timestamp, "tt": m.timestamp_type,
                })
                if m.offset >= ends[tp] - 1:
                    pending.discard(tp)
    consumer.close(autocommit=False)


def main():
    cfg = json.loads(sys.argv[1])
    ops = {"create": create, "produce": produce, "consume": consume}
    try:
        ops[cfg["op"]](cfg)
    except Exception as exc:
        sys.stdout.flush()
        sys.stderr.write("kafka-python %s failed: %r\n" % (cfg["op"], exc))
        sys.exit(1)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
