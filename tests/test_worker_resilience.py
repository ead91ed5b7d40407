"""The worker under trouble: a broker that goes away, and a pipeline slower than the topic (backpressure)."""
import threading
import time

import pytest

from tests.event_logs import oracle_of, random_events, write_log
from tests.kafka_helpers import DECODER, worker_config
from tests.pipelines import ObservedPipeline
from vinestream.connectors.kafka import produce
from vinestream.connectors.tansu import TansuBroker, tansu_binary
from vinestream.stream.app.run import kafka_application

pytestmark = pytest.mark.kafka


def start_worker(cfg, pipeline):
    worker = kafka_application(cfg, lambda: pipeline, decoder=DECODER)
    outcome = {}

    def body():
        try:
            outcome["report"] = worker.run()
        except BaseException as exc:      # the test asserts there is none
            outcome["error"] = exc
    thread = threading.Thread(target=body, daemon=True)
    thread.start()
    return worker, thread, outcome


def wait_for(predicate, timeout_s):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return False


def test_worker_survives_the_broker_going_away(tmp_path):
    binary = tansu_binary()
    if binary is None:
        pytest.skip("Tansu broker binary not found")
    broker = TansuBroker(binary).start()
    log = random_events(1500, seed=21)
    produce(write_log(tmp_path / "log.parquet", log), "outage", broker.bootstrap, fmt="arrow",
            partitions=1, batch_events=300)
    pipeline = ObservedPipeline()
    cfg = worker_config(broker.bootstrap, "outage", "g-outage", format="arrow", until_end=False,
                        idle_timeout=None, batch_size=300)
    worker, thread, outcome = start_worker(cfg, pipeline)
    try:
        assert wait_for(lambda: worker.report.events == 1500, 60), "worker did not consume the log"
        assert pipeline.edges() == oracle_of(log).edges
        broker.stop()                          # the broker goes away under a running worker
        time.sleep(8)                          # polls and commits fail and are retried meanwhile
        assert thread.is_alive() and "error" not in outcome
    finally:
        worker.request_stop("test")            # what SIGTERM does
        thread.join(60)
        broker.stop()
    assert not thread.is_alive(), "worker did not stop after the broker went away"
    assert "error" not in outcome, outcome.get("error")
    assert outcome["report"].stopped_by == "test"
    assert pipeline.edges() == oracle_of(log).edges        # nothing applied twice or lost


def test_a_slow_pipeline_pauses_the_partitions(kafka_bootstrap, tmp_path):
    """With one batch in flight allowed and a slow apply, the consumer pauses instead of buffering."""
    log = random_events(4000, seed=22)
    produce(write_log(tmp_path / "log.parquet", log), "slow", kafka_bootstrap, fmt="arrow",
            partitions=1, batch_events=200)
    pipeline = ObservedPipeline(slow_seconds=0.3)
    cfg = worker_config(kafka_bootstrap, "slow", "g-slow", format="arrow", batch_size=200,
                        max_poll_records=1, max_inflight_batches=1)
    worker, thread, outcome = start_worker(cfg, pipeline)
    paused_seen = wait_for(lambda: worker.source is not None and worker.source.is_paused(), 30)
    most_buffered = 0
    while thread.is_alive():
        most_buffered = max(most_buffered, worker.pending.num_events)
        time.sleep(0.02)
    assert "error" not in outcome, outcome.get("error")
    assert paused_seen
    assert most_buffered <= 3 * cfg.batch_size        # bounded: never the whole topic in memory
    assert outcome["report"].events == 4000
    assert pipeline.edges() == oracle_of(log).edges
