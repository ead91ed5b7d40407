"""A GPU run's set-up on a thread (stream/app/warm_up.py): which kernel modules it loads, that it runs from the
start of the run and never fails the run, that a module is loaded once when the thread and a launch race for
it (RawKernels' lock), and, on a GPU, that the small-graph transpose without cuSPARSE equals the library's."""
from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from tests.backends import HAS_GPU, cupy
from tests.event_logs import random_events, write_log
from vinestream.stream.app import warm_up
from vinestream.stream.app.application import Application, LoopConfig
from vinestream.stream.app.replay import replay
from vinestream.structures.raw_kernels import RawKernels


def test_kernel_modules_follow_the_structure_the_jobs_and_the_batch_size():
    mods = warm_up.kernel_modules("coo", ["pagerank", "bfs", "triangles"], 10_000)
    assert mods == [*warm_up.SMALL_BATCH_KERNELS, warm_up.STRUCTURE_KERNELS["coo"], *warm_up.JOB_KERNELS["pagerank"],
                    *warm_up.JOB_KERNELS["bfs"], *warm_up.JOB_KERNELS["triangles"]]
    assert "vinestream.algorithms.transpose_kernels" in warm_up.JOB_KERNELS["bfs"]    # the in-edge transpose
    assert warm_up.kernel_modules("csr", ["bfs"], 10**7) == list(warm_up.JOB_KERNELS["bfs"])   # no small-batch path
    assert warm_up.kernel_modules("graphvine", [], None) == [warm_up.STRUCTURE_KERNELS["graphvine"]]
    import importlib
    for name in [*warm_up.SMALL_BATCH_KERNELS, *warm_up.STRUCTURE_KERNELS.values(),
                 *(m for ms in warm_up.JOB_KERNELS.values() for m in ms)]:
        assert hasattr(importlib.import_module(name)._kernels, "preload"), name


class _Module:
    made = 0

    def __init__(self, code):
        type(self).made += 1
        time.sleep(0.02)              # a slow load: the race's window
        self.compiled = 0

    def compile(self):
        self.compiled += 1

    def get_function(self, name):
        return (self, name)


class _FakeXp:
    RawModule = _Module


def test_a_module_is_loaded_once_when_the_warm_up_and_a_launch_race():
    _Module.made = 0
    kernels = RawKernels("// source", "test")
    t = threading.Thread(target=kernels.preload, args=(_FakeXp,))
    t.start()
    time.sleep(0.005)
    f = kernels._function(_FakeXp, "k")
    t.join()
    assert _Module.made == 1 and f[0] is kernels._module and kernels._module.compiled == 1
    kernels.preload(_FakeXp)
    assert _Module.made == 1 and kernels._module.compiled == 1


def test_kernel_modules_are_loaded_side_by_side_once_each():
    """The warm-up loads its kernel modules on a thread each (a compile gives up the interpreter lock): four slow
    loads take about one's time, each module is loaded and compiled once, and a failed one raises after the rest."""
    class Slow(_Module):
        def compile(self):
            time.sleep(0.3)
            super().compile()

    class SlowXp:
        RawModule = Slow
    Slow.made = 0
    kernels = [RawKernels(f"// source {i}", "test") for i in range(4)]
    t = time.perf_counter()
    warm_up.preload_side_by_side(SlowXp, kernels)
    took = time.perf_counter() - t
    assert Slow.made == 4 and all(k._module.compiled == 1 for k in kernels)
    assert took < 0.9, took                                  # one after the other: 4 x (0.02 + 0.3) s

    class Failing:
        def preload(self, xp):
            raise RuntimeError("no compiler")
    again = [RawKernels("// source 9", "test"), Failing(), RawKernels("// source 10", "test")]
    with pytest.raises(RuntimeError, match="no compiler"):
        warm_up.preload_side_by_side(SlowXp, again)
    assert again[0]._module is not None and again[2]._module is not None


def test_device_warm_up_never_raises():
    class Broken:
        def arange(self, *a, **k):
            raise RuntimeError("no device")
    warm_up.device_warm_up(Broken(), ["vinestream.algorithms.pagerank_kernels"])     # logged, not raised


def test_the_run_starts_the_warm_up_first_on_its_own_thread(tmp_path):
    log = write_log(tmp_path / "a.parquet", random_events(1000, seed=1))
    seen = {}

    def warm():
        seen["thread"] = threading.current_thread().name
        seen["at"] = time.perf_counter()

    def factory():
        from vinestream.stream.pipeline import build_pipeline
        seen["factory_at"] = time.perf_counter()
        return build_pipeline(structure="coo", backend="cpu")
    from vinestream.connectors.parquet import ReplaySource
    report = Application(LoopConfig(until_end=True), ReplaySource(log, batch_size=300), factory, warm_up=warm).run()
    assert report.batches == 4
    assert seen["thread"] == "vinestream-warm-up" and seen["at"] <= seen["factory_at"] + 0.5


def test_a_cpu_replay_has_no_warm_up(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(warm_up, "device_warm_up", lambda *a: calls.append(a))
    log = write_log(tmp_path / "a.parquet", random_events(500, seed=2))
    report, _ = replay([log], structure="coo", backend="cpu", batch_size=200)
    assert report.batches == 3 and not calls


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_GPU, reason="needs CuPy and a CUDA device")
def test_gpu_transpose_of_small_graphs_without_the_library_equals_it(monkeypatch):
    from vinestream.algorithms import edge_index
    from vinestream.structures.csr_types import CSR
    rng = np.random.default_rng(4)
    n, m = 3000, 40_000
    keys = np.unique(rng.integers(0, n, m).astype(np.int64) << 32 | rng.integers(0, n, m).astype(np.int64))
    rows, cols = keys >> 32, keys & 0xFFFFFFFF
    offsets = np.searchsorted(rows, np.arange(n + 1)).astype(np.int64)
    csr = CSR(offsets=cupy.asarray(offsets), cols=cupy.asarray(cols.astype(np.int32)), weights=None)
    small = edge_index.transpose(cupy, csr, n + 5)                         # below the threshold: the sort
    monkeypatch.setattr(edge_index, "LIBRARY_TRANSPOSE_MIN_EDGES_GPU", 0)
    library = edge_index.transpose(cupy, csr, n + 5)                       # cuSPARSE
    assert bool((small.offsets == library.offsets).all()) and bool((small.cols == library.cols).all())
    ref = edge_index.transpose(np, CSR(offsets=offsets, cols=cols.astype(np.int32), weights=None), n + 5)
    assert np.array_equal(cupy.asnumpy(small.offsets), ref.offsets) and np.array_equal(cupy.asnumpy(small.cols),
                                                                                       ref.cols)


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_GPU, reason="needs CuPy and a CUDA device")
def test_gpu_device_warm_up_loads_the_modules(tmp_path):
    import importlib
    mods = warm_up.kernel_modules("coo", ["pagerank", "bfs", "triangles"], 10_000)
    warm_up.device_warm_up(cupy, mods)
    import sys
    assert all(name in sys.modules for name in warm_up.LIBRARY_MODULES)
    for name in mods:
        assert importlib.import_module(name)._kernels._module is not None, name
    log = write_log(tmp_path / "a.parquet", random_events(3000, seed=3))
    a, _ = replay([log], structure="coo", backend="gpu", batch_size=500, jobs=["pagerank", "triangles"])
    b, _ = replay([log], structure="coo", backend="gpu", batch_size=500, jobs=["pagerank", "triangles"],
                  warm_up=False, read_ahead=False)
    assert (a.batches, a.events, a.edges, a.vertices) == (b.batches, b.events, b.edges, b.vertices)


def test_the_report_tells_the_build_apart(tmp_path):
    """The run's report holds the pipeline's build (before the first batch) as ``build_seconds``, a part of its
    window, and its table prints it; the factory's own time is in it."""
    log = write_log(tmp_path / "a.parquet", random_events(600, seed=5))

    def factory():
        from vinestream.stream.pipeline import build_pipeline
        time.sleep(0.05)                                   # a slow build
        return build_pipeline(structure="coo", backend="cpu")
    from vinestream.connectors.parquet import ReplaySource
    report = Application(LoopConfig(until_end=True), ReplaySource(log, batch_size=200), factory).run()
    assert report.batches == 3 and 0.05 <= report.build_seconds < report.seconds
    rows = {line.rsplit("  ", 1)[0].strip(): line.rsplit("  ", 1)[1] for line in report.table().splitlines()}
    assert rows["build ms"] == f"{report.build_seconds * 1e3:.1f}"


def test_the_sparse_library_is_warmed_only_where_a_run_may_reach_it():
    """cupyx's sparse module (and SciPy with it) is imported by the warm-up for runs whose edges may reach the
    library transposes' threshold, or whose size is unknown (a Kafka stream), not for a small log's replay."""
    from vinestream.algorithms.edge_index import LIBRARY_TRANSPOSE_MIN_EDGES_GPU
    assert warm_up.may_use_sparse_library(None)
    assert not warm_up.may_use_sparse_library(506_550)
    assert warm_up.may_use_sparse_library(LIBRARY_TRANSPOSE_MIN_EDGES_GPU)
