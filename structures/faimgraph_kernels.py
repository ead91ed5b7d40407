"""Fused CUDA kernels for faimGraph / aimGraph / ouroGraph on the GPU (thesis sections 4.2.5, 6.2.2).

The array program in :mod:`structures.faimgraph` is the reference; on CuPy the
steps it cannot express without a launch per step run here instead:

* ``fg_walk`` - the *vertex-centric* page walk: one thread per touched
  vertex follows its linked list of pages from the record's first page through
  each page's last word and writes the list into a page table.  The array
  program needs one step (several launches and a sync) per page of the
  longest list; this is one launch.  Every operation that reads an adjacency
  uses it: the duplicate check of insertion, deletion, queries, adjacency
  export, vertex deletion and its reverse scan;
* ``fg_find`` - one thread per live edge entry looks its (vertex, column)
  key up in the batch's sorted keys by binary search and records the entry's
  column word for that key (each key's one writer: an edge is stored once).
  ouroGraph's adjacencies need no walk, only this search.

The page tables, compaction moves, page pops and links that follow are
gathers and scatters over those tables (a fixed number of launches per batch,
not per page), shared with the array program.

The source is one string, ``SOURCE``, compiled by nvcc in
``tests/test_faimgraph_kernels_compile.py`` and, behind a host prelude, by
g++ for a serial emulation (``tests/faimgraph_emulation.py``).
"""
from __future__ import annotations

import numpy as np

from .raw_kernels import RawKernels, i32, i64

SOURCE = r"""
#ifndef FG_GRID_LOOP
#define FG_GRID_LOOP(t, n) \
    for (long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x; t < (n); \
         t += (long long)blockDim.x * gridDim.x)
#endif
#define FG_VERTEX_WORDS 5
#define FG_R_FIRST 3

// table[start[i] + k] = page k of slot i's list (k < npages[i]); page p's next page is the last
// word of p, pages counted from the top of the pool (p occupies [W - (p+1)*PW, W - p*PW))
extern "C" __global__
void fg_walk(const long long* slots, const long long* start, const long long* npages,
             const long long n, const int* pool, const long long W, const int PW, long long* table)
{
    FG_GRID_LOOP(i, n) {
        long long p = pool[slots[i] * FG_VERTEX_WORDS + FG_R_FIRST];
        long long at = start[i];
        for (long long k = 0; k < npages[i]; ++k) {
            table[at + k] = p;
            p = pool[W - p * PW - 1];
        }
    }
}

// one thread per live entry e (column word cw[e] of vertex vids[seg[e]]): found[key] = cw[e] where
// the entry's key is among the sorted keys, hit[e] = 1 then
extern "C" __global__
void fg_find(const long long* ukeys, const long long nkeys, const long long* vids,
             const long long* seg, const long long* cw, const long long entries, const int* pool,
             long long* found, bool* hit)
{
    FG_GRID_LOOP(e, entries) {
        long long key = (vids[seg[e]] << 32) | (long long)(unsigned int)pool[cw[e]];
        long long lo = 0, hi = nkeys;
        while (lo < hi) {
            long long mid = (lo + hi) >> 1;
            if (ukeys[mid] < key) lo = mid + 1; else hi = mid;
        }
        bool h = lo < nkeys && ukeys[lo] == key;
        hit[e] = h;
        if (h) found[lo] = cw[e];
    }
}
"""

KERNELS = ("fg_walk", "fg_find")

_kernels = RawKernels(SOURCE, "faimGraph")

#: the launcher in use; tests swap in a serial host emulation of the same source
launcher = _kernels.launch


def launch(xp, name: str, n: int, *args) -> None:
    """Run kernel ``name`` over ``n`` items; nothing when ``n`` is 0."""
    if int(n) <= 0:
        return
    launcher(xp, name, int(n), tuple(args))


def walk(graph, slots, start, npages, total: int):
    """Page table of ``slots``' linked lists (``fg_walk``)."""
    xp = graph.xp
    table = xp.full(int(total), -1, dtype=np.int64)
    launch(xp, "fg_walk", slots.shape[0], xp.ascontiguousarray(slots, dtype=np.int64),
           xp.ascontiguousarray(start, dtype=np.int64), xp.ascontiguousarray(npages, dtype=np.int64),
           i64(slots.shape[0]), graph.pool, i64(graph.pool_words), i32(graph.page_words), table)
    return table


def find(graph, ukeys, vids, seg, cw, found):
    """Search every live entry's key in the sorted keys (``fg_find``); fills ``found``, returns the hit mask."""
    xp = graph.xp
    n = int(cw.shape[0])
    hit = xp.zeros(n, dtype=bool)
    launch(xp, "fg_find", n, xp.ascontiguousarray(ukeys, dtype=np.int64), i64(ukeys.shape[0]),
           xp.ascontiguousarray(vids, dtype=np.int64), xp.ascontiguousarray(seg, dtype=np.int64),
           xp.ascontiguousarray(cw, dtype=np.int64), i64(n), graph.words, found, hit)
    return hit
