"""Consumer settings that kafka-python or the broker refuse end the run with one line; they are not an outage.

QA: ``--session-timeout-ms 1`` passed ``--check``, then kafka-python's "Heartbeat interval must be lower than the
session timeout (100 v 1)" was retried forever as if the broker were down.  The config refuses such timeouts
(tests/test_config.py); what gets past it (an extra kafka option, a broker with narrower bounds) is refused here.
"""
from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import pytest
from kafka.errors import InvalidSessionTimeoutError

from vinestream.connectors.kafka import KafkaSource
from vinestream.connectors.tansu import free_port

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.kafka
def test_settings_kafka_python_refuses_are_an_error_not_a_retry(kafka_bootstrap):
    stop = threading.Event()        # were it retried, the retries end here (and the test fails)
    timer = threading.Timer(30, stop.set)
    timer.start()
    try:                            # kafka-python checks the heartbeat once it reached the broker
        with pytest.raises(ValueError, match=r"kafka-python refuses the consumer settings: .*Heartbeat interval "
                                             r"must be lower than the session timeout"):
            KafkaSource(kafka_bootstrap, group_id="g", topics=["t"], stop=stop,
                        consumer_options={"session_timeout_ms": 50, "heartbeat_interval_ms": 100})
    finally:
        timer.cancel()
    assert not stop.is_set()


class _RefusingConsumer:
    def __init__(self):
        self.config = {"session_timeout_ms": 7000}

    def poll(self, **_):
        raise InvalidSessionTimeoutError()


def test_a_session_timeout_the_broker_refuses_ends_the_run():
    """kafka-python raises INVALID_SESSION_TIMEOUT (a broker whose bounds are narrower than the defaults) from
    poll; polling again gets the same answer, so it is an error naming the setting, not a retry."""
    source = KafkaSource("127.0.0.1:9", group_id="g", topics=["t"], connect=False)
    source.consumer = _RefusingConsumer()
    with pytest.raises(ValueError, match="refuses the consumer group session timeout of 7000 ms"):
        source.poll(timeout=0.1)


@pytest.mark.parametrize("flags", [["--session-timeout-ms", "1"], ["--session-timeout-ms", "1", "--check"],
                                   ["--kafka-option", "heartbeat_interval_ms=20000", "--check"]])
def test_run_refuses_a_session_timeout_in_one_line(flags):
    proc = subprocess.run([sys.executable, "-m", "vinestream", "run", "--bootstrap-servers", f"127.0.0.1:{free_port()}",
                           "--topic", "t", "--backend", "cpu", "--metrics-port", "-1", *flags], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("vinestream: error: "), proc.stderr[-2000:]
    assert "session" in proc.stderr


@pytest.mark.parametrize("flags", [["--topic", "t", "--dead-letter-topic", "t"],
                                   ["--topic", "t", "--dead-letter-topic", "t", "--check"],
                                   ["--topic-pattern", "t.*", "--results-topic", "t-results", "--check"]])
def test_run_refuses_an_output_topic_that_is_an_input_in_one_line(flags):
    """QA: --dead-letter-topic equal to the input topic looped without end, and --check said ok."""
    proc = subprocess.run([sys.executable, "-m", "vinestream", "run", "--bootstrap-servers", f"127.0.0.1:{free_port()}",
                           "--backend", "cpu", "--metrics-port", "-1", *flags], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert proc.stderr.count("\n") == 1 and "is also an input topic" in proc.stderr, proc.stderr[-2000:]
