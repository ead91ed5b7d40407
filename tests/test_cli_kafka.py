"""`vinestream produce` then `vinestream run` through the CLI, on the bundled sample, against a real broker."""
import json
import logging
import threading
import time
import uuid

import pyarrow.parquet as pq
import pytest
from kafka import KafkaAdminClient, KafkaProducer

from tests.event_logs import oracle_of
from tests.kafka_helpers import committed
from vinestream.connectors.kafka import KafkaSource, create_topic
from vinestream.connectors.sample import sample_log_path
from vinestream.stream.app.cli import main

pytestmark = pytest.mark.kafka


@pytest.mark.parametrize("fmt", ["json", "arrow"])
def test_produce_and_run_the_sample(kafka_bootstrap, tmp_path, fmt, capsys):
    topic, group, out = f"sample-{fmt}", f"cli-{fmt}", tmp_path / "out"
    log = pq.read_table(sample_log_path())
    assert main(["produce", str(sample_log_path()), "--topic", topic, "--format", fmt,
                 "--bootstrap-servers", kafka_bootstrap, "--partitions", "1",
                 "--lines-per-message", "500"]) == 0
    produced = capsys.readouterr().out
    assert "59835" in produced.replace(",", "")
    assert main(["run", "--bootstrap-servers", kafka_bootstrap, "--topic", topic, "--group", group,
                 "--format", fmt, "--structure", "graphvine", "--jobs", "triangles", "--out", str(out),
                 "--metrics-port", "-1", "--until-end", "--batch-size", "20000",
                 "--session-timeout-ms", "6000", "--max-poll-interval-ms", "10000"]) == 0
    oracle = oracle_of(log)
    summary = pq.read_table(out / "summary.parquet").to_pylist()
    assert sum(row["events"] for row in summary) == log.num_rows
    assert summary[-1]["edges"] == len(oracle.edges) and summary[-1]["vertices"] == len(oracle.vertices)
    last_offsets = json.loads(summary[-1]["source_offsets"])
    assert committed(kafka_bootstrap, group, topic, 1) == {0: last_offsets[f"{topic}:0"]}
    triangles = pq.read_table(out / "triangles" / f"epoch={summary[-1]['epoch']}" / "part-0.parquet")
    assert triangles.num_rows == len(oracle.vertices)


def test_run_rejects_an_unknown_structure_before_connecting(capsys):
    assert main(["run", "--bootstrap-servers", "127.0.0.1:9", "--topic", "t", "--structure", "nope"]) == 2
    assert "--structure: 'nope' is not valid; expected one of" in capsys.readouterr().err


def test_the_readme_kafka_quick_start_works_as_written(kafka_bootstrap, tmp_path, monkeypatch, capsys):
    """The README's quick-start commands, literally, with the test broker in place of localhost:9092."""
    import re
    import shlex
    from pathlib import Path

    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    block = re.search(r"### Quick start\n.*?```bash\n(.*?)```", readme, flags=re.S).group(1)
    commands = [line for line in block.splitlines() if line.startswith("vinestream ")]
    assert [c.split()[1] for c in commands] == ["produce", "run", "report"]
    root = Path(__file__).resolve().parent.parent
    monkeypatch.chdir(tmp_path)
    (tmp_path / "connectors").symlink_to(root / "connectors")      # run from "the repository root"
    for command in commands:
        argv = shlex.split(command.replace("localhost:9092", kafka_bootstrap))[1:]
        if argv[0] == "report":
            pytest.importorskip("matplotlib")
        assert main(argv) == 0, capsys.readouterr().err
    summary = pq.read_table(tmp_path / "out-kafka" / "summary.parquet").to_pylist()
    oracle = oracle_of(pq.read_table(sample_log_path()))
    assert sum(r["events"] for r in summary) == 59_835 and summary[-1]["edges"] == len(oracle.edges)
    assert summary[-1]["triangles"] == 14_319                      # SNAP's CollegeMsg triangle count
    assert (tmp_path / "out-kafka" / "report.html").exists()
    # the backend that ran, not the flag's "auto" (the default): the page was titled "graphvine on auto"
    backend = json.loads((tmp_path / "out-kafka" / "_run.json").read_text())["backend"]
    assert backend in ("cpu", "gpu")
    assert f"<h1>vinestream run: graphvine on {backend}</h1>" in (tmp_path / "out-kafka" / "report.html").read_text()


def test_produce_takes_a_directory_and_logs_without_weight_or_ts(kafka_bootstrap, tmp_path, capsys):
    """`produce` reads its LOGs as replay does: a directory is its Parquet files (it went to the producer as a path:
    "internal error: OSError: ... is a directory"), and a log without the optional weight and ts columns is
    published with them null (pyarrow's "Target schema's field names are not matching ..." before)."""
    import pyarrow as pa

    from tests.kafka_helpers import read_topic
    from vinestream.stream.events.decode import decode
    logs = tmp_path / "logs"
    logs.mkdir()
    pq.write_table(pa.table({"op": pa.array([1, 1], pa.int8()), "src": [1, 2], "dst": [2, 3]}), logs / "a.parquet")
    pq.write_table(pa.table({"op": pa.array([2], pa.int8()), "src": [1], "dst": [2]}), tmp_path / "b.parquet")
    assert main(["produce", str(logs), str(tmp_path / "b.parquet"), "--topic", "bare-logs", "--partitions", "1",
                 "--bootstrap-servers", kafka_bootstrap]) == 0, capsys.readouterr().err
    decoded = decode([m.value for m in read_topic(kafka_bootstrap, "bare-logs")], "arrow", source="bare-logs",
                     partition=0)
    assert decoded.events.select(["op", "src", "dst"]).to_pydict() == {"op": [1, 1, 2], "src": [1, 2, 1],
                                                                       "dst": [2, 3, 2]}
    assert decoded.events.column("weight").null_count == decoded.events.column("ts").null_count == 3


def test_run_until_end_of_a_topic_that_does_not_exist_is_one_line_naming_the_likely_one(kafka_bootstrap, tmp_path,
                                                                                      capsys):
    """QA: `run --until-end` of a misspelt topic stopped at once, exit 0, having read nothing: subscribing asked
    for the topic's metadata, and Tansu created it, empty (Apache Kafka does too, with auto.create.topics.enable).
    The worker now looks the topics up in the list of all topics (which creates none) before it subscribes."""
    topic = f"graph-events-{uuid.uuid4().hex[:6]}"
    create_topic(kafka_bootstrap, topic, 1)
    typo = topic.replace("graph", "grpah")
    code = main(["run", "--bootstrap-servers", kafka_bootstrap, "--topic", typo, "--until-end", "--backend", "cpu",
                 "--metrics-port", "-1", "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.count("\n") == 1 and err.startswith("vinestream: error: "), err
    assert f"topic '{typo}' does not exist on the brokers (did you mean '{topic}'?)" in err
    assert typo not in _topics(kafka_bootstrap)          # looking did not create it


_QUICK_GROUP = {"session_timeout_ms": 3000, "max_poll_interval_ms": 3000, "heartbeat_interval_ms": 300}


def _consumed_once_created(kafka_bootstrap, caplog, source, stop, waiting: str, said: str, create) -> list:
    """The ``src`` of the events ``source`` consumes on a thread while its topic is missing, then once ``create()``
    (which returns the topic and a partition) made it and one event went there: after the worker's warning
    (``waiting``, holding ``said``) and a look or two more."""
    events = []

    def consume():
        while not stop.is_set():
            events.extend(source.poll(timeout=0.1).events.column("src").to_pylist())
    thread = threading.Thread(target=consume)
    with caplog.at_level(logging.WARNING, logger="vinestream.connectors.kafka"):
        thread.start()
        try:
            deadline = time.monotonic() + 30
            while waiting not in caplog.text and time.monotonic() < deadline:
                time.sleep(0.05)
            assert said in caplog.text
            time.sleep(1.5)                                 # a look or two more
            topic, partition = create()
            producer = KafkaProducer(bootstrap_servers=kafka_bootstrap)
            producer.send(topic, b'{"op":"add","src":7,"dst":8}', partition=partition).get(30)
            producer.close()
            deadline = time.monotonic() + 30
            while not events and time.monotonic() < deadline:
                time.sleep(0.05)
        finally:
            stop.set()
            thread.join(30)
            source.close()
    return events


def test_a_long_lived_worker_waits_for_a_missing_topic_without_creating_it(kafka_bootstrap, caplog):
    """Without --until-end the worker may start before its topics exist (a deployment brings it up first): it
    says so once and subscribes when the topic is there, never creating it (created empty with the broker's
    default partition count, it was the topic the producer then wrote to)."""
    topic = f"later-{uuid.uuid4().hex[:6]}"
    stop = threading.Event()
    source = KafkaSource(kafka_bootstrap, group_id=f"g-{topic}", topics=[topic], default_format="json", stop=stop,
                         connect=False, consumer_options=_QUICK_GROUP)

    def create():
        assert topic not in _topics(kafka_bootstrap)        # the looks created nothing
        create_topic(kafka_bootstrap, topic, 2)
        return topic, 1

    events = _consumed_once_created(kafka_bootstrap, caplog, source, stop, "waiting for it to be created",
                                    f"topic '{topic}' does not exist on the brokers (yet)", create)
    assert events == [7]
    assert caplog.text.count("does not exist") == 1        # said once, not at every look


def test_run_until_end_of_a_topic_pattern_that_matches_no_topic_is_one_line_naming_it(kafka_bootstrap, tmp_path,
                                                                                     capsys):
    """A pattern was never checked: one that matched no topic consumed nothing, and `run --until-end` stopped at
    once, exit 0.  It is now looked for in the brokers' topic list, as kafka-python matches it (from the start of a
    name), and a pattern that matches nothing is the user's mistake: one line naming it, exit 2.  The topic that
    matches it only inside its name is named, with the pattern that would match it."""
    tag = uuid.uuid4().hex[:6]
    create_topic(kafka_bootstrap, f"graph-events-{tag}", 1)
    pattern = f"events-{tag}"
    code = main(["run", "--bootstrap-servers", kafka_bootstrap, "--topic-pattern", pattern, "--until-end",
                 "--backend", "cpu", "--metrics-port", "-1", "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.count("\n") == 1 and err.startswith("vinestream: error: ") and "Traceback" not in err, err
    assert f"no topic on the brokers matches the pattern '{pattern}'" in err, err
    assert f"'graph-events-{tag}' contains a match: try '.*{pattern}'" in err, err
    # the pattern as given matches it once the name starts so: the run consumes it (empty) and ends normally
    assert main(["run", "--bootstrap-servers", kafka_bootstrap, "--topic-pattern", f".*{pattern}", "--until-end",
                 "--backend", "cpu", "--metrics-port", "-1", "--group", f"g-{tag}", "--idle-timeout", "60",
                 "--out", str(tmp_path / "out2")]) == 0, capsys.readouterr().err


def test_a_long_lived_worker_waits_for_a_topic_its_pattern_matches(kafka_bootstrap, caplog):
    """Without --until-end a pattern that matches no topic yet is waited for, said once: the worker subscribes as
    soon as a matching topic exists (kafka-python's own pattern subscription noticed a new topic only at its next
    metadata refresh, five minutes by default)."""
    tag = uuid.uuid4().hex[:6]
    pattern, topic = f"later-{tag}-.*", f"later-{tag}-a"
    stop = threading.Event()
    source = KafkaSource(kafka_bootstrap, group_id=f"g-later-{tag}", pattern=pattern, default_format="json",
                         stop=stop, connect=False, consumer_options=_QUICK_GROUP)

    def create():
        create_topic(kafka_bootstrap, topic, 1)
        return topic, 0

    events = _consumed_once_created(kafka_bootstrap, caplog, source, stop, "waiting for one to be created",
                                    f"no topic on the brokers matches the pattern '{pattern}' (yet)", create)
    assert events == [7]
    assert caplog.text.count("matches the pattern") == 1        # said once, not at every look


@pytest.mark.parametrize("pattern", ["(", "*", "[a-"])
def test_a_topic_pattern_that_is_no_regular_expression_is_refused_before_connecting(pattern, capsys):
    """On the command line it is one line and exit 2 before any connection (the broker here does not exist);
    a KafkaSource made directly refuses it when made (kafka-python raised re.error when it subscribed)."""
    code = main(["run", "--bootstrap-servers", "127.0.0.1:1", "--topic-pattern", pattern, "--backend", "cpu",
                 "--metrics-port", "-1"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert f"--topic-pattern: {pattern!r} is not valid; expected a regular expression" in err, err
    with pytest.raises(ValueError, match="is not a regular expression"):
        KafkaSource("127.0.0.1:1", group_id="g", pattern=pattern, connect=False)


def _topics(bootstrap) -> set:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        return set(admin.list_topics())
    finally:
        admin.close()
