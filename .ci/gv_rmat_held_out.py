"""The graph of GraphVine's 1e6-edge device benches (``.ci/gpu-gv-onepass.py``, ``.ci/gpu-gv-host-timeline.py``,
``.ci/gpu-gv-host-lines.py``, which import it from their own folder): session 19's R-MAT set-up and the options
that choose it, in one place."""
from __future__ import annotations

import argparse

from vinestream.stream.bench.structures import rmat_edges
from vinestream.structures.csr_types import CSRBatch
from vinestream.structures.registry import create


def held_out_rmat(cp, scale: int, big: int):
    """R-MAT ``scale`` (edge factor 16, seed 0) without self loops, its distinct edges in a random order (seed 1) with
    weights in [0.5, 1.5): ``(src, dst, w, n, init)`` - ``n`` vertices, the first ``init`` edges to load, the last
    ``big`` held out for the timed batches."""
    src, dst = rmat_edges(cp, scale, 16, seed=0)
    keep = src != dst
    b = CSRBatch.from_edges(cp, src[keep].astype(cp.int32), dst[keep].astype(cp.int32))
    src, dst = b.sources().astype(cp.int32), b.cols
    rs = cp.random.RandomState(1)
    order = rs.permutation(src.shape[0])
    src, dst = src[order], dst[order]
    w = (rs.random_sample(src.shape[0]) + 0.5).astype(cp.float32)
    n = int(max(int(src.max()), int(dst.max()))) + 1
    return src, dst, w, n, int(src.shape[0]) - big


def loaded_graphvine(cp, scale: int, big: int):
    """A key-side, one-pass GraphVine holding :func:`held_out_rmat`'s graph but for its ``big`` held-out edges, and
    those edges as an insert batch and a delete batch: ``(g, ins, dele)``, the device synchronised."""
    src, dst, w, n, init = held_out_rmat(cp, scale, big)
    g = create("graphvine", cp, keyside=True, shift="tiles")
    g.insert_vertices(cp.arange(n, dtype=cp.int32))
    g.insert_edges(CSRBatch.from_edges(cp, src[:init], dst[:init], w[:init]))
    ins = CSRBatch.from_edges(cp, src[init:], dst[init:], w[init:])
    dele = CSRBatch.from_edges(cp, src[init:], dst[init:])
    cp.cuda.Device().synchronize()
    return g, ins, dele


def held_out_arguments(rounds: int) -> argparse.ArgumentParser:
    """The benches' common options: ``--scale`` (R-MAT, default 22), ``--big`` (the held-out edges, default 1e6),
    ``--rounds`` (default ``rounds``) and ``--out`` (the folder written); each script adds its own."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--scale", type=int, default=22)
    ap.add_argument("--big", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=rounds)
    ap.add_argument("--out", default=".")
    return ap
