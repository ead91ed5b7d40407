"""The Kafka source, sinks, producer and worker against a real broker (Tansu)."""
from __future__ import annotations

import dataclasses
import shutil
import threading

import numpy as np
import pyarrow as pa
import pytest
from kafka import KafkaProducer

from tests.event_logs import oracle_of, random_events, write_log
from tests.kafka_helpers import committed, end_offsets, json_messages, read_topic, run, worker_config
from tests.pipelines import ObservedPipeline
from vinestream.algorithms import create_job
from vinestream.connectors.kafka import KafkaDeadLetterSink, KafkaResultsSink, crc32c_accelerated, produce

pytestmark = pytest.mark.kafka


def test_crc32c_extension_is_used():
    assert crc32c_accelerated(), "install the crc32c package: kafka-python is ~25x slower without it"


@pytest.mark.parametrize("fmt", ["json", "arrow"])
def test_worker_consumes_to_the_end_and_matches_oracle(kafka_bootstrap, tmp_path, fmt):
    log = random_events(3000, seed=11)          # vertex ops included: one partition keeps the order
    path = write_log(tmp_path / "log.parquet", log)
    topic, results = f"events-{fmt}", f"results-{fmt}"
    sent = produce(path, topic, kafka_bootstrap, fmt=fmt, partitions=1, batch_events=400)
    assert sent["events"] == 3000
    sink = KafkaResultsSink(kafka_bootstrap, results, fmt="json")
    report, pipe = run(worker_config(kafka_bootstrap, topic, f"g-{fmt}", format=fmt, batch_size=700),
                       results_sink=sink)
    sink.close()
    oracle = oracle_of(log)
    assert report.stopped_by == "end_of_input"
    assert report.events == 3000 and report.dead_letters == 0
    assert pipe.edges() == oracle.edges
    assert pipe.vertex_set() == oracle.vertices
    ends = end_offsets(sent["per_partition"], fmt, 400)
    assert committed(kafka_bootstrap, f"g-{fmt}", topic, 1) == ends
    summaries = [m for m in json_messages(read_topic(kafka_bootstrap, results)) if "events" in m]
    assert [s["epoch"] for s in summaries] == list(range(1, report.batches + 1))
    assert sum(s["events"] for s in summaries) == 3000
    assert summaries[-1]["edges"] == len(oracle.edges)


def test_restart_resumes_without_duplicates_or_gaps(kafka_bootstrap, tmp_path):
    log = random_events(4000, seed=5)
    first, second = log.slice(0, 2500), log.slice(2500)
    topic, group, ck = "events-restart", "g-restart", tmp_path / "ckpt"
    produce(write_log(tmp_path / "a.parquet", first), topic, kafka_bootstrap, fmt="json", partitions=1)
    cfg = worker_config(kafka_bootstrap, topic, group, format="json", batch_size=500, checkpoint_dir=str(ck),
                        checkpoint_every_batches=2)
    r1, p1 = run(cfg)
    assert r1.events == 2500 and p1.edges() == oracle_of(first).edges

    # restart with nothing new: nothing is consumed again
    r2, p2 = run(cfg)
    assert r2.restored_from and r2.messages == 0 and p2.edges() == oracle_of(first).edges

    # new events: exactly those are consumed, the state continues from the checkpoint
    produce(write_log(tmp_path / "b.parquet", second), topic, kafka_bootstrap, fmt="json")
    r3, p3 = run(cfg)
    full = oracle_of(log)
    assert r3.messages == 1500
    assert p3.edges() == full.edges and p3.vertex_set() == full.vertices
    assert committed(kafka_bootstrap, group, topic, 1) == {0: 4000}


def test_restart_from_older_checkpoint_replays_to_same_state(kafka_bootstrap, tmp_path):
    """A worker that died after committing but before checkpointing: resume at the checkpoint's offsets."""
    log = random_events(3000, seed=8)
    topic, group, ck = "events-crash", "g-crash", tmp_path / "ckpt"
    produce(write_log(tmp_path / "a.parquet", log), topic, kafka_bootstrap, fmt="json", partitions=1)
    cfg = worker_config(kafka_bootstrap, topic, group, format="json", batch_size=500, checkpoint_dir=str(ck))
    r1, _ = run(dataclasses.replace(cfg, until_end=False, max_batches=2))
    assert r1.batches == 2
    old = tmp_path / "old-ckpt"
    shutil.copytree(ck, old)
    _r2, p2 = run(cfg)                        # runs to the end: commits 3000, checkpoints at the end
    assert p2.edges() == oracle_of(log).edges
    shutil.rmtree(ck)
    shutil.copytree(old, ck)                 # "the last checkpoint never made it to disk"
    r3, p3 = run(cfg)
    assert r3.restored_from and r3.events == 3000 - r1.events   # re-read from the checkpoint, not the commit
    assert p3.edges() == oracle_of(log).edges


def test_two_workers_split_four_partitions(kafka_bootstrap, tmp_path):
    log = random_events(4000, seed=3, vertex_ops=False)   # per-source order is all that matters
    topic, group = "events-split", "g-split"
    sent = produce(write_log(tmp_path / "a.parquet", log), topic, kafka_bootstrap, fmt="arrow", partitions=4,
                   batch_events=100)
    assert all(n > 0 for n in sent["per_partition"])
    cfg = worker_config(kafka_bootstrap, topic, group, format="arrow", until_end=False, idle_timeout=12,
                        batch_size=200, max_poll_records=2)
    out = {}

    def work(name):
        out[name] = run(cfg, pipeline=ObservedPipeline(slow_seconds=0.05))

    threads = [threading.Thread(target=work, args=(n,)) for n in ("a", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    (ra, pa_), (rb, pb) = out["a"], out["b"]
    parts_a, parts_b = set(ra.committed), set(rb.committed)
    assert parts_a and parts_b, "both workers must have owned partitions"
    assert ra.events > 0 and rb.events > 0
    # every partition fully consumed and committed by the group; each edge landed on exactly one shard
    assert committed(kafka_bootstrap, group, topic, 4) == end_offsets(sent["per_partition"], "arrow", 100)
    edges_a, edges_b = pa_.edges(), pb.edges()
    assert not set(edges_a) & set(edges_b)
    assert {**edges_a, **edges_b} == oracle_of(log).edges


def test_malformed_messages_go_to_dead_letter_topic(kafka_bootstrap, tmp_path):
    log = random_events(300, seed=2)
    topic, dlq = "events-dirty", "events-dirty-dlq"
    from vinestream.connectors.kafka import _text_lines, create_topic
    create_topic(kafka_bootstrap, topic, 1)
    lines = _text_lines(log, "json").to_pylist()
    bad = {7: b"{not json", 50: b'{"op":"explode","src":1,"dst":2}', 51: b"\x00\xff", 299: b"[1,2"}
    producer = KafkaProducer(bootstrap_servers=kafka_bootstrap, linger_ms=50)
    valid = []
    offset = 0
    expected_dead = {}
    for i, line in enumerate(lines):
        if i in bad:
            producer.send(topic, bad[i])
            expected_dead[offset] = bad[i]
            offset += 1
        producer.send(topic, line.encode())
        valid.append(i)
        offset += 1
    producer.flush()
    producer.close()
    dead_sink = KafkaDeadLetterSink(kafka_bootstrap, dlq)
    report, pipe = run(worker_config(kafka_bootstrap, topic, "g-dirty", format="json", batch_size=100000,
                                     batch_latency_ms=500), dead_letter_sink=dead_sink)
    dead_sink.close()
    assert report.dead_letters == len(bad) and report.events == len(lines)
    assert pipe.edges() == oracle_of(log).edges          # every valid event of the same polls applied
    dead = json_messages(read_topic(kafka_bootstrap, dlq))
    assert {d["position"]: d["payload"].encode("utf-8", "replace") for d in dead}.keys() == expected_dead.keys()
    assert all(d["source"] == topic and d["partition"] == 0 and d["reason"] in ("malformed", "unknown_op")
               for d in dead)
    assert committed(kafka_bootstrap, "g-dirty", topic, 1) == {0: offset}


def test_results_sink_arrow(kafka_bootstrap, tmp_path):
    pipe = ObservedPipeline(jobs=[create_job("triangles", np)])
    result = pipe.apply(random_events(200, seed=4))
    sink = KafkaResultsSink(kafka_bootstrap, "results-arrow", fmt="arrow")
    sink.write(result, invalid=3)
    sink.close()
    msgs = read_topic(kafka_bootstrap, "results-arrow")
    kinds = {dict(m.headers)["kind"]: m for m in msgs}
    summary = pa.ipc.open_stream(kinds[b"summary"].value).read_all().to_pylist()[0]
    assert summary["epoch"] == 1 and summary["invalid"] == 3 and summary["edges"] == pipe.structure.num_edges
    job = pa.ipc.open_stream(kinds[b"job"].value).read_all()
    assert dict(kinds[b"job"].headers)["job"] == b"triangles"
    assert job.equals(result.job_outputs["triangles"])


@pytest.mark.parametrize("fmt", ["json", "arrow"])
def test_the_results_topic_carries_the_summary_and_job_outputs_of_the_out_directory(kafka_bootstrap, tmp_path, fmt):
    """`vinestream run --out DIR --results-topic T`: the newest summary message of each epoch equals DIR's summary
    row, and each job message its epoch's output.  The topic's last row missed what DIR's gets after it was sent:
    the rejected batch at the end of the input (invalid 2 against 302, batches 1 against 2) and the jobs' final
    catch-up of --jobs-every 4 (a second epoch-9 message holding the job scalars alone)."""
    import json
    import subprocess
    import sys

    import vinestream
    log = random_events(3000, seed=3, vertex_ops=False)
    op = log.column("op").to_numpy().copy()
    op[-300:] = 9                        # 2700 valid events fill 9 batches; the rejected 300 are a batch of their own
    log = log.set_column(0, "op", pa.array(op, pa.int8()))
    topic = f"results-vs-out-{fmt}"
    produce(write_log(tmp_path / "log.parquet", log), topic, kafka_bootstrap, fmt="json", partitions=1)
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-m", "vinestream", "run", "--bootstrap-servers", kafka_bootstrap,
                           "--topic", topic, "--group", f"g-{topic}", "--format", "json", "--jobs", "pagerank,bfs",
                           "--bfs-source", str(log.column("src")[0].as_py()), "--jobs-every", "4",
                           "--batch-size", "300", "--max-poll-records", "300", "--out", str(out),
                           "--results-topic", f"{topic}-out", "--results-format", fmt, "--until-end",
                           "--metrics-port", "0", "--session-timeout-ms", "6000"],    # joins in 3 s, not 5 s
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    expected = vinestream.read_results(out)

    def decode(value) -> list:
        return [json.loads(value)] if fmt == "json" else pa.ipc.open_stream(value).read_all().to_pylist()
    rows, jobs = {}, {}
    for m in read_topic(kafka_bootstrap, f"{topic}-out"):
        headers = dict(m.headers)
        if headers["kind"] == b"summary":
            row = decode(m.value)[0]
            rows[row["epoch"]] = row                       # the newest message of an epoch is its row
        else:
            got = decode(m.value)
            got = got[0]["rows"] if fmt == "json" else got
            jobs.setdefault((headers["job"].decode(), int(headers["epoch"])), []).extend(got)
    # a Parquet row holds every column of the summary (null where its epoch has none: the jobs every 4th epoch)
    summary = [{k: v for k, v in r.items() if v is not None}
               for r in expected["summary"].drop(["wall_time", "rss_bytes"]).to_pylist()]
    for got, want in zip([rows[e] for e in sorted(rows)], summary, strict=True):
        assert got == want, {k: (got.get(k), want.get(k)) for k in set(got) | set(want) if got.get(k) != want.get(k)}
    assert sum(r["batches"] for r in summary) == 10 and summary[-1]["invalid"] == 300 + summary[-1]["self_loops"]
    assert summary[-1]["epoch"] == 9 and summary[-1]["pagerank_iterations"] > 0      # the catch-up's scalars
    for job in ("pagerank", "bfs"):
        table = expected[job]
        epochs = sorted(set(table["epoch"].to_pylist()))
        assert epochs == [4, 8, 9] and sorted(e for j, e in jobs if j == job) == epochs
        for e in epochs:
            want = table.filter(pa.compute.equal(table["epoch"], e)).drop(["epoch"]).to_pylist()
            assert sorted(jobs[(job, e)], key=lambda r: r["vertex"]) == want


@pytest.mark.parametrize("first_stop", ["end_of_input", "SIGTERM"])
def test_the_results_topic_keeps_the_out_directory_s_summary_across_a_restart(kafka_bootstrap, tmp_path, first_stop):
    """A run resumed from a checkpoint that makes no new epoch still amends the newest row on the topic, whole.
    end_of_input: the first run ends at the input's end (its catch-up done); the second reads 300 rejected events
    only, whose `invalid` and batch belong in epoch 9's row (the restarted sink had no row: they never reached
    the topic).  SIGTERM: the first run stops after epoch 9 with the jobs of --jobs-every 4 pending; the second
    reads nothing new, and its catch-up is epoch 9's row with the job scalars (it went out as those alone)."""
    import json
    import signal
    import subprocess
    import sys
    import time

    import vinestream
    from vinestream.stream.app import checkpoint as ckpt_mod
    log = random_events(2700, seed=3, vertex_ops=False)          # 9 batches of 300
    topic, ck, out = f"results-restart-{first_stop.lower()}", tmp_path / "ckpt", tmp_path / "out"
    produce(write_log(tmp_path / "a.parquet", log), topic, kafka_bootstrap, fmt="json", partitions=1)
    argv = [sys.executable, "-m", "vinestream", "run", "--bootstrap-servers", kafka_bootstrap, "--topic", topic,
            "--group", f"g-{topic}", "--format", "json", "--jobs", "pagerank,bfs",
            "--bfs-source", str(log.column("src")[0].as_py()), "--jobs-every", "4", "--batch-size", "300",
            "--max-poll-records", "300", "--out", str(out), "--results-topic", f"{topic}-out",
            "--checkpoint-dir", str(ck), "--checkpoint-every-batches", "1", "--metrics-port", "-1",
            "--session-timeout-ms", "6000"]                     # each start joins in 3 s, not 5 s
    if first_stop == "end_of_input":
        first = subprocess.run([*argv, "--until-end"], capture_output=True, text=True, timeout=300)
        assert first.returncode == 0, first.stderr
        rejected = log.slice(0, 300)
        rejected = rejected.set_column(0, "op", pa.array(np.full(300, 9, np.int8)))
        produce(write_log(tmp_path / "b.parquet", rejected), topic, kafka_bootstrap, fmt="json", partitions=1)
    else:
        worker = subprocess.Popen([*argv, "--idle-timeout", "120"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True)
        deadline = time.monotonic() + 120
        while (ckpt_mod.latest(ck) is None or ckpt_mod.latest(ck).epoch < 9) and time.monotonic() < deadline:
            time.sleep(0.2)
        worker.send_signal(signal.SIGTERM)
        _, err = worker.communicate(timeout=120)
        assert worker.returncode == 0, err
    second = subprocess.run([*argv, "--until-end", "--resume"], capture_output=True, text=True, timeout=300)
    assert second.returncode == 0, second.stderr
    assert "restored checkpoint" in second.stderr
    rows = {}
    for m in read_topic(kafka_bootstrap, f"{topic}-out"):
        if dict(m.headers)["kind"] == b"summary":
            row = json.loads(m.value)
            rows[row["epoch"]] = row                       # the newest message of an epoch is its row
    summary = [{k: v for k, v in r.items() if v is not None}
               for r in vinestream.read_results(out)["summary"].drop(["wall_time", "rss_bytes"]).to_pylist()]
    assert [r["epoch"] for r in summary] == list(range(1, 10))
    for got, want in zip([rows[e] for e in sorted(rows)], summary, strict=True):
        assert got == want, {k: (got.get(k), want.get(k)) for k in set(got) | set(want) if got.get(k) != want.get(k)}
    last = summary[-1]
    assert last["pagerank_iterations"] > 0 and last["events"] == 300
    if first_stop == "end_of_input":
        assert sum(r["batches"] for r in summary) == 10 and last["invalid"] == 300 + last["self_loops"]


def test_rejects_carried_by_a_checkpoint_are_counted_once_however_often_the_run_resumes(kafka_bootstrap, tmp_path):
    """A run stopped (SIGTERM) after a batch of rejected events only checkpoints them as a carry; a resumed run
    that reads nothing new counts them in the newest row.  Its checkpoint must then hold no carry: a third run
    added them again (summary.parquet: invalid 600 and batches 3 against 300 and 2, the topic unlike it)."""
    import json
    import signal
    import subprocess
    import sys
    import time

    import vinestream
    from vinestream.stream.app import checkpoint as ckpt_mod
    log = random_events(2700, seed=3, vertex_ops=False)
    op = log.column("op").to_numpy().copy()
    op[-300:] = 9                        # 8 batches of 300 valid events, then a batch of 300 rejected ones
    log = log.set_column(0, "op", pa.array(op, pa.int8()))
    topic, ck, out = "results-carry-resumed", tmp_path / "ckpt", tmp_path / "out"
    produce(write_log(tmp_path / "a.parquet", log), topic, kafka_bootstrap, fmt="json", partitions=1)
    argv = [sys.executable, "-m", "vinestream", "run", "--bootstrap-servers", kafka_bootstrap, "--topic", topic,
            "--group", f"g-{topic}", "--format", "json", "--jobs", "pagerank", "--batch-size", "300",
            "--max-poll-records", "300", "--out", str(out), "--results-topic", f"{topic}-out",
            "--checkpoint-dir", str(ck), "--checkpoint-every-batches", "1", "--metrics-port", "-1",
            "--session-timeout-ms", "6000"]                     # each start joins in 3 s, not 5 s
    worker = subprocess.Popen([*argv, "--idle-timeout", "120"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not getattr(ckpt_mod.latest(ck), "extra", {}).get("invalid_carry"):
        time.sleep(0.2)
    worker.send_signal(signal.SIGTERM)
    _, err = worker.communicate(timeout=120)
    assert worker.returncode == 0, err
    assert ckpt_mod.latest(ck).extra["invalid_carry"] == 300
    for _ in range(2):
        again = subprocess.run([*argv, "--until-end", "--resume"], capture_output=True, text=True, timeout=300)
        assert again.returncode == 0, again.stderr
        last = vinestream.read_results(out)["summary"].to_pylist()[-1]
        assert last["epoch"] == 8 and last["invalid"] == 300 + last["self_loops"] and last["batches"] == 2
        rows = {}
        for m in read_topic(kafka_bootstrap, f"{topic}-out"):
            if dict(m.headers)["kind"] == b"summary":
                row = json.loads(m.value)
                rows[row["epoch"]] = row
        assert (rows[8]["invalid"], rows[8]["batches"]) == (last["invalid"], last["batches"])
