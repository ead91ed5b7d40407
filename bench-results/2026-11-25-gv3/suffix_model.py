#!/usr/bin/env python3
"""The entries a batch makes GraphVine pass over, rows' side against key side (a count on the CPU, not a
timing): bench structures' R-MAT graphs (edge factor 16) and their held-out batches, inserted then deleted.

* rows' side (main's large-batch path): every live entry of every touched row is listed (gv_fill_rows),
  copied and searched (gv_find), and the merge / compaction reads it again (gv_insert_write / gv_delete_move);
* key side (keyside=True): each key binary-searches its row (gv_rank); only the entries from a row's first
  changed position on are staged (gv_stage) and written back (the scatters).

Run from a checkout's root: ``python3 bench-results/2026-11-25-gv3/suffix_model.py [scales...]``."""
import sys

import numpy as np

sys.path.insert(0, ".")
from vinestream.stream.bench.structures import _prepare  # noqa: E402

for scale in [int(a) for a in sys.argv[1:]] or [20, 22]:
    name, n, src, dst, w = _prepare(np, {"kind": "rmat", "scale": scale, "edge_factor": 16}, 0)
    e = len(src)
    init = e - 1_000_000
    old = np.sort((src[:init].astype(np.int64) << 32) | dst[:init].astype(np.int64))
    deg = np.bincount(src[:init], minlength=n).astype(np.int64)
    start = np.concatenate([[0], np.cumsum(deg)])
    for bsz in (1000, 1_000_000):
        keys = np.sort((src[init:init + bsz].astype(np.int64) << 32) | dst[init:init + bsz].astype(np.int64))
        s = keys >> 32
        first = np.ones(len(keys), bool)
        first[1:] = s[1:] != s[:-1]
        fs = s[first]
        # insert: the first new key's rank in its old row; entries from there on move
        rank_ins = np.searchsorted(old, keys[first]) - start[fs]
        rows_ins = int(deg[fs].sum())
        keys_ins = int((deg[fs] - rank_ins).sum())
        # delete of the same keys from the graph with them: the first deleted key's position in its row
        after = deg.copy()
        np.add.at(after, s, 1)
        rank_del = rank_ins                  # the first batch key sits at its old rank in the merged row
        rows_del = int(after[fs].sum())
        keys_del = int((after[fs] - rank_del).sum())
        print(f"R-MAT {scale} ({init} edges), {bsz}-edge batch, {len(fs)} rows: insert rows' side {rows_ins} "
              f"entries, key side {keys_ins} ({keys_ins / rows_ins:.1%}); delete rows' side {rows_del}, key side "
              f"{keys_del} ({keys_del / rows_del:.1%})", flush=True)
    del src, dst, w, old
