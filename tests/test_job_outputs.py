"""An epoch's job outputs taken as a snapshot (``algorithms.base.snapshot_tables``, ``JobOutputs.snapshot``): every
slot's values and the live masks copied without a wait, the live rows picked on the host.  The tables equal the
columns' form (``job_tables``) of the same epoch although the next batch has changed the jobs' arrays before they
are made, on NumPy and on a GPU; a results sink writes them from its writer thread."""
from __future__ import annotations

import numpy as np
import pyarrow.parquet as pq
import pytest

from tests.backends import BACKENDS
from tests.test_sync_budget import _events
from vinestream.algorithms.base import job_tables, snapshot_tables
from vinestream.connectors.parquet import ParquetResultsSink
from vinestream.stream.pipeline import build_pipeline

JOBS = ["pagerank", "bfs", "triangles"]


def _pipeline(xp, structure="coo", undirected=False):
    return build_pipeline(structure=structure, backend="cpu" if xp is np else "gpu", jobs=JOBS, bfs_sources=[1, 7],
                          undirected=undirected)


@pytest.mark.parametrize("xp", BACKENDS)
@pytest.mark.parametrize("structure, undirected", [("coo", False), ("graphvine", True)])
def test_snapshot_equals_the_epochs_tables_after_the_next_batch(xp, structure, undirected):
    """Batches with churn and vertex deletions (slots freed and reused): each epoch's snapshot, made after the
    next batch has run, equals that epoch's tables made at once; some vertices have no BFS parent (nulls)."""
    rng = np.random.default_rng(9)
    p = _pipeline(xp, structure, undirected)
    p.apply(_events(rng, 3000, ids=800))
    for step in range(5):
        p.apply(_events(rng, 400, ids=900, vertex_deletes=0.03 if step % 2 else 0.0))
        snap = snapshot_tables(p.jobs, p.vertex_map)
        assert snap is not None
        now = job_tables(p.jobs, p.vertex_map)
        p.apply(_events(rng, 400, ids=900, vertex_deletes=0.05))          # the jobs' arrays change
        later = snap()
        assert set(later) == set(JOBS)
        for job in JOBS:
            assert later[job].equals(now[job]), (step, job)
        assert now["bfs"].column("parent").null_count > 0


@pytest.mark.parametrize("xp", BACKENDS)
def test_job_outputs_snapshot_stays_readable(xp):
    """``JobOutputs.snapshot`` then the next apply: its tables are still readable (the unsnapshotted outputs of
    the same epoch are gone) and equal the epoch's."""
    rng = np.random.default_rng(10)
    p = _pipeline(xp)
    p.apply(_events(rng, 3000, ids=800))
    kept = p.apply(_events(rng, 300, ids=800))
    other = p.apply(_events(rng, 300, ids=800))
    expected = {job: other.job_outputs[job] for job in JOBS}             # read now: the lazy form
    other2 = p.apply(_events(rng, 300, ids=800))
    other2.job_outputs.snapshot()
    expected2 = job_tables(p.jobs, p.vertex_map)
    p.apply(_events(rng, 300, ids=800))
    with pytest.raises(RuntimeError, match="gone"):
        kept.job_outputs["pagerank"]
    for job in JOBS:
        assert other.job_outputs[job] is expected[job]
        assert other2.job_outputs[job].equals(expected2[job])
    other2.job_outputs.snapshot()                                         # again: nothing to do


def test_a_job_with_its_own_output_is_not_snapshotted():
    rng = np.random.default_rng(11)
    p = _pipeline(np)
    p.apply(_events(rng, 1000, ids=300))
    job = p.jobs[0]
    job.output = lambda vertex_map: job.__class__.output(job, vertex_map)
    assert snapshot_tables(p.jobs, p.vertex_map) is None
    result = p.apply(_events(rng, 100, ids=300))
    result.job_outputs.snapshot()                                         # the columns' form, made now
    p.apply(_events(rng, 100, ids=300))
    assert result.job_outputs["bfs"].num_rows > 0


@pytest.mark.parametrize("xp", BACKENDS)
def test_sink_writes_each_epochs_snapshot(xp, tmp_path):
    """The results sink snapshots the outputs it writes and makes their tables on its writer thread: each
    epoch's file equals that epoch's tables."""
    rng = np.random.default_rng(12)
    p = _pipeline(xp)
    sink = ParquetResultsSink(tmp_path)
    expected = {}
    for epoch in range(4):
        result = p.apply(_events(rng, 2000 if epoch == 0 else 300, ids=800, vertex_deletes=0.02))
        sink.write(result)
        expected[result.epoch] = job_tables(p.jobs, p.vertex_map)
    sink.close()
    for epoch, tables in expected.items():
        for job in JOBS:
            got = pq.read_table(tmp_path / job / f"epoch={epoch}" / "part-0.parquet")
            assert got.equals(tables[job]), (epoch, job)
