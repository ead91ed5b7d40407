#!/usr/bin/env python3
"""What blocks with their own counts would rewrite (a count on the CPU, not a timing): bench structures'
R-MAT graph (edge factor 16) and its held-out 1e6-edge batch, as gv3's suffix_model.py takes them.

Today a vertex's row is dense and sorted over its blocks in CBT order, so an insert rewrites every entry
from the row's first new key on (the suffix: 84% of the touched rows' entries at R-MAT 22) and the rows'
side passes over every entry of every touched row.  With per-block counts (each block sorted, holding
between half and all of its capacity, blocks ordered by their first column) a batch rewrites only the
blocks its keys fall in, and a block that overflows splits into two.  Model: a row's entries packed into
blocks of ``fill x capacity`` entries in order; a key falls in the block of its rank; per capacity, the
blocks touched, the entries they hold (read and rewritten), and the blocks that overflow (split).

Run from a checkout's root: ``python3 bench-results/2026-11-25-gv4/blocks_model.py [scale]``."""
import sys

import numpy as np

sys.path.insert(0, ".")
from vinestream.stream.bench.structures import _prepare

scale = int(sys.argv[1]) if len(sys.argv) > 1 else 22
name, n, src, dst, w = _prepare(np, {"kind": "rmat", "scale": scale, "edge_factor": 16}, 0)
e = len(src)
init = e - 1_000_000
old = np.sort((src[:init].astype(np.int64) << 32) | dst[:init].astype(np.int64))
deg = np.bincount(src[:init], minlength=n).astype(np.int64)
start = np.concatenate([[0], np.cumsum(deg)])
keys = np.sort((src[init:].astype(np.int64) << 32) | dst[init:].astype(np.int64))
s = keys >> 32
rank = np.searchsorted(old, keys) - start[s]           # each key's rank in its old row
first = np.ones(len(keys), bool)
first[1:] = s[1:] != s[:-1]
fs = s[first]
rows = int(deg[fs].sum())
suffix = int((deg[fs] - rank[first]).sum())
print(f"R-MAT {scale}: {init} edges loaded, {len(keys)} keys in {len(fs)} rows; touched rows hold {rows} entries, "
      f"the suffixes from the first new key {suffix} ({suffix / rows:.1%})")
for fill in (1.0, 0.75):
    for cap in (8, 16, 32, 64, 128, 256, 4096):
        per = max(1, int(cap * fill))                  # entries per block before the batch
        blk = (s << 24) | np.minimum(rank // per, (1 << 24) - 1)
        ub, cnt = np.unique(blk, return_counts=True)
        bv = ub >> 24
        held = np.minimum(per, deg[bv] - (ub & ((1 << 24) - 1)) * per).clip(min=0)
        rewritten = int(held.sum())
        splits = int((held + cnt > cap).sum())
        print(f"  capacity {cap:5d}, fill {fill:.2f}: {len(ub):8d} blocks touched, {rewritten:9d} entries rewritten "
              f"({rewritten / rows:.1%} of the touched rows, {rewritten / suffix:.1%} of the suffixes), "
              f"{splits} blocks split; bytes moved ~{(2 * rewritten + len(keys)) * 8 / 1e9:.2f} GB", flush=True)
