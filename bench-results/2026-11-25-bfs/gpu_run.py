"""Device run for the bfs branch: GPU tests of the BFS kernels, then incremental vs static BFS on R-MAT 20
(and 22 if time allows), then a breakdown of the fused update.  Writes into $OUT."""
import json, os, subprocess, sys, time, statistics
OUT = os.environ.get("OUT", "/tmp/out")
os.makedirs(OUT, exist_ok=True)
log = open(f"{OUT}/gpu_run.txt", "w")
def say(*a):
    print(*a, file=log, flush=True); print(*a, flush=True)
say(subprocess.run(["nvidia-smi", "--query-gpu=name,memory.total,driver_version", "--format=csv"],
                   capture_output=True, text=True).stdout)
t = time.time()
r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "tests/test_bfs_repair.py",
                    "tests/test_bfs_kernels.py", "tests/test_bfs.py", "tests/test_kernels_compile.py",
                    "tests/test_bfs_in_edge_log.py", "tests/test_sync_budget.py"], capture_output=True, text=True,
                   timeout=240)
say("TESTS rc", r.returncode, f"{time.time() - t:.0f}s"); say(r.stdout[-3000:]); say(r.stderr[-2000:])
import cupy, numpy as np
from vinestream.stream.bench import bfs_incremental as bi
from vinestream.algorithms import bfs as B, bfs_kernels as bk, in_edge_log as L
from vinestream.structures.backend import synchronize
res = {}
T0 = time.time()
for scale in [int(x) for x in os.environ.get("SCALES", "20").split(",")]:
    t = time.time()
    if scale > 20 and t - T0 > 120:
        say(f"scale {scale} skipped: time"); continue
    res[scale] = bi.bench_bfs_incremental(cupy, scale=scale, edge_factor=16, batches=int(os.environ.get("BATCHES", "7")))
    say(bi.format_table(res[scale])); say(f"({time.time() - t:.0f}s)")
    json.dump(res, open(f"{OUT}/bfs_incremental.json", "w"), indent=1, default=float)
# breakdown of the fused update on R-MAT 20 at 0.01%: time the fold, the repair kernels and the rest
from vinestream.stream.bench.algorithms import IdentityVertexMap, random_delta, rmat_edges
from vinestream.structures.delta import apply_delta
from vinestream.structures.registry import build
xp = cupy
s, d = rmat_edges(xp, 20, 16, 0)
g = build("csr", xp, s, d, 1 << 20)
vm = IdentityVertexMap(xp)
src = int(xp.argmax(xp.diff(g.adjacency().offsets)))
job = B.BFS(xp, sources=[src])
job.run_static(g, vm)
acc = {"fold": [], "repair": [], "update": []}
def wrap(obj, name, key):
    f = getattr(obj, name)
    def w(*a, **k):
        synchronize(xp); t0 = time.perf_counter(); out = f(*a, **k); synchronize(xp)
        acc[key].append(time.perf_counter() - t0); return out
    setattr(obj, name, w)
wrap(L.InEdgeLog, "fold", "fold"); wrap(bk, "bfs_repair", "repair")
for b in range(12):
    delta = random_delta(xp, g, max(2, int(1e-4 * g.num_edges)), 500 + b)
    apply_delta(g, delta)
    synchronize(xp); t0 = time.perf_counter(); job.update(g, delta, vm); synchronize(xp)
    acc["update"].append(time.perf_counter() - t0)
say("breakdown 0.01% (ms, median of 11 after the first):",
    {k: round(statistics.median(v[1:]) * 1e3, 3) for k, v in acc.items() if len(v) > 1}, job.work)
json.dump({k: v for k, v in acc.items()}, open(f"{OUT}/breakdown.json", "w"))

# the code before this branch (main's algorithms/bfs.py as _bfs_before): incremental vs static, same graph, 0.01%
try:
    from vinestream.algorithms._bfs_before import BFS as Before
    jb = Before(xp, sources=[src]); jb.run_static(g, vm)
    tb, ts = [], []
    for b in range(8):
        delta = random_delta(xp, g, max(2, int(1e-4 * g.num_edges)), 900 + b)
        apply_delta(g, delta)
        synchronize(xp); t0 = time.perf_counter(); jb.update(g, delta, vm); synchronize(xp); tb.append(time.perf_counter() - t0)
        fresh = Before(xp, sources=[src])
        synchronize(xp); t0 = time.perf_counter(); fresh.run_static(g, vm); synchronize(xp); ts.append(time.perf_counter() - t0)
        assert bool((jb.dist[: fresh.dist.shape[0]] == fresh.dist).all())
    say("before (main's bfs.py) 0.01%: update ms", round(statistics.median(tb[1:]) * 1e3, 3), "static ms",
        round(statistics.median(ts[1:]) * 1e3, 3), "static/update", round(statistics.median(ts[1:]) / statistics.median(tb[1:]), 2))
except Exception as exc:
    say("before: not run", type(exc).__name__, exc)
