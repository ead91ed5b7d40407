"""A rebalance in which a worker keeps its partitions must not lose the events its event-time merge was holding."""
from __future__ import annotations

import json
import threading
import time
import uuid

import pytest
from kafka import KafkaProducer

from tests.hostile_corpus import merge_order, oracle_graph
from tests.kafka_helpers import run, worker_config
from tests.pipelines import ObservedPipeline
from vinestream.connectors.kafka import create_topic

pytestmark = pytest.mark.kafka


def _publish(bootstrap, topic, partition, events) -> None:
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=20)
    for ts, src, dst in events:
        producer.send(topic, json.dumps({"op": "add", "src": src, "dst": dst, "ts": ts}).encode(),
                      partition=partition)
    producer.flush()
    producer.close()


def _wait_for(condition, what: str, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.05)


def _scenario(kafka_bootstrap):
    """One run of the scenario: (the first worker's report, its pipeline, the oracle's graph)."""
    tag = uuid.uuid4().hex[:8]
    topic, other, group = f"rebalance-{tag}", f"rebalance-other-{tag}", f"g-rebalance-{tag}"
    create_topic(kafka_bootstrap, topic, 2)
    create_topic(kafka_bootstrap, other, 1)
    # partition 1's events are all later than partition 0's: the merge holds them (fetched, not released) while
    # the worker applies partition 0 in small, slow batches
    early = [(1000 + i, i, i + 1) for i in range(600)]
    late = [(100_000 + i, 10_000 + i, 10_001 + i) for i in range(600)]
    _publish(kafka_bootstrap, topic, 0, early)
    _publish(kafka_bootstrap, topic, 1, late)
    _publish(kafka_bootstrap, other, 0, [(5, 1, 2)])

    cfg = worker_config(kafka_bootstrap, topic, group, format="json", batch_size=50, max_poll_records=600,
                        idle_timeout=30)
    pipe = ObservedPipeline(slow_seconds=0.1)
    out = {}
    worker = threading.Thread(target=lambda: out.setdefault("a", run(cfg, pipeline=pipe)))
    worker.start()
    _wait_for(lambda: pipe.epoch >= 2, "the first worker's second batch")
    # a second member of the group, on another topic: an eager rebalance in which the first keeps both partitions.
    # Its own run is not checked: Tansu's group can take long to settle when a member leaves mid-join, which the
    # first worker did without the fix (it stopped as soon as the rebalance began)
    threading.Thread(target=lambda: run(worker_config(kafka_bootstrap, other, group, format="json", idle_timeout=20)),
                     daemon=True).start()
    worker.join(180)
    assert not worker.is_alive(), "the first worker did not stop"
    report, _ = out["a"]
    oracle = oracle_graph(merge_order({(topic, 0): [(t, 1, s, d, None) for t, s, d in early],
                                       (topic, 1): [(t, 1, s, d, None) for t, s, d in late]}))
    return report, pipe, oracle


def test_a_rebalance_that_keeps_a_partition_loses_none_of_its_held_events(kafka_bootstrap, tmp_path):
    for _attempt in range(4):
        report, pipe, oracle = _scenario(kafka_bootstrap)
        # kafka-python's group leader assigns only the topics it has metadata for: where the second member led a
        # later rebalance before it had the first one's topic, the first was left with no partition and idled out
        # (seen in about one run in four here). That is the client's, not the worker's: the scenario runs again.
        # The defect this test is for ends otherwise: at end_of_input, events missing
        if report.stopped_by != "idle_timeout":
            break
    assert report.stopped_by == "end_of_input", (report.stopped_by, report.events)
    assert report.events == 1200, f"{1200 - report.events} events lost in the rebalance"
    assert pipe.edges() == oracle.edges
