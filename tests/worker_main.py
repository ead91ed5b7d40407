"""A worker process for the SIGTERM test: a real, deliberately slow pipeline, results appended to a file.

usage: python -m tests.worker_main BOOTSTRAP TOPIC GROUP CHECKPOINT_DIR RESULTS_FILE
"""
from __future__ import annotations

import json
import logging
import os
import sys

from tests.kafka_helpers import DECODER, worker_config
from tests.pipelines import ObservedPipeline, RecordingPipeline
from vinestream.stream.app.metrics import PipelineMetrics
from vinestream.stream.app.run import run_worker


class LineSink:
    """One JSON line per epoch, fsynced before write() returns (durable)."""

    def __init__(self, path):
        self.f = open(path, "a")

    def write(self, result, *, invalid=0, offsets=None, batches=1):
        self.f.write(json.dumps({"epoch": result.epoch, "events": result.counts["events"],
                                 "offsets": {f"{tp[0]}:{tp[1]}": o for tp, o in offsets.items()}}) + "\n")
        self.f.flush()
        os.fsync(self.f.fileno())


def main(bootstrap, topic, group, ckpt, results):
    logging.basicConfig(level=logging.WARNING)
    cfg = worker_config(bootstrap, topic, group, format="json", batch_size=200, max_poll_records=200,
                        until_end=False, idle_timeout=None, checkpoint_dir=ckpt, checkpoint_every_batches=1000)
    report = run_worker(cfg, lambda: ObservedPipeline(slow_seconds=0.4), LineSink(results), None,
                        PipelineMetrics(), decoder=DECODER)
    print(json.dumps({"stopped_by": report.stopped_by, "batches": report.batches, "events": report.events}))
    return 0


MODES = ("chaos", "chaos-unslowed", "recording")

if __name__ == "__main__" and (len(sys.argv) < 2 or sys.argv[1] not in MODES):
    sys.exit(main(*sys.argv[1:6]))


def recording_main(bootstrap, topic, group, applied, checkpoint_dir=""):
    """``python -m tests.worker_main recording BOOTSTRAP TOPIC GROUP APPLIED_FILE [CHECKPOINT_DIR]``: a slow Arrow
    worker with batches of 30 events (smaller than the test's messages, so it stops in the middle of one) that
    appends the sources of every batch it applies to APPLIED_FILE (tests.pipelines.RecordingPipeline); logs at
    INFO, prints its report as JSON when it stops."""
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    logging.getLogger("vinestream").setLevel(logging.INFO)
    cfg = worker_config(bootstrap, topic, group, format="arrow", batch_size=30, until_end=False, idle_timeout=None,
                        checkpoint_dir=checkpoint_dir or None, checkpoint_every_batches=1000,
                        checkpoint_every_seconds=3600)
    report = run_worker(cfg, lambda: RecordingPipeline(applied, slow_seconds=0.15), None, None, PipelineMetrics(),
                        decoder=DECODER)
    print(json.dumps({"stopped_by": report.stopped_by, "batches": report.batches, "events": report.events}))
    return 0


if __name__ == "__main__" and len(sys.argv) > 1 and sys.argv[1] == "recording":
    sys.exit(recording_main(*sys.argv[2:]))


def chaos_main(phase_file, *run_args, slowed_down=True):
    """``python -m tests.worker_main chaos PHASE_FILE RUN_ARGS...``: ``vinestream run`` itself, with its
    checkpoint and results writes slowed down and marked in PHASE_FILE, so that a SIGKILL at a random
    moment often lands inside one of them (the chaos campaign, tests/test_chaos.py).  ``chaos-unslowed``: the
    same run without the slowdowns, for a start that is not killed (it only has to finish)."""
    import time

    from vinestream.connectors import dead_letters, parquet
    from vinestream.stream.app import checkpoint
    from vinestream.stream.app.cli import main as cli_main

    def mark(phase):
        with open(phase_file, "w") as fh:
            fh.write(phase)

    def slowed(fn, phase, delay):
        def wrapper(*args, **kwargs):
            mark(phase)
            time.sleep(delay)
            try:
                return fn(*args, **kwargs)
            finally:
                mark("apply")
        return wrapper

    from vinestream.stream.pipeline.pipeline import Pipeline
    if slowed_down:
        Pipeline.apply = slowed(Pipeline.apply, "apply", 0.06)       # long enough runs to be killed mid-stream
        checkpoint._write_table = slowed(checkpoint._write_table, "checkpoint", 0.05)
        parquet.write_atomic = slowed(parquet.write_atomic, "results", 0.01)
        dead_letters.write_atomic = slowed(dead_letters.write_atomic, "dead_letters", 0.01)
    mark("start")
    return cli_main(list(run_args))


if __name__ == "__main__" and len(sys.argv) > 1 and sys.argv[1] in ("chaos", "chaos-unslowed"):
    sys.exit(chaos_main(*sys.argv[2:], slowed_down=sys.argv[1] == "chaos"))
