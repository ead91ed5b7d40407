"""The worker under trouble: a broker that goes away, and a pipeline slower than the topic (backpressure)."""
import threading
import time

import pytest
from pyarrow import feather

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


# -- issue 9: clean exits, durable commits, no crash loops -------------------------------------------
import json  # noqa: E402
import os  # noqa: E402
import signal  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

from vinestream.connectors.tansu import free_port  # noqa: E402
from vinestream.stream.app import checkpoint  # noqa: E402
from vinestream.stream.app.cli import main as cli_main  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)}


# with output topics: their producers connected first, before the run's stop and signal handlers were in place, and
# waited for the brokers for ever, SIGTERM or not
@pytest.mark.parametrize("outputs", [[], ["--results-topic", "r", "--dead-letter-topic", "d"]],
                         ids=["no-output-topic", "output-topics"])
def test_sigterm_without_a_broker_exits_0_quickly(tmp_path, outputs):
    port = free_port()                     # nothing listens there
    proc = subprocess.Popen([sys.executable, "-m", "vinestream", "run", "--bootstrap-servers", f"127.0.0.1:{port}",
                             "--topic", "t", "--structure", "coo", "--backend", "cpu", "--metrics-port", "-1",
                             "--checkpoint-dir", str(tmp_path / "ck"), "--log-level", "WARNING", *outputs],
                            cwd=ROOT, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    # signal once the worker is polling (its consumer's connection errors show), not after a fixed sleep:
    # on a loaded machine start-up took longer than 4 s and the signal beat the handler
    lines: list[bytes] = []
    reader = threading.Thread(target=lambda: lines.extend(proc.stderr), daemon=True)
    reader.start()
    deadline = time.monotonic() + 60
    while not any(b"kafka" in line for line in lines) and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.1)
    time.sleep(1)
    assert proc.poll() is None, b"".join(lines).decode()[-2000:]
    t0 = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=30)
    reader.join(timeout=10)
    err = b"".join(lines).decode()
    assert proc.returncode == 0, err[-2000:]
    assert time.monotonic() - t0 < 15
    assert "Traceback" not in err


def test_an_unwritable_checkpoint_directory_is_one_line_and_nothing_is_committed(kafka_bootstrap, tmp_path):
    log = random_events(500, seed=31)
    produce(write_log(tmp_path / "log.parquet", log), "unwritable", kafka_bootstrap, fmt="json", partitions=1)
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    proc = subprocess.run([sys.executable, "-m", "vinestream", "run", "--bootstrap-servers", kafka_bootstrap,
                           "--topic", "unwritable", "--group", "g-unwritable", "--format", "json",
                           "--structure", "coo", "--backend", "cpu", "--metrics-port", "-1", "--until-end",
                           "--checkpoint-dir", str(blocker / "ck")], cwd=ROOT, env=ENV, capture_output=True,
                          timeout=120)
    err = proc.stderr.decode()
    assert proc.returncode != 0
    # one line naming the directory, caught before the first poll (preflight) or at the first checkpoint
    lines = [line for line in err.splitlines() if line.startswith("vinestream: error:")]
    assert len(lines) == 1 and str(blocker) in lines[0] and "Traceback" not in err
    from tests.kafka_helpers import committed
    assert committed(kafka_bootstrap, "g-unwritable", "unwritable", 1) == {0: None}


def test_commits_wait_for_the_first_checkpoint(kafka_bootstrap, tmp_path):
    """Before any checkpoint exists nothing is committed; the commit equals the checkpoint's position."""
    log = random_events(2000, seed=32)
    produce(write_log(tmp_path / "log.parquet", log), "first-ckpt", kafka_bootstrap, fmt="json", partitions=1)
    from tests.kafka_helpers import committed, run
    cfg = worker_config(kafka_bootstrap, "first-ckpt", "g-first", format="json", batch_size=200,
                        checkpoint_dir=str(tmp_path / "ck"), checkpoint_every_batches=1000,
                        checkpoint_every_seconds=0, until_end=False, max_batches=3)
    # a stop after 3 batches checkpoints at the end (drain), then commits exactly that position
    report, _ = run(cfg)
    ck = checkpoint.latest(tmp_path / "ck")
    assert report.batches == 3 and ck is not None
    assert committed(kafka_bootstrap, "g-first", "first-ckpt", 1) == {0: ck.offsets[("first-ckpt", 0)][0]}


class _OutOfMemoryAbove(ObservedPipeline):
    """A real pipeline that runs out of memory (after touching the structure) on batches above ``limit``."""

    def __init__(self, limit, **kw):
        super().__init__(**kw)
        self.limit = limit

    def _update_once(self, events):
        if events.num_rows > self.limit:
            self._structure_touched = True
            raise MemoryError("simulated: the batch does not fit")
        return super()._update_once(events)


def test_out_of_memory_ends_in_a_smaller_batch_not_a_crash_loop(kafka_bootstrap, tmp_path):
    log = random_events(3000, seed=33)
    produce(write_log(tmp_path / "log.parquet", log), "oom", kafka_bootstrap, fmt="arrow", partitions=1,
            batch_events=1000)
    from tests.kafka_helpers import run
    cfg = worker_config(kafka_bootstrap, "oom", "g-oom", format="arrow", batch_size=3000,
                        checkpoint_dir=str(tmp_path / "ck"))
    limits = [3000]
    for _ in range(6):          # each start that runs out of memory leaves a smaller limit: never a loop
        try:
            report, pipe = run(cfg, pipeline=_OutOfMemoryAbove(600))
            break
        except Exception as exc:
            assert "out of memory applying a batch" in str(exc)
            limits.append(json.loads((tmp_path / "ck" / "batch_limit.json").read_text())["max_batch_events"])
            assert limits[-1] < limits[-2]
    assert report.stopped_by == "end_of_input" and limits[-1] <= 600
    assert pipe.edges() == oracle_of(log).edges


def test_produce_exits_1_and_counts_what_the_broker_did_not_acknowledge(tmp_path, capsys):
    binary = tansu_binary()
    if binary is None:
        pytest.skip("Tansu broker binary not found")
    broker = TansuBroker(binary).start()
    log = write_log(tmp_path / "log.parquet", random_events(3000, seed=34))
    killer = threading.Timer(2.0, broker.proc.kill)        # the broker dies 2 s in
    killer.start()
    try:
        code = cli_main(["produce", log, "--topic", "dies", "--format", "arrow", "--batch-events", "100",
                         "--bootstrap-servers", broker.bootstrap, "--partitions", "1", "--rate", "500",
                         "--delivery-timeout-s", "3"])
    finally:
        killer.join()
        broker.stop()
    err = capsys.readouterr().err
    assert code == 1
    assert "events were not acknowledged" in err, err[-500:]
    missing = int(err.split("vinestream: error: ")[1].split(" of ")[0])
    assert 0 < missing <= 3000


def test_a_dangling_latest_pointer_falls_back_to_the_newest_checkpoint(tmp_path):
    p = ObservedPipeline()
    p.apply(random_events(100, seed=35))
    first = checkpoint.save(tmp_path, p, {("t", 0): 100})
    (tmp_path / "LATEST").write_text("ckpt-000000000009-00000000000000000001")   # killed mid re-checkpoint
    assert checkpoint.latest(tmp_path).path == first


def test_a_latest_pointer_of_garbage_bytes_falls_back_and_warns_once(tmp_path, caplog):
    """A LATEST that is not text (a disk restored by hand) is as unusable as one naming a missing checkpoint: it
    raised a UnicodeDecodeError, which the command line showed as "'utf-8' codec can't decode ..." naming no file.
    A run looks for its checkpoint several times (checks, then start): the fallback is said once, not three times."""
    p = ObservedPipeline()
    p.apply(random_events(100, seed=36))
    first = checkpoint.save(tmp_path, p, {("t", 0): 100})
    (tmp_path / "LATEST").write_bytes(b"\xff\xfe\x00garbage")
    with caplog.at_level("WARNING", logger="vinestream.stream.app.checkpoint"):
        assert checkpoint.latest(tmp_path).path == first
        assert checkpoint.latest(tmp_path).path == first
    warnings = [r.getMessage() for r in caplog.records if "unusable" in r.getMessage()]
    assert len(warnings) == 1 and warnings[0].startswith("LATEST is unusable") and first.name in warnings[0]


@pytest.mark.parametrize("cut", ["structure_edges.arrow", "state/vertex_map.keys.arrow"])
def test_a_checkpoint_cut_short_at_a_record_boundary_is_passed_over(tmp_path, cut):
    """A file that lost its last rows still reads as Arrow (and may keep its size: Arrow pads its buffers): the
    resume failed with "operands could not be broadcast together with shapes (5951,) (5946,)" or "shape mismatch"
    instead of taking the older complete checkpoint."""
    p = ObservedPipeline()
    p.apply(random_events(300, seed=37))
    older = checkpoint.save(tmp_path, p, {("t", 0): 300}, keep=3)
    p.apply(random_events(300, seed=38))
    newest = checkpoint.save(tmp_path, p, {("t", 0): 600}, keep=3)
    table = feather.read_table(str(newest / cut))
    feather.write_feather(table.slice(0, table.num_rows - 3), str(newest / cut), compression="uncompressed")
    assert checkpoint.latest(tmp_path).path == older


def test_the_rest_of_a_checkpoint_pruned_half_way_is_removed(tmp_path):
    """A prune killed half-way leaves a ckpt-* directory whose manifest is gone: no checkpoint, so never pruned
    again, and it kept its structure files (the size of the graph) for good."""
    p = ObservedPipeline()
    p.apply(random_events(300, seed=39))
    kept = checkpoint.save(tmp_path, p, {("t", 0): 300})
    partial = tmp_path / "ckpt-000000000000-00000000000000000001"
    partial.mkdir()
    (partial / "structure_edges.arrow").write_bytes((kept / "structure_edges.arrow").read_bytes())
    checkpoint.check_writable(tmp_path)              # what a run does first
    assert not partial.exists() and checkpoint.latest(tmp_path).path == kept
