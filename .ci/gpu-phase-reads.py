#!/usr/bin/env python3
"""Does reading an epoch's phase times stall the apply thread?  ``PhaseSeconds`` waits for the epoch's last CUDA event
when read, and the summary row and the run report read every epoch's at once: a warm replay as it is against one
whose summary rows and report leave the phases unread (variants alternating, four rounds).

    python3 .ci/gpu-phase-reads.py [STRUCTURE] [LOG]
"""
import os
import shutil
import sys

sys.path.insert(0, os.getcwd())
import vinestream
from vinestream.stream.app import application
from vinestream.stream.pipeline import pipeline

structure = sys.argv[1] if len(sys.argv) > 1 else "coo"
log = sys.argv[2] if len(sys.argv) > 2 else ".data/sx-mathoverflow.events.parquet"
OUT = "/tmp/phase-reads"
real_row, real_add = pipeline.BatchResult.summary_row, application.RunReport.add


def row_unread(self, **kwargs):
    seconds, self.seconds = self.seconds, {}
    try:
        return real_row(self, **kwargs)
    finally:
        self.seconds = seconds


def add_unread(self, result, invalid):
    if result is None:
        return real_add(self, result, invalid)
    seconds, result.seconds = result.seconds, {}
    try:
        return real_add(self, result, invalid)
    finally:
        result.seconds = seconds


def once(unread):
    pipeline.BatchResult.summary_row = row_unread if unread else real_row
    application.RunReport.add = add_unread if unread else real_add
    shutil.rmtree(OUT, ignore_errors=True)
    return vinestream.replay([log], structure=structure, backend="gpu", batch_size=10000,
                             jobs=["pagerank", "bfs", "triangles"], bfs_sources=[1], progress=False, out=OUT,
                             overwrite=True)[0]


once(False)
for r in range(4):
    for unread in (False, True):
        report = once(unread)
        print(f"{structure} phases {'unread' if unread else 'read  '} round {r}: window {1e3 * report.seconds:.0f} ms, "
              f"{report.events / report.seconds:,.0f} events/s", flush=True)
