"""`vinestream produce` then `vinestream run` through the CLI, on the bundled sample, against a real broker."""
import json

import pyarrow.parquet as pq
import pytest

from tests.event_logs import oracle_of
from tests.kafka_helpers import committed
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
                 "--session-timeout-ms", "10000", "--max-poll-interval-ms", "10000"]) == 0
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
    assert "unknown structure" in capsys.readouterr().err
