"""Worker configuration: flag > VINESTREAM_* env > TOML file > default."""
from __future__ import annotations

import argparse

import pytest

from vinestream.stream.app.config import (
    ProduceConfig,
    WorkerConfig,
    add_produce_arguments,
    add_run_arguments,
    masked,
    parse_job_options,
    produce_config,
    run_config,
)
from vinestream.stream.errors import UsageError


def parse(argv, env=None):
    p = argparse.ArgumentParser()
    add_run_arguments(p)
    return run_config(p.parse_args(argv), env=env or {})


def test_defaults():
    c = parse(["--topic", "t"])
    assert c == WorkerConfig(topics=["t"])
    assert c.metrics_port == 9464 and c.format == "arrow"     # the format `vinestream produce` writes by default
    assert c.format == ProduceConfig().format


def test_precedence_flag_over_env_over_file(tmp_path):
    toml = tmp_path / "worker.toml"
    toml.write_text('group = "from-file"\nbatch_size = 10\nstructure = "coo"\ntopics = ["a", "b"]\n'
                    '[monitoring]\nmetrics_port = 1000\n[formats]\nb = "csv"\n'
                    '[kafka_options]\nfetch_max_wait_ms = 100\n')
    env = {"VINESTREAM_GROUP": "from-env", "VINESTREAM_BATCH_SIZE": "20", "VINESTREAM_UNTIL_END": "true"}
    c = parse(["--config", str(toml), "--group", "from-flag"], env)
    assert c.group == "from-flag"            # flag beats env and file
    assert c.batch_size == 20                # env beats file
    assert c.structure == "coo"              # file beats default
    assert c.metrics_port == 1000            # keys inside any table are read
    assert c.topics == ["a", "b"] and c.formats == {"b": "csv"}
    assert c.until_end is True and c.kafka_options == {"fetch_max_wait_ms": 100}
    assert c.consumer_options()["fetch_max_wait_ms"] == 100
    env_file = parse([], {"VINESTREAM_CONFIG": str(toml)})
    assert env_file.group == "from-file"


def test_contract_flags_and_lists():
    c = parse(["--bootstrap-servers", "k1:9092,k2:9092", "--topic", "a", "--topic", "b,c", "--group", "g",
               "--format", "arrow", "--structure", "graphvine", "--jobs", "pagerank,bfs", "--metrics-port", "0",
               "--out", "/tmp/out", "--bfs-source", "5", "--no-undirected", "--sasl-mechanism", "PLAIN",
               "--security-protocol", "SASL_SSL", "--sasl-plain-username", "u", "--sasl-plain-password", "p"])
    assert c.topics == ["a", "b", "c"] and c.jobs == ["pagerank", "bfs"] and c.bfs_source == [5]
    assert c.format == "arrow" and c.metrics_port == 0 and c.out == "/tmp/out" and c.undirected is False
    assert c.security() == {"security_protocol": "SASL_SSL", "sasl_mechanism": "PLAIN", "sasl_plain_username": "u",
                            "sasl_plain_password": "p"}
    per_topic = parse(["--format", "json,edges=arrow", "--topic", "edges"])
    assert per_topic.format == "json" and per_topic.formats == {"edges": "arrow"}


@pytest.mark.parametrize("argv, env, message", [
    (["--format", "xml"], {}, "--format: unknown format 'xml'; choose one of json, csv, arrow"),
    (["--batch-size", "-1"], {}, "--batch-size: -1 is not valid"),
    (["--batch-size", "abc"], {}, "--batch-size 'abc': expected an integer"),
    ([], {"VINESTREAM_BATCH_SIZE": "abc"}, "environment variable VINESTREAM_BATCH_SIZE='abc': expected an integer"),
    ([], {"VINESTREAM_METRICS_PORT": "99999"}, "VINESTREAM_METRICS_PORT: 99999 is not valid; expected a TCP port"),
    (["--jobs-every", "0"], {}, "--jobs-every: 0 is not valid"),
    (["--structure", "btree"], {}, "--structure: 'btree' is not valid; expected one of"),
    (["--jobs", "walks"], {}, "jobs from bfs, pagerank, triangles (not walks)"),
    (["--jobs", "bfs"], {}, "the bfs job needs source vertices"),
    (["--bfs-source", "3"], {}, "--bfs-source is given but bfs is not in --jobs"),
    (["--edge-ttl", "0"], {}, "--edge-ttl: 0.0 is not valid; expected a number > 0"),
    (["--jobs", "pagerank", "--job-option", "pagerank.damping=1.5"], {}, "--job-option pagerank.damping=1.5: the "
     "pagerank job's damping takes a number strictly between 0 and 1 (default 0.85), not 1.5"),
    (["--jobs", "pagerank", "--job-option", "pagerank.alpha=0.5"], {}, "--job-option pagerank.alpha=0.5: the pagerank "
                                                                       "job has no option 'alpha'; valid: "
                                                                       "pagerank.damping"),
    (["--job-option", "pagerank.tol=1e-9"], {}, "--job-option pagerank.tol=1e-09: the pagerank job is not in --jobs"),
    # the part of a flag or variable that is wrong, not the whole value: "--job-option ['pagerank.damping=0.9,nope']:
    # expected KEY=VALUE pairs" left the user to find which part that was
    (["--jobs", "pagerank", "--job-option", "pagerank.damping=0.9,nope"], {},
     "--job-option 'nope': expected JOB.OPTION=VALUE (e.g. pagerank.damping=0.9)"),
    (["--jobs", "pagerank", "--job-option", "pagerank.damping=0.9", "--job-option", "pagerank.tol=1e-6,=3"], {},
     "--job-option =3: expected JOB.OPTION=VALUE (e.g. pagerank.damping=0.9), JOB one of pagerank"),
    (["--jobs", "pagerank", "--job-option", "pagerank.damping=0.9,pagerank.tol=x"], {},
     "--job-option pagerank.tol=x: the pagerank job's tol takes a number > 0 (L1 tolerance, default 1e-6), not 'x'"),
    (["--jobs", "pagerank", "--job-option", "walks.length=3"], {},
     "--job-option walks.length=3: unknown job 'walks'; the jobs with options: pagerank"),
    (["--jobs", "pagerank"], {"VINESTREAM_JOB_OPTIONS": "pagerank.damping=0.9,nope"},
     "environment variable VINESTREAM_JOB_OPTIONS: 'nope' is not JOB.OPTION=VALUE (e.g. pagerank.damping=0.9)"),
    (["--kafka-option", "fetch_max_wait_ms=10,x"], {}, "--kafka-option 'x': expected KEY=VALUE"),
    (["--jobs", "bfs", "--bfs-source", "1,x"], {}, "--bfs-source 'x': expected an integer"),
    (["--overwrite", "--resume", "--out", "o"], {}, "contradict"),
    # a per-topic format for a topic not consumed (a misspelt one): the topic meant was read as arrow
    (["--format", "t=json,u=csv"], {}, "--format u=csv: u is not an input topic (--topic t)"),
    ([], {"VINESTREAM_FORMAT": "json,graph-event=arrow"}, "VINESTREAM_FORMAT graph-event=arrow: graph-event is not "
                                                          "an input topic (--topic t)"),
    # what kafka-python or logging would refuse only once the worker starts
    (["--log-level", "LOUD"], {}, "--log-level: 'LOUD' is not valid; expected one of DEBUG"),
    (["--max-payload-bytes", "0"], {}, "--max-payload-bytes: 0 is not valid"),
    (["--max-nesting", "0"], {}, "--max-nesting: 0 is not valid"),
    (["--security-protocol", "TLS"], {}, "expected one of PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL"),
    (["--sasl-mechanism", "PLAIN"], {}, "needs --security-protocol SASL_PLAINTEXT or SASL_SSL (it is PLAINTEXT)"),
    (["--security-protocol", "SASL_SSL"], {}, "SASL_SSL needs --sasl-mechanism"),
    (["--security-protocol", "SASL_SSL", "--sasl-mechanism", "SCRAM-SHA-256"], {},
     "needs --sasl-plain-username and --sasl-plain-password"),
    (["--security-protocol", "SSL", "--ssl-cafile", "/no/such/ca.pem"], {}, "--ssl-cafile: '/no/such/ca.pem' is not "
                                                                            "valid; expected a readable file"),
    (["--ssl-cafile", __file__], {}, "--ssl-cafile is given, but the connection is PLAINTEXT"),
    # QA: --session-timeout-ms 1 passed --check, then kafka-python's refusal was retried forever
    (["--session-timeout-ms", "1"], {}, "--session-timeout-ms: 1 is not valid; expected milliseconds from 6000 to "
                                        "1800000"),
    (["--session-timeout-ms", "5999"], {}, "--session-timeout-ms: 5999 is not valid"),
    ([], {"VINESTREAM_SESSION_TIMEOUT_MS": "1800001"}, "VINESTREAM_SESSION_TIMEOUT_MS: 1800001 is not valid"),
    (["--kafka-option", "heartbeat_interval_ms=10000"], {}, "--kafka-option heartbeat_interval_ms=10000 must be "
                                                            "below the session timeout (10000 ms"),
    # QA: --group "" (an unset variable in a template) was taken as a group id
    (["--group", ""], {}, "--group: '' is not valid; expected a consumer group id (it is empty)"),
    (["--group", "  "], {}, "--group: '  ' is not valid; expected a consumer group id"),
])
def test_bad_values_name_where_they_came_from(argv, env, message):
    with pytest.raises(UsageError) as info:
        parse(["--topic", "t", *argv], env)
    assert message in str(info.value)


def test_a_topic_format_names_a_topic_consumed(tmp_path):
    toml = tmp_path / "w.toml"
    toml.write_text('topics = ["a"]\n[formats]\nb = "csv"\n')
    with pytest.raises(UsageError, match=f"formats in {toml} b=csv: b is not an input topic"):
        parse(["--config", str(toml)])
    assert parse(["--topic-pattern", "ev-.*", "--format", "ev-a=json"]).formats == {"ev-a": "json"}
    with pytest.raises(UsageError, match=r"--format x=csv: x is not an input topic \(--topic-pattern 'ev-\.\*'\)"):
        parse(["--topic-pattern", "ev-.*", "--format", "x=csv"])


def test_jobs_none_as_replay_takes_it():
    assert parse(["--topic", "t", "--jobs", "none"]).jobs == []
    assert parse(["--topic", "t"], {"VINESTREAM_JOBS": "NONE"}).jobs == []
    with pytest.raises(UsageError, match="not none"):           # none beside a job is a mistake
        parse(["--topic", "t", "--jobs", "pagerank,none"])


def test_bad_file_keys_and_values_name_the_file(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("no_such_key = 1\ncheckpoint_every = 50\n")
    with pytest.raises(UsageError, match=r"unknown key\(s\) checkpoint_every \(did you mean checkpoint_every_"):
        parse(["--config", str(bad)])
    bad.write_text('topics = ["t"]\nbatch_size = "many"\n')
    with pytest.raises(UsageError, match=f"batch_size in {bad}: 'many' is not an integer"):
        parse(["--config", str(bad)])
    with pytest.raises(UsageError, match="no topic to consume"):
        parse([])


def test_job_options_from_flags_and_toml_tables(tmp_path):
    toml = tmp_path / "w.toml"
    toml.write_text('topics = ["t"]\njobs = ["pagerank"]\n[job_options.pagerank]\ndamping = 0.9\nmax_iter = 50\n')
    c = parse(["--config", str(toml), "--job-option", "pagerank.tol=1e-9"])
    assert parse_job_options(c.job_options, c.jobs) == {"pagerank": {"damping": 0.9, "max_iter": 50, "tol": 1e-9}}
    assert "***" in str(masked(parse(["--topic", "t", "--sasl-plain-password", "hunter2"]))) and \
        "hunter2" not in str(masked(parse(["--topic", "t", "--sasl-plain-password", "hunter2"])))



def test_a_toml_key_value_field_takes_the_flags_text_too(tmp_path):
    """``job_options = "pagerank.damping=0.9"`` in a file was refused as "'pagerank.damping=0.9' is not KEY=VALUE
    pairs" (only a table was read): the file takes the flag's and the variable's text as it does for lists, and
    what is wrong in it is named as there."""
    toml = tmp_path / "w.toml"
    toml.write_text('topics = ["t"]\njobs = ["pagerank"]\njob_options = "pagerank.damping=0.9,pagerank.max_iter=50"\n')
    c = parse(["--config", str(toml)])
    assert parse_job_options(c.job_options, c.jobs)["pagerank"] == {"damping": 0.9, "max_iter": 50}
    toml.write_text('topics = ["t"]\njob_options = "pagerank.damping=0.9,nope"\n')
    with pytest.raises(UsageError, match=r"job_options in .*: 'nope' is not JOB.OPTION=VALUE"):
        parse(["--config", str(toml)])
    toml.write_text('topics = ["t"]\njob_options = 3\n')
    with pytest.raises(UsageError, match=r"job_options in .*: 3 is not a table or KEY=VALUE pairs"):
        parse(["--config", str(toml)])

def test_produce_arguments():
    p = argparse.ArgumentParser()
    add_produce_arguments(p)
    c = produce_config(p.parse_args(["log.parquet", "--topic", "t", "--format", "csv",
                                     "--bootstrap-servers", "h:1", "--rate", "5000"]),
                       env={"VINESTREAM_BATCH_EVENTS": "100"})
    assert (c.logs, c.topic, c.format, c.bootstrap_servers, c.rate, c.batch_events) == \
        (["log.parquet"], "t", "csv", "h:1", 5000.0, 100)


def test_help_documents_env_variables():
    p = argparse.ArgumentParser()
    add_run_arguments(p)
    text = p.format_help()
    for flag in ("--bootstrap-servers", "--topic", "--group", "--format", "--structure", "--jobs",
                 "--metrics-port", "--out", "VINESTREAM_METRICS_PORT"):
        assert flag in text


# QA: an empty variable became None, which skipped both the default and the check: VINESTREAM_BATCH_SIZE= was a
# TypeError at start, VINESTREAM_MAX_PAYLOAD_BYTES= switched the too_large limit off and VINESTREAM_METRICS_PORT=
# the metrics.  An empty (or blank) variable is unset, as compose / Kubernetes templates leave them.
@pytest.mark.parametrize("value", ["", "  "])
def test_an_empty_environment_variable_is_unset(tmp_path, value):
    every = {f"VINESTREAM_{name.upper()}": value for name in WorkerConfig.__dataclass_fields__ if name != "topics"}
    assert parse(["--topic", "t"], every) == WorkerConfig(topics=["t"])       # every key at its default
    c = parse(["--topic", "t"], {"VINESTREAM_BATCH_SIZE": value, "VINESTREAM_SESSION_TIMEOUT_MS": value,
                                 "VINESTREAM_MAX_PAYLOAD_BYTES": value, "VINESTREAM_METRICS_PORT": value})
    assert (c.batch_size, c.session_timeout_ms, c.max_payload_bytes, c.metrics_port) == (200_000, 10_000,
                                                                                         16 * 1024 * 1024, 9464)
    assert c.consumer_options()["heartbeat_interval_ms"] == 1000
    assert "batch_size" not in c.sources           # --check reports the default, not the variable
    toml = tmp_path / "w.toml"
    toml.write_text("batch_size = 7\n")            # the file's value, not the empty variable's
    assert parse(["--topic", "t", "--config", str(toml)], {"VINESTREAM_BATCH_SIZE": value}).batch_size == 7
    with pytest.raises(UsageError, match="no topic to consume"):
        parse([], {"VINESTREAM_TOPICS": value})
    p = argparse.ArgumentParser()
    add_produce_arguments(p)
    produced = produce_config(p.parse_args(["log.parquet"]), env={"VINESTREAM_BATCH_EVENTS": value,
                                                                  "VINESTREAM_PARTITIONS": value})
    assert produced.batch_events == 20_000 and produced.partitions is None


@pytest.mark.parametrize("flag", ["--batch-size", "--metrics-port", "--max-payload-bytes", "--session-timeout-ms",
                                  "--max-batches", "--edge-ttl"])
def test_an_empty_flag_value_for_a_number_is_an_error(flag):
    with pytest.raises(UsageError, match=f"{flag} '': expected"):
        parse(["--topic", "t", flag, ""])


@pytest.mark.parametrize("ms", [6000, 10_000, 1_800_000])
def test_session_timeouts_brokers_take(ms):
    c = parse(["--topic", "t", "--session-timeout-ms", str(ms)])
    options = c.consumer_options()
    assert options["session_timeout_ms"] == ms and options["heartbeat_interval_ms"] < ms


# QA: a dead-letter topic that is an input made an endless loop; a results topic that is one fed the results back
# in as dead letters.  Refused at validation (so by run --check too).
@pytest.mark.parametrize("argv, env, message", [
    (["--topic", "a,b", "--dead-letter-topic", "b"], {},
     "--dead-letter-topic b is also an input topic (--topic): the worker would read its own dead letters back"),
    (["--topic", "a", "--results-topic", "a"], {},
     "--results-topic a is also an input topic (--topic): the worker would read its own results back"),
    (["--topic-pattern", "graph-.*"], {"VINESTREAM_DEAD_LETTER_TOPIC": "graph-dlq"},
     "VINESTREAM_DEAD_LETTER_TOPIC graph-dlq is also an input topic (--topic-pattern 'graph-.*')"),
    (["--topic-pattern", "ev"], {"VINESTREAM_RESULTS_TOPIC": "events-out"},     # kafka-python: re.match
     "VINESTREAM_RESULTS_TOPIC events-out is also an input topic (--topic-pattern 'ev')"),
])
def test_an_output_topic_that_is_an_input_is_refused(argv, env, message):
    with pytest.raises(UsageError) as info:
        parse(argv, env)
    assert message in str(info.value)


def test_output_topics_beside_the_inputs():
    c = parse(["--topic-pattern", "graph-.*", "--dead-letter-topic", "dlq-graph", "--results-topic", "results"])
    assert (c.dead_letter_topic, c.results_topic) == ("dlq-graph", "results")
    c = parse(["--topic", "a", "--dead-letter-topic", "a-dlq", "--results-topic", "a-results"])
    assert c.dead_letter_topic == "a-dlq"


# QA: `run --topic t --topic-pattern x` was taken, and the pattern alone was consumed (--help says it replaces
# --topic): refused in one place, whichever of flags, environment and file gave the two
@pytest.mark.parametrize("argv, env, file, said", [
    (["--topic", "a", "--topic-pattern", "a.*"], {}, "", "--topic and --topic-pattern"),
    (["--topic-pattern", "a.*"], {"VINESTREAM_TOPICS": "a"}, "", "VINESTREAM_TOPICS and --topic-pattern"),
    (["--topic", "a"], {"VINESTREAM_TOPIC_PATTERN": "a.*"}, "", "--topic and VINESTREAM_TOPIC_PATTERN"),
    ([], {}, 'topic = "a"\ntopic_pattern = "a.*"\n', "topics in {file} and topic_pattern in {file}"),
    (["--topic-pattern", "a.*"], {}, '[kafka]\ntopics = ["a", "b"]\n', "topics in {file} and --topic-pattern"),
])
def test_topics_and_a_topic_pattern_together_are_refused(tmp_path, argv, env, file, said):
    if file:
        (tmp_path / "w.toml").write_text(file)
        argv = [*argv, "--config", str(tmp_path / "w.toml")]
    with pytest.raises(UsageError) as info:
        parse(argv, env)
    assert str(info.value) == (f"{said.format(file=tmp_path / 'w.toml')} both say what to consume: give one of them "
                               "(a pattern replaces the list of topics)")


def test_run_with_a_topic_and_a_topic_pattern_is_one_line_and_exit_2(capsys):
    from vinestream.stream.app.cli import main
    for check in (["--check"], []):
        code = main(["run", "--topic", "t", "--topic-pattern", "x", "--bootstrap-servers", "127.0.0.1:1",
                     "--backend", "cpu", "--metrics-port", "-1", *check])
        err = capsys.readouterr().err
        assert code == 2 and err == ("vinestream: error: --topic and --topic-pattern both say what to consume: give "
                                     "one of them (a pattern replaces the list of topics)\n"), err
