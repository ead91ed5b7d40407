#!/usr/bin/env python3
"""The BFS job's static run on directed R-MAT 20 / 22 (edge factor 16, as `bench algorithms`): the job with the
counting-sort transpose kernels and with the library transpose, in alternating rounds, each transpose form, the
fused traversal alone and the plain CuPy program (stream/bench/bfs_fused.bench_bfs_job), and the BFS kernels
alone on the undirected R-MAT 20 ef 16 of session 8's `bench bfs-fused`.

    python3 .ci/gpu-bfsjob.py OUT_DIR
"""
from __future__ import annotations

import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.getcwd())

import cupy as cp

from vinestream.algorithms import create_job
from vinestream.stream.bench import bfs_fused as bf
from vinestream.stream.bench.algorithms import IdentityVertexMap, rmat_edges
from vinestream.structures.registry import build

#: cuGraph 26.10's top-down BFS on these directed graphs, H100, session 8 (bench-results/2026-11-25-session8/
#: call-cugraph/alg20.json, alg22.json: peers.bfs.pylibcugraph)
CUGRAPH_MS = {20: 14.378, 22: 30.2}


def alternating(scale, rounds=5, per=5):
    """Medians of `per` runs of each job form, alternated for `rounds` rounds (after one warm-up each)."""
    s, d = rmat_edges(cp, scale, 16, 0)
    g = build("csr", cp, s, d, 1 << scale)
    vm = IdentityVertexMap(cp)
    src = int(cp.argmax(cp.diff(g.adjacency().offsets)))
    jobs = {"fused_transpose": create_job("bfs", cp, sources=[src]),
            "library_transpose": create_job("bfs", cp, sources=[src], fused_transpose=False)}
    for j in jobs.values():
        j.run_static(g, vm)
    out = {k: [] for k in jobs}
    for _ in range(rounds):
        for k, j in jobs.items():
            ts = []
            for _ in range(per):
                cp.cuda.Device().synchronize()
                t = time.perf_counter()
                j.run_static(g, vm)
                cp.cuda.Device().synchronize()
                ts.append(time.perf_counter() - t)
            out[k].append(statistics.median(ts) * 1e3)
    return {k: {"round_medians_ms": v, "median_ms": statistics.median(v)} for k, v in out.items()}


def tuning(scale):
    """The kernels' transpose under other size classes (small, medium, large), median of 7 after a warm-up."""
    from vinestream.algorithms import transpose_kernels as tk
    from vinestream.stream.bench.peers import warm_timed
    s, d = rmat_edges(cp, scale, 16, 0)
    g = build("csr", cp, s, d, 1 << scale)
    csr = g.adjacency()
    out = {}
    for classes in ((32, 1024, 12288), (16, 1024, 12288), (32, 512, 12288), (32, 2048, 12288), (32, 1024, 4096),
                    (8, 256, 12288)):
        secs, _ = warm_timed(cp, lambda c=classes: tk.transpose_fused(cp, csr, 1 << scale, small=c[0], medium=c[1],
                                                                     large=c[2]), 7)
        out["/".join(map(str, classes))] = secs * 1e3
    return out


def main(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    res = {"device": cp.cuda.runtime.getDeviceProperties(0)["name"].decode(), "cugraph_session8_ms": CUGRAPH_MS}
    for scale in (16, 20, 22):
        r = bf.bench_bfs_job(cp, scale, 16, repeat=7)
        r["alternating"] = alternating(scale)
        if scale == 20:
            r["transpose_fused_by_classes_ms"] = tuning(scale)
        if scale in CUGRAPH_MS:
            r["vs_cugraph_session8"] = {k: CUGRAPH_MS[scale] / v["median_ms"] for k, v in r["alternating"].items()}
        res[f"rmat{scale}"] = r
        print(scale, json.dumps(r), flush=True)
        cp.get_default_memory_pool().free_all_blocks()
        json.dump(res, open(f"{out_dir}/bfsjob.json", "w"), indent=1)
    k = bf.bench_bfs_fused(cp, 20, 16, job=False)
    res["kernels_rmat20_ef16_undirected"] = k
    print(bf.format_table(k), flush=True)
    json.dump(res, open(f"{out_dir}/bfsjob.json", "w"), indent=1)


if __name__ == "__main__":
    main(sys.argv[1])
