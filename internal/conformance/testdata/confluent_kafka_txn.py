"""Transactional confluent-kafka producer against weir, which does not
support transactions yet.

Usage: /usr/bin/python3 confluent_kafka_txn.py BOOTSTRAP TIMEOUT_S

Runs init_transactions() and prints one JSON line describing how it
ended: {"ok": true} if it succeeded, else the KafkaError's name, whether
librdkafka marks it fatal and retriable, and its text.
"""

import json
import sys

from confluent_kafka import KafkaException, Producer


def main():
    bootstrap, timeout_s = sys.argv[1], float(sys.argv[2])
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": "weir-conformance-txn"})
    try:
        producer.init_transactions(timeout_s)
        out = {"ok": True}
    except KafkaException as e:
        err = e.args[0]
        out = {"ok": False, "name": err.name(), "fatal": err.fatal(),
               "retriable": err.retriable(), "text": err.str()}
    sys.stdout.write(json.dumps(out) + "\n")


if __name__ == "__main__":
    main()
