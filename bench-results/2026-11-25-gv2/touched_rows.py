#!/usr/bin/env python3
"""How many live edges the rows a batch touches hold (what GraphVine's sorted rows make a batch scan and
rewrite): bench structures' R-MAT graphs (scales 20 and 22, edge factor 16) and its held-out batches, on
the CPU.  Run from a checkout's root: ``python3 bench-results/2026-11-25-gv2/touched_rows.py``."""
import sys

import numpy as np

sys.path.insert(0, ".")
from vinestream.stream.bench.structures import _prepare

for scale in (20, 22):
    name, n, src, dst, w = _prepare(np, {"kind": "rmat", "scale": scale, "edge_factor": 16}, 0)
    e = len(src)
    init = e - 1_000_000
    deg = np.bincount(src[:init], minlength=n)
    for bsz in (1000, 1_000_000):
        s = np.unique(src[init:init + bsz])
        live = int(deg[s].sum())
        print(f"R-MAT {scale}: {e} edges; a {bsz}-edge batch of held-out edges touches {len(s)} sources whose rows "
              f"hold {live} live edges ({live / bsz:.1f} per batch edge, {live / init:.1%} of the graph)", flush=True)
    del src, dst, w
