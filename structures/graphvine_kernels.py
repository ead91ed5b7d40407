"""Fused CUDA kernel for GraphVine's hottest path: looking batch keys up in the touched trees.

The array program in :meth:`structures.graphvine.GraphVine._find_slots` walks the
trees (level by level), expands every live entry into (vertex, position, slot),
builds keys and binary-searches them: about ten passes over the touched
adjacency.  After the same level-order walk has produced the block table, this
kernel does the rest in one pass, one thread per block entry (consecutive
threads read consecutive entries of a block): skip entries past the vertex's
edge count, skip columns no key asks for, binary-search the key among the
sorted batch keys (Algorithm 3's one-thread-per-edge-entry search, for a whole
batch at once).  GPU only; the array program stays the reference and
``tests/test_graphvine.py::test_fused_lookup_matches_array_program`` checks they agree.
"""
from __future__ import annotations

import numpy as np

_SOURCE = r"""
extern "C" __global__
void graphvine_find_slots(const long long* verts, const long long* tstart, const long long* tseg,
                          const int* table, const long long* edge_count, const int* block_cols,
                          const bool* wanted, const long long* ukeys, const long long nkeys,
                          const int bs, const long long entries, long long* found)
{
    long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= entries) return;
    long long t = e / bs;                 // table entry: the t-th gathered block
    long long j = e - t * bs;             // entry within the block
    long long i = tseg[t];
    long long v = verts[i];
    long long k = t - tstart[i];          // CBT index of the block in its vertex's tree
    if (k * bs + j >= edge_count[v]) return;            // past the vertex's dense edges
    long long slot = (long long)table[t] * bs + j;
    int col = block_cols[slot];
    if (col < 0 || !wanted[col]) return;
    long long key = (v << 32) | (long long)(unsigned int)col;
    long long lo = 0, hi = nkeys;
    while (lo < hi) {
        long long mid = (lo + hi) >> 1;
        if (ukeys[mid] < key) lo = mid + 1; else hi = mid;
    }
    if (lo < nkeys && ukeys[lo] == key) found[lo] = slot;
}
"""

_kernel = None


def find_slots_fused(xp, verts, tstart, tseg, table, edge_count, block_cols, wanted, ukeys, bs, found):
    """Fill ``found[i]`` with the slot of ``ukeys[i]`` where it is stored (in place)."""
    global _kernel
    if _kernel is None:
        _kernel = xp.RawKernel(_SOURCE, "graphvine_find_slots")
    entries = int(table.shape[0]) * int(bs)
    if entries == 0 or ukeys.shape[0] == 0:
        return found
    threads = 256
    blocks = (entries + threads - 1) // threads
    _kernel((blocks,), (threads,),
            (xp.ascontiguousarray(verts.astype(np.int64)), xp.ascontiguousarray(tstart.astype(np.int64)),
             xp.ascontiguousarray(tseg.astype(np.int64)), xp.ascontiguousarray(table.astype(np.int32)),
             edge_count, block_cols, wanted, xp.ascontiguousarray(ukeys),
             np.int64(ukeys.shape[0]), np.int32(bs), np.int64(entries), found))
    return found
