"""Worker configuration: flag > VINESTREAM_* env > TOML file > default."""
from __future__ import annotations

import argparse

import pytest

from vinestream.stream.app.config import (
    WorkerConfig,
    add_produce_arguments,
    add_run_arguments,
    produce_config,
    run_config,
)


def parse(argv, env=None):
    p = argparse.ArgumentParser()
    add_run_arguments(p)
    return run_config(p.parse_args(argv), env=env or {})


def test_defaults():
    c = parse([])
    assert c == WorkerConfig()
    assert c.metrics_port == 9464 and c.format == "json"


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
               "--security-protocol", "SASL_SSL"])
    assert c.topics == ["a", "b", "c"] and c.jobs == ["pagerank", "bfs"] and c.bfs_source == [5]
    assert c.format == "arrow" and c.metrics_port == 0 and c.out == "/tmp/out" and c.undirected is False
    assert c.security() == {"security_protocol": "SASL_SSL", "sasl_mechanism": "PLAIN"}
    per_topic = parse(["--format", "json,edges=arrow"])
    assert per_topic.format == "json" and per_topic.formats == {"edges": "arrow"}


def test_bad_values_are_rejected(tmp_path):
    with pytest.raises(ValueError):
        parse(["--format", "xml"])
    bad = tmp_path / "bad.toml"
    bad.write_text("no_such_key = 1\n")
    with pytest.raises(ValueError, match="no_such_key"):
        parse(["--config", str(bad)])


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
