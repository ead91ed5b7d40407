"""Fused CUDA kernels for a small batch's own share of the pipeline: resolve, the CSR batches, the delta.

On a GPU a 1,000-event batch is launch-bound: :func:`resolve.net_effect`,
:meth:`CSRBatch.from_edges` and ``Pipeline._delta`` are a few hundred CuPy calls
(sorts, scans, scatters, compactions), each costing the host 10-100 us while the
device idles.  Here each of the three is ONE launch of one (or two) thread blocks
that does the whole array program with block-wide bitonic sorts and prefix sums
over scratch memory, writing every output into one device buffer:

* ``rs_resolve`` - the whole :func:`net_effect` (self-loop neutralising,
  undirected mirroring, rank space, last delete / create per vertex, effective
  edge events, the last event per key, vertex existence before / after, the
  created / deleted vertices, insert / delete key sets, the distinct sources of
  each, the revived count).  The vertex map's answers (``lookup(ids) >= 0`` and
  ``released``) come from a binary search of its sorted ``base`` and ``extra``
  arrays inside the kernel.  A header of eight sizes opens the buffer: the host
  reads it in one transfer and takes views of the buffer for the NetEffect.
  The events go up as one packed buffer from a pinned per-thread staging buffer
  (an asynchronous copy), and the header comes back through a pinned slot.  With
  :data:`GRAPHS` (off by default: its capture failed on the one GPU it met), the
  pipeline's batches (``reuse=True``) whose sorts fit the block run padded to a
  power of two with no-op rows on fixed per-thread buffers, as ONE CUDA graph per
  size: the upload, ``rs_resolve_map`` (the map's arrays through a device
  parameter block, so the graph outlives the map's reallocations) and the
  header's copy; a replay is one graph launch and one wait.
* ``rs_csr`` - both CSR batches (inserts with weights, deletes), block 0 and
  block 1: internal ids by the same binary search (after the vertex phase
  assigned them), sorted by (src, dst), rows and offsets.  Every size is known
  from resolve's header: no transfer.
* ``rs_delta`` - ``Pipeline._delta``'s compactions (the phases' masks -> the
  BatchDelta's arrays) in one block.

Capacity: ``CAPACITY`` = 16,384 rows per batch (events, each counted twice in an
undirected batch, whose mirrored rows are resolved too).  The work of one block grows
as ``m log^2 m`` (a bitonic sort of the ``m`` = 2 x rows names), while the array
program costs its few hundred host dispatches whatever the size: on an H100
(``.ci/gpu-profile-batch.py`` with ``MODE=crossover``, R-MAT 20's vertex map) the fused
resolve took 0.24 / 0.64 / 1.35 / 2.6 ms at 1,000 / 4,096 / 8,192 / 16,384 directed
events against 2.7-2.9 ms for the array program on an idle host (about 5 ms on a loaded
one), so the fused path wins up to the capacity.  The sorts run their within-tile
stages in shared memory (``block_primitives``); the rest of the scratch lives in
global memory (at capacity a few MiB, L2-resident on an H100).  Larger batches and the
NumPy backend keep the array program, which stays the reference: the device
tests compare the two field by field, and ``tests/resolve_emulation.py`` runs
this exact source on the host with g++.

Every kernel loop between two barriers (``RS_LOOP``) has independent
iterations (each location one writer, or every writer storing the same value,
or an atomic max / add), so the host emulation can run it in any thread order.
"""
from __future__ import annotations

import ctypes
import itertools
import os
import threading

import numpy as np
import pyarrow.compute as pc

from vinestream.stream.batching.resolve import NetEffect
from vinestream.stream.events.device import DeviceEvents
from vinestream.structures.array_ops import pow2_at_least
from vinestream.structures.backend import as_contiguous, count_launch, pinned_empty, to_numpy
from vinestream.structures.block_primitives import block_sort_and_scan, lower_bound
from vinestream.structures.csr_types import VERTEX_DTYPE, WEIGHT_DTYPE, CSRBatch
from vinestream.structures.delta import BatchDelta
from vinestream.structures.raw_kernels import RawKernels, i64

CAPACITY = 16384           # rows per batch the fused path takes: events, x 2 when undirected (module docstring)
THREADS = 1024             # one block
HEADER = 8                 # n_gone, n_created, n_ins, n_del, self_loops, ins_rows, del_rows, revived

SOURCE = r"""
#define RS_NONE (-1LL)
#define RS_MAX 0x7FFFFFFFFFFFFFFFLL
#define RS_LOW32 0xFFFFFFFFLL
#define RS_NO_OP 0
#define RS_ADD_EDGE 1
#define RS_DELETE_EDGE 2
#define RS_ADD_VERTEX 3
#define RS_DELETE_VERTEX 4
#define RS_THREADS 1024
#ifndef RS_LOOP
#define RS_LOOP(i, n) for (long long i = threadIdx.x; i < (n); i += blockDim.x)
#endif

// the vertex map's sorted arrays (stream/batching/vertex_map.py): base and extra keys, their values
// (internal id, -1 for a tombstone)
#define RS_MAP const long long* bkeys, const int* bvals, const long long nb, \
               const long long* xkeys, const int* xvals, const long long nx
#define RS_MAP_ARGS bkeys, bvals, nb, xkeys, xvals, nx

@LOWER_BOUND@
// slot of q in keys[0, n), or -1
__device__ long long rs_find(const long long* keys, long long n, long long q)
{
    long long lo = rs_lower(keys, n, q);
    return (lo < n && keys[lo] == q) ? lo : -1;
}

// VertexMap.lookup(q) (the internal id, -1 when unmapped); *released: VertexMap.released(q).  A key has
// at most one entry in base and extra together (a released key is revived in place, a compaction folds
// extra into base), so a live entry in base ends the search, as vm_lookup's does: most of a batch's ids
// are old vertices, and the second binary search was about as long as the first
__device__ long long rs_lookup(long long q, RS_MAP, bool* released)
{
    long long at = rs_find(bkeys, nb, q);
    long long got = at >= 0 ? (long long)bvals[at] : -1;
    bool tomb = at >= 0 && bvals[at] < 0;
    if (got >= 0) {
        if (released) *released = false;
        return got;
    }
    long long ax = rs_find(xkeys, nx, q);
    if (ax >= 0) {
        if (got < 0) got = (long long)xvals[ax];
        tomb = tomb || xvals[ax] < 0;
    }
    if (released) *released = tomb;
    return got;
}

// row r of the prepared batch (resolve.prepare): self-loops neutralised unless kept, event e as rows
// 2e (as given) and 2e+1 (reversed edge op, else a no-op) when undirected
__device__ int rs_row(long long r, const signed char* op, const long long* src, const long long* dst,
                      int undirected, int keep_loops, long long* s, long long* d)
{
    long long e = undirected ? (r >> 1) : r;
    int o = op[e];
    long long a = src[e], b = dst[e];
    bool is_edge = o == RS_ADD_EDGE || o == RS_DELETE_EDGE;
    if (is_edge && a == b && !keep_loops) { o = RS_NO_OP; is_edge = false; }
    if (undirected && (r & 1)) {
        if (!(is_edge && a != b)) o = RS_NO_OP;
        long long t = a; a = b; b = t;
    }
    *s = a; *d = b;
    return o;
}

__device__ bool rs_is_edge(int o) { return o == RS_ADD_EDGE || o == RS_DELETE_EDGE; }

""" + block_sort_and_scan("rs", "RS_LOOP") + r"""

// vertex flags (rank space)
#define RS_GONE 1LL
#define RS_CREATED 2LL
#define RS_UNTOUCHED_OLD 4LL

// The whole net effect (stream/batching/resolve.py) of n_ev events: n rows (2 n_ev when undirected),
// m = 2n names; pn, pm: powers of two >= n, m.  ws: scratch of 2 pm + 2 pn + 9 m + 2 n + 8 longs.
// out: the header (HEADER sizes), then deleted vertices [m], created [m], insert src, dst, weight
// (floats, in n longs), delete src, dst [n each].  Three parts around the two sorts (names, then edge
// keys): rs_resolve runs all of it in one block with the block sorts; a larger batch runs the parts as
// rs_resolve_names / _ranks / _decide with the library's sorts between them (fused_net_effect).
#define RS_ARGS const signed char* op, const long long* src, const long long* dst, const float* weight, \
                const long long n_ev, const int undirected, const int keep_loops, RS_MAP, \
                const long long pn, const long long pm, long long* ws, long long* out
#define RS_PASS op, src, dst, weight, n_ev, undirected, keep_loops, RS_MAP_ARGS, pn, pm, ws, out
// the scratch's parts (fused_net_effect sizes ws for them)
struct rs_ws {
    long long n, m;                     // rows, names
    long long *nk, *nv;                 // names, sorted, and their name index   [pm each]
    long long *ek, *ev;                 // edge keys, sorted, and their row      [pn each]
    long long *pos, *verts;             // rank of name i; id of rank v          [m each]
    long long *last_del, *last_cre, *vflag;                                   // [m each]
    long long *fg, *fc, *sg, *sc;       // gone / created flags, their exclusive sums [m each]
    long long *fa, *fd;                 // deciding add / delete per sorted row  [n each]
    long long* ctr;                     // [8]: -, dropped self-loops, ins rows, del rows, revived
};

__device__ rs_ws rs_layout(long long* ws, long long n_ev, int undirected, long long pn, long long pm)
{
    rs_ws w;
    w.n = undirected ? 2 * n_ev : n_ev; w.m = 2 * w.n;
    w.nk = ws; w.nv = w.nk + pm; w.ek = w.nv + pm; w.ev = w.ek + pn;
    w.pos = w.ev + pn; w.verts = w.pos + w.m; w.last_del = w.verts + w.m; w.last_cre = w.last_del + w.m;
    w.vflag = w.last_cre + w.m; w.fg = w.vflag + w.m; w.fc = w.fg + w.m; w.sg = w.fc + w.m; w.sc = w.sg + w.m;
    w.fa = w.sc + w.m; w.fd = w.fa + w.n; w.ctr = w.fd + w.n;
    return w;
}
#define RS_LAYOUT const rs_ws w = rs_layout(ws, n_ev, undirected, pn, pm); const long long n = w.n, m = w.m;

// 1. names (an event's vertex ids) with their index; per-vertex tables cleared; dropped self-loops
__device__ void rs_names(RS_ARGS)
{
    RS_LAYOUT
    if (threadIdx.x == 0) for (int c = 0; c < 8; ++c) w.ctr[c] = 0;
    RS_LOOP(i, pm) {
        if (i < m) {
            long long r = i < n ? i : i - n, s, d;
            int o = rs_row(r, op, src, dst, undirected, keep_loops, &s, &d);
            w.nk[i] = (i < n || !rs_is_edge(o)) ? s : d;
            w.last_del[i] = RS_NONE; w.last_cre[i] = RS_NONE;
        } else {
            w.nk[i] = RS_MAX;
        }
        w.nv[i] = i;
    }
    __syncthreads();
    RS_LOOP(e, n_ev) {
        if (!keep_loops && rs_is_edge(op[e]) && src[e] == dst[e]) atomicAdd((unsigned long long*)&w.ctr[1], 1ULL);
    }
    __syncthreads();
}

// 2.-4. with the names sorted: rank space, the last delete / creation per vertex, the effective edge
// events keyed by (src rank, dst rank) (to be sorted), vertex existence before / after
__device__ void rs_ranks(RS_ARGS, long long* sh)
{
    RS_LAYOUT
    // 2. rank space: the rank of each name among the batch's distinct ids
    RS_LOOP(i, m) w.fg[i] = (i == 0 || w.nk[i] != w.nk[i - 1]) ? 1 : 0;
    __syncthreads();
    const long long distinct = rs_scan(w.fg, w.sg, m, sh);
    RS_LOOP(i, m) {
        long long rank = w.sg[i] + w.fg[i] - 1;
        w.pos[w.nv[i]] = rank;
        if (w.fg[i]) w.verts[rank] = w.nk[i];
    }
    __syncthreads();
    // 3. last delete / last creation per vertex
    RS_LOOP(r, n) {
        long long s, d;
        int o = rs_row(r, op, src, dst, undirected, keep_loops, &s, &d);
        long long sp = w.pos[r], dp = w.pos[n + r];
        if (o == RS_DELETE_VERTEX) atomicMax(&w.last_del[sp], r);
        if (o == RS_ADD_VERTEX || o == RS_ADD_EDGE) atomicMax(&w.last_cre[sp], r);
        if (o == RS_ADD_EDGE) atomicMax(&w.last_cre[dp], r);
    }
    __syncthreads();
    // 4. effective edge events keyed by (src rank, dst rank); vertex existence before / after
    RS_LOOP(r, pn) {
        long long key = RS_MAX;
        if (r < n) {
            long long s, d;
            int o = rs_row(r, op, src, dst, undirected, keep_loops, &s, &d);
            long long sp = w.pos[r], dp = w.pos[n + r];
            if (rs_is_edge(o) && r > w.last_del[sp] && r > w.last_del[dp]) key = (sp << 32) | dp;
        }
        w.ek[r] = key;
        w.ev[r] = r;
    }
    RS_LOOP(v, m) {
        long long flags = 0;
        if (v < distinct) {
            bool released;
            bool before = rs_lookup(w.verts[v], RS_MAP_ARGS, &released) >= 0;
            bool deleted = w.last_del[v] >= 0;
            bool after = w.last_cre[v] > w.last_del[v] || (before && !deleted);
            bool created = after && !(before && !deleted);
            bool gone = before && deleted;
            if (gone) flags |= RS_GONE;
            if (created) flags |= RS_CREATED;
            if (before && !deleted) flags |= RS_UNTOUCHED_OLD;
            if (created && (released || gone)) atomicAdd((unsigned long long*)&w.ctr[4], 1ULL);
        }
        w.vflag[v] = flags;
        w.fg[v] = (flags & RS_GONE) ? 1 : 0;
        w.fc[v] = (flags & RS_CREATED) ? 1 : 0;
    }
    __syncthreads();
}

// 5.-6. with the edge keys sorted: the last effective event of each key decides; the compactions in
// sorted-key order (ascending (src, dst) ids), the distinct sources of each; the header
__device__ void rs_decide(RS_ARGS, long long* sh)
{
    RS_LAYOUT
    long long* sa = w.sg;                 // reused once the vertices are out (n <= m)
    long long* sd = w.sc;
    long long* out_gone = out + 8;
    long long* out_created = out_gone + m;
    long long* ins_src = out_created + m;
    long long* ins_dst = ins_src + n;
    float* ins_w = (float*)(ins_dst + n);   // n floats in n longs (the first half)
    long long* del_src = ins_dst + 2 * n;
    long long* del_dst = del_src + n;
    // 5. the last effective event of each key decides
    const long long n_gone = rs_scan(w.fg, w.sg, m, sh);
    const long long n_created = rs_scan(w.fc, w.sc, m, sh);
    RS_LOOP(v, m) {
        if (w.fg[v]) out_gone[w.sg[v]] = w.verts[v];
        if (w.fc[v]) out_created[w.sc[v]] = w.verts[v];
    }
    __syncthreads();
    RS_LOOP(i, n) {
        long long key = w.ek[i];
        bool decide = key != RS_MAX && (i == n - 1 || w.ek[i + 1] != key);
        bool add = false, del = false;
        if (decide) {
            long long s, d;
            int o = rs_row(w.ev[i], op, src, dst, undirected, keep_loops, &s, &d);
            add = o == RS_ADD_EDGE;
            del = !add && (w.vflag[key >> 32] & RS_UNTOUCHED_OLD) && (w.vflag[key & RS_LOW32] & RS_UNTOUCHED_OLD);
        }
        w.fa[i] = add ? 1 : 0;
        w.fd[i] = del ? 1 : 0;
    }
    __syncthreads();
    // 6. the compactions in sorted-key order (ascending (src, dst) ids), then the distinct sources
    const long long n_ins = rs_scan(w.fa, sa, n, sh);
    const long long n_del = rs_scan(w.fd, sd, n, sh);
    RS_LOOP(i, n) {
        long long key = w.ek[i], r = w.ev[i];
        long long sp = key >> 32, dp = key & RS_LOW32;
        if (w.fa[i]) {
            long long a = sa[i];
            ins_src[a] = w.verts[sp]; ins_dst[a] = w.verts[dp];
            ins_w[a] = weight[undirected ? (r >> 1) : r];
        } else if (w.fd[i]) {
            long long a = sd[i];
            del_src[a] = w.verts[sp]; del_dst[a] = w.verts[dp];
        }
    }
    __syncthreads();
    RS_LOOP(a, n_ins) if (a == 0 || ins_src[a] != ins_src[a - 1]) atomicAdd((unsigned long long*)&w.ctr[2], 1ULL);
    RS_LOOP(a, n_del) if (a == 0 || del_src[a] != del_src[a - 1]) atomicAdd((unsigned long long*)&w.ctr[3], 1ULL);
    __syncthreads();
    if (threadIdx.x == 0) {
        out[0] = n_gone; out[1] = n_created; out[2] = n_ins; out[3] = n_del;
        out[4] = w.ctr[1]; out[5] = w.ctr[2]; out[6] = w.ctr[3]; out[7] = w.ctr[4];
    }
}

// the whole resolve of one block: names, their sort and ranks, the edges' sort, the decisions (both kernels)
#define RS_RESOLVE_BODY \
    __shared__ long long sh[RS_THREADS]; \
    const rs_ws w = rs_layout(ws, n_ev, undirected, pn, pm); \
    rs_names(RS_PASS); \
    rs_sort(w.nk, w.nv, pm); \
    rs_ranks(RS_PASS, sh); \
    rs_sort(w.ek, w.ev, pn); \
    rs_decide(RS_PASS, sh);

extern "C" __global__ void __launch_bounds__(RS_THREADS)
rs_resolve(RS_ARGS)
{
    RS_RESOLVE_BODY
}

// rs_resolve with the vertex map's arrays read from the device (map: bkeys, bvals, nb, xkeys, xvals, nx as
// six longs), so that one CUDA graph per batch size replays it while the map changes (fused_net_effect's
// graph path: the upload, this launch and the header's read in one graph launch)
extern "C" __global__ void __launch_bounds__(RS_THREADS)
rs_resolve_map(const signed char* op, const long long* src, const long long* dst, const float* weight,
               const long long n_ev, const int undirected, const int keep_loops, const long long* map,
               const long long pn, const long long pm, long long* ws, long long* out)
{
    const long long* bkeys = (const long long*)map[0];
    const int* bvals = (const int*)map[1];
    const long long nb = map[2];
    const long long* xkeys = (const long long*)map[3];
    const int* xvals = (const int*)map[4];
    const long long nx = map[5];
    RS_RESOLVE_BODY
}

extern "C" __global__ void __launch_bounds__(RS_THREADS)
rs_resolve_names(RS_ARGS) { rs_names(RS_PASS); }

extern "C" __global__ void __launch_bounds__(RS_THREADS)
rs_resolve_ranks(RS_ARGS)
{
    __shared__ long long sh[RS_THREADS];
    rs_ranks(RS_PASS, sh);
}

extern "C" __global__ void __launch_bounds__(RS_THREADS)
rs_resolve_decide(RS_ARGS)
{
    __shared__ long long sh[RS_THREADS];
    rs_decide(RS_PASS, sh);
}

// Both CSR batches (structures/csr_types.CSRBatch.from_edges with assume_unique): block 0 the inserts
// (weighted), block 1 the deletes.  Keys are the internal ids the vertex map gives the (external,
// distinct) pairs.  Per batch of k edges, p a power of two >= k: rows [k] int, offsets [k+1] long,
// cols [k] int, weights [k] float; scratch key, val [p], flags, sums [k].  rs_csr sorts in the block; a
// larger batch runs rs_csr_keys, the library's sort of each block's (key, val), then rs_csr_rows.
#define RS_CSR_ARGS const long long* isrc, const long long* idst, const float* iw, const long long ki, \
                    const long long pi, int* irows, long long* ioffs, int* icols, float* iweights, \
                    long long* iws, const long long* dsrc, const long long* ddst, const long long kd, \
                    const long long pd, int* drows, long long* doffs, int* dcols, long long* dws, RS_MAP
#define RS_CSR_PASS isrc, idst, iw, ki, pi, irows, ioffs, icols, iweights, iws, dsrc, ddst, kd, pd, drows, \
                    doffs, dcols, dws, RS_MAP_ARGS
// this block's batch (block 0 the inserts, block 1 the deletes) and its scratch
struct rs_csr_ws {
    bool ins;
    const long long *s, *d;
    long long k, p;
    int *rows, *cols;
    long long *offs, *key, *val, *flag, *sum;
};

__device__ rs_csr_ws rs_csr_layout(RS_CSR_ARGS)
{
    rs_csr_ws w;
    w.ins = blockIdx.x == 0;
    w.s = w.ins ? isrc : dsrc; w.d = w.ins ? idst : ddst;
    w.k = w.ins ? ki : kd; w.p = w.ins ? pi : pd;
    w.rows = w.ins ? irows : drows; w.offs = w.ins ? ioffs : doffs; w.cols = w.ins ? icols : dcols;
    w.key = w.ins ? iws : dws; w.val = w.key + w.p; w.flag = w.val + w.p; w.sum = w.flag + w.k;
    return w;
}

// the keys (internal source << 32 | internal destination) of this block's batch and their index
__device__ void rs_csr_keys_of(RS_CSR_ARGS)
{
    const rs_csr_ws w = rs_csr_layout(RS_CSR_PASS);
    RS_LOOP(i, w.p) {
        if (i < w.k) {
            long long a = rs_lookup(w.s[i], RS_MAP_ARGS, 0), b = rs_lookup(w.d[i], RS_MAP_ARGS, 0);
            w.key[i] = (a << 32) | (b & RS_LOW32);
        } else {
            w.key[i] = RS_MAX;
        }
        w.val[i] = i;
    }
    __syncthreads();
}

// with the keys sorted: rows, offsets, columns (and weights) of this block's batch
__device__ void rs_csr_rows_of(RS_CSR_ARGS, long long* sh)
{
    const rs_csr_ws w = rs_csr_layout(RS_CSR_PASS);
    if (w.k == 0) {
        if (threadIdx.x == 0) w.offs[0] = 0;
        return;
    }
    RS_LOOP(i, w.k) w.flag[i] = (i == 0 || (w.key[i] >> 32) != (w.key[i - 1] >> 32)) ? 1 : 0;
    __syncthreads();
    const long long nrows = rs_scan(w.flag, w.sum, w.k, sh);
    RS_LOOP(i, w.k) {
        w.cols[i] = (int)(w.key[i] & RS_LOW32);
        if (w.ins) iweights[i] = iw[w.val[i]];
        if (w.flag[i]) { w.rows[w.sum[i]] = (int)(w.key[i] >> 32); w.offs[w.sum[i]] = i; }
    }
    if (threadIdx.x == 0) w.offs[nrows] = w.k;
}

extern "C" __global__ void __launch_bounds__(RS_THREADS)
rs_csr(RS_CSR_ARGS)
{
    __shared__ long long sh[RS_THREADS];
    const rs_csr_ws w = rs_csr_layout(RS_CSR_PASS);
    if (w.k == 0) {
        if (threadIdx.x == 0) w.offs[0] = 0;
        return;
    }
    rs_csr_keys_of(RS_CSR_PASS);
    rs_sort(w.key, w.val, w.p);
    rs_csr_rows_of(RS_CSR_PASS, sh);
}

extern "C" __global__ void __launch_bounds__(RS_THREADS)
rs_csr_keys(RS_CSR_ARGS) { rs_csr_keys_of(RS_CSR_PASS); }

extern "C" __global__ void __launch_bounds__(RS_THREADS)
rs_csr_rows(RS_CSR_ARGS)
{
    __shared__ long long sh[RS_THREADS];
    rs_csr_rows_of(RS_CSR_PASS, sh);
}

// Pipeline._delta's compactions: the inserted / updated edges (new_mask true / false over the insert
// batch), the deleted ones (removed with their vertices, then deleted_mask over the delete batch), in
// batch order.  Inserts: nri rows, ki edges; deletes: nrd rows, kd edges; ws: 2 ki + 2 kd + ki + kd longs.
extern "C" __global__ void __launch_bounds__(RS_THREADS)
rs_delta(const int* irows, const long long* ioffs, const int* icols, const float* iweights,
         const long long nri, const long long ki, const bool* new_mask,
         const int* drows, const long long* doffs, const int* dcols,
         const long long nrd, const long long kd, const bool* deleted_mask,
         const int* removed_src, const int* removed_dst, const long long nremoved,
         long long* ws, int* ins_src, int* ins_dst, float* ins_w, int* upd_src, int* upd_dst, float* upd_w,
         int* del_src, int* del_dst)
{
    __shared__ long long sh[RS_THREADS];
    long long* fnew = ws;           // [ki]
    long long* snew = fnew + ki;    // [ki]
    long long* fdel = snew + ki;    // [kd]
    long long* sdel = fdel + kd;    // [kd]
    long long* isrc = sdel + kd;    // source of every insert edge [ki]
    long long* dsrc = isrc + ki;    // [kd]
    RS_LOOP(i, ki) fnew[i] = new_mask[i] ? 1 : 0;
    RS_LOOP(i, kd) fdel[i] = deleted_mask[i] ? 1 : 0;
    RS_LOOP(r, nri) for (long long e = ioffs[r]; e < ioffs[r + 1]; ++e) isrc[e] = irows[r];
    RS_LOOP(r, nrd) for (long long e = doffs[r]; e < doffs[r + 1]; ++e) dsrc[e] = drows[r];
    RS_LOOP(i, nremoved) { del_src[i] = removed_src[i]; del_dst[i] = removed_dst[i]; }
    __syncthreads();
    rs_scan(fnew, snew, ki, sh);
    rs_scan(fdel, sdel, kd, sh);
    RS_LOOP(i, ki) {
        long long at = fnew[i] ? snew[i] : i - snew[i];
        int* s = fnew[i] ? ins_src : upd_src;
        int* d = fnew[i] ? ins_dst : upd_dst;
        float* w = fnew[i] ? ins_w : upd_w;
        s[at] = (int)isrc[i]; d[at] = icols[i]; w[at] = iweights[i];
    }
    RS_LOOP(i, kd) {
        if (fdel[i]) { del_src[nremoved + sdel[i]] = (int)dsrc[i]; del_dst[nremoved + sdel[i]] = dcols[i]; }
    }
}
"""
SOURCE = SOURCE.replace("@LOWER_BOUND@", lower_bound("rs_lower"))

KERNELS = ("rs_resolve", "rs_resolve_map", "rs_resolve_names", "rs_resolve_ranks", "rs_resolve_decide", "rs_csr",
           "rs_csr_keys", "rs_csr_rows", "rs_delta")

_kernels = RawKernels(SOURCE, "small-batch")

#: the launcher in use: ``launcher(xp, name, grid, block, args)``; tests swap in a host emulation
launcher = _kernels.launch_blocks


#: the largest sort (pairs, a power of two) the kernels run inside their block.  Past one shared-memory
#: tile (2,048 pairs, ``block_primitives``) the block passes over the tiles one after another (at 1e4
#: events about 2.3 ms for resolve), so a larger batch runs the kernels' parts around the library's
#: sorts (thrust's on CuPy, about 0.06 ms each plus two launches; see fused_net_effect).  Measured on
#: an H100 (``.ci/gpu-resolve-parts.py``, R-MAT 20's map): resolve in one block / in parts 0.25 / 0.24 ms
#: at 1,000 events, 0.33 / 0.50 at 2,000, 0.62 / 0.61 at 4,096, 1.17 / 0.81 at 4,096 undirected (16,384
#: names), 2.31 / 0.96 at 1e4; the CSR batches 0.19 / 0.36 ms at 4,096 events, 0.74 / 0.42 at 1e4.
SORT_IN_BLOCK = 8192

#: the same bound for a resolve launched ahead (``Pipeline.apply(next_events=...)``): every batch the fused path
#: takes (``2 * CAPACITY`` names) sorts in the block.  The library's sorts are thrust's, and thrust's ``par``
#: policy waits for the stream at the end of each sort: two host syncs per launch, each waiting for the side
#: stream and so for the main stream's work it was ordered after (6% of a warm replay's apply thread, sampled on an
#: H100: ``.ci/gpu-sample-threads.py``).  Ahead, the one-block resolve (2.3 ms of one multiprocessor at 1e4
#: events) runs on its own stream while the batch's jobs run, and nothing waits for it until the next batch.
AHEAD_SORT_IN_BLOCK = 2 * CAPACITY

#: set once the library's sort has run in this process (thrust loads its kernels at its first call: 34-50 ms on an
#: H100, which a fresh replay's first batch paid inside its resolve, ``.ci/gpu-first-uses.py``).  Until then a
#: batch on CuPy sorts in its block whatever its size (at 1e4 events 1.3 ms more of the device than the parts),
#: and the replay's warm-up thread makes that first call meanwhile (``stream/app/warm_up.py``).
_LIBRARY_SORT_LOADED = threading.Event()


def library_sort_loaded() -> None:
    """Record that the library's sort has run in this process (its kernels are loaded)."""
    _LIBRARY_SORT_LOADED.set()


def _sort_bound(xp, bound: int) -> int:
    """The largest sort a batch's kernels run in their block: ``bound``, or every fused batch's while the library's
    sort is not loaded yet on CuPy (see :data:`_LIBRARY_SORT_LOADED`)."""
    if xp is np or _LIBRARY_SORT_LOADED.is_set():
        return bound
    return max(bound, AHEAD_SORT_IN_BLOCK)


def _sort_pairs(xp, key, val) -> None:
    """Sort ``(key, val)`` in place by key, equal keys by ``val``: what the block sort gives (the kernels
    set ``val`` to the index, so a stable sort of the keys is that order)."""
    order = xp.argsort(key, kind="stable")
    library_sort_loaded()
    val[...] = val[order]
    key[...] = key[order]


def fits(num_events: int, undirected: bool = False) -> bool:
    """Whether a batch of ``num_events`` events takes the fused path (an undirected event is two rows)."""
    return 0 < int(num_events) * (2 if undirected else 1) <= CAPACITY


# -- the host side of the one host -> device copy -------------------------------------------------
class Staging(threading.local):
    """Per thread and device: a pinned host buffer and a device buffer for the events' upload, and a pinned
    slot for the header's read, reused batch after batch (``pinned_empty``: an asynchronous copy
    instead of the pageable copy ``xp.asarray`` makes, and no allocation per batch).  ``done``: an event
    recorded after each upload and waited on before the host buffer is written again (the header's read
    has always waited for it already, unless that batch failed in between).  The buffers' host addresses
    are kept as ``ctypes`` pointers (``ndarray.ctypes`` costs microseconds a call)."""

    def __init__(self):
        self.slots: dict = {}
        self.graphs: dict = {}          # the padded path's fixed buffers and graphs (_padded_slot)

    def get(self, xp, nbytes: int):
        dev_id = xp.cuda.runtime.getDevice()
        slot = self.slots.get(dev_id)
        if slot is None or slot["host"].shape[0] < nbytes:
            size = max(pow2_at_least(nbytes), 1 << 15)
            if slot is not None:
                slot["done"].synchronize()        # the old buffers may still be read by a pending copy
            host, header = pinned_empty(xp, size, np.uint8), pinned_empty(xp, HEADER, np.int64)
            slot = self.slots[dev_id] = {
                "host": host, "dev": xp.empty(size, dtype=np.uint8), "header": header,
                "host_ptr": ctypes.c_void_p(host.ctypes.data), "header_ptr": ctypes.c_void_p(header.ctypes.data),
                "done": xp.cuda.Event(block=False, disable_timing=True)}
            slot["done"].record()
        else:
            slot["done"].synchronize()            # done already (the header read waited for it): ~1 us
        return slot

    def header_slot(self, xp):
        """This thread's slot for the header's read (made if need be), without waiting for its last upload."""
        slot = self.slots.get(xp.cuda.runtime.getDevice())
        return slot if slot is not None else self.get(xp, 0)


_STAGING = Staging()

#: ``fused_net_effect(reuse=True)`` (the pipeline's call) can run a batch whose sorts fit the block as ONE
#: CUDA graph on CuPy: the events' upload, ``rs_resolve_map`` and the header's read, captured once per batch
#: size (padded to a power of two, at least ``GRAPH_MIN_EVENTS``, with no-op rows) on fixed buffers, the
#: vertex map's arrays passed through a device parameter block.  OFF by default (``$VINESTREAM_RESOLVE_GRAPH=1``
#: turns it on): with the copies through the runtime's memcpyAsync the capture works (an H200, session 9: the
#: resolve, pipeline, jobs and structure-contract device tests passed with it on), but it saved only about
#: 15 us of resolve's 0.25 ms and no measurable part of a 1,000-event batch's 0.75-1.0 ms (three interleaved
#: pairs, coo and graphvine).  A failed capture is kept in ``_graph_error`` and the launches go one by one.
#: The padded path itself (no-op rows, the parameter block) runs on NumPy under the host emulation.
GRAPHS = os.environ.get("VINESTREAM_RESOLVE_GRAPH", "0") == "1"
GRAPH_MIN_EVENTS = 64
_graph_failed = False           # a capture failed here once: the launches go one by one from then on
_graph_error = None             # ... and why (repr of the exception)


def _padded_slot(xp, bucket: int, undirected: bool, keep: bool):
    """This thread's fixed buffers of one padded batch size (and on CuPy its captured graph), made on first
    use: the events (pinned host and device, 21 bytes a row), the map's parameter block (host and device),
    the kernel's output and scratch, the header's pinned slot.  None when the capture failed."""
    global _graph_failed, _graph_error
    dev_id = xp.cuda.runtime.getDevice() if xp is not np else -1
    graphs = _STAGING.graphs
    key = (dev_id, bucket, bool(undirected), bool(keep))
    g = graphs.get(key)
    if g is not None:
        return g
    n = 2 * bucket if undirected else bucket
    m = 2 * n
    out_len = HEADER + 2 * m + 5 * n
    buf = xp.empty(out_len + 2 * m + 2 * n + 9 * m + 2 * n + 8, dtype=np.int64)
    g = {"n": n, "m": m, "out": buf[:out_len], "ws": buf[out_len:]}
    if xp is np:
        g.update(host=np.empty(21 * bucket, dtype=np.uint8), prm_host=np.zeros(8, dtype=np.int64))
        g["dev"], g["prm"] = g["host"], g["prm_host"]
    else:
        g.update(host=pinned_empty(xp, 21 * bucket, np.uint8), prm_host=pinned_empty(xp, 8, np.int64),
                 header=pinned_empty(xp, HEADER, np.int64), dev=xp.empty(21 * bucket, dtype=np.uint8),
                 prm=xp.zeros(8, dtype=np.int64))
    d = g["dev"]
    src, dst, w, op = _packed_parts(d, bucket)
    g["args"] = (op, src, dst, w, i64(bucket), np.int32(undirected), np.int32(keep), g["prm"],
                 i64(n), i64(m), g["ws"], g["out"])
    if xp is not np:
        stream = xp.cuda.Stream(non_blocking=True)
        try:
            _kernels.preload(xp)
            _kernels._function(xp, "rs_resolve_map")          # loaded before the capture
            stream.begin_capture()
            try:
                # the copies through the runtime's memcpyAsync: CuPy's copy_*_host_async refuse a capturing
                # stream ("H2D transfers are disallowed", session 9's closing call), the CUDA API captures
                # them (pinned host memory, so they are real async copies in the graph)
                rt = xp.cuda.runtime
                with stream:
                    rt.memcpyAsync(d.data.ptr, g["host"].ctypes.data, 21 * bucket, rt.memcpyHostToDevice, stream.ptr)
                    rt.memcpyAsync(g["prm"].data.ptr, g["prm_host"].ctypes.data, 64, rt.memcpyHostToDevice, stream.ptr)
                    launcher(xp, "rs_resolve_map", 1, THREADS, g["args"])
                    rt.memcpyAsync(g["header"].ctypes.data, g["out"].data.ptr, 8 * HEADER, rt.memcpyDeviceToHost,
                                   stream.ptr)
            finally:
                g["graph"] = stream.end_capture()
        except Exception as exc:
            _graph_failed, _graph_error = True, repr(exc)
            return None
    graphs[key] = g
    return g


def _padded_net_effect(xp, events, vmap, bucket: int, undirected: bool, keep: bool):
    """:func:`fused_net_effect` of an Arrow batch padded to ``bucket`` events on the thread's fixed buffers
    (:func:`_padded_slot`): one graph launch and one wait on CuPy.  The padding rows are no-ops naming the
    first event's source, an id the batch names anyway: they change no vertex, key or count.  None when no
    graph can be captured here."""
    g = _padded_slot(xp, bucket, undirected, keep)
    if g is None:
        return None
    n_ev = events.num_rows
    src, dst, w, op = _pack_events(events, g["host"], bucket)
    src[n_ev:] = src[0]
    dst[n_ev:] = src[0]
    w[n_ev:] = 1.0
    op[n_ev:] = 0                                          # resolve.NO_OP
    prm = g["prm_host"]
    if xp is np:
        ptrs = [a.ctypes.data for a in (vmap.base_keys, vmap.base_values, vmap.extra_keys, vmap.extra_values)]
    else:
        ptrs = [a.data.ptr for a in (vmap.base_keys, vmap.base_values, vmap.extra_keys, vmap.extra_values)]
    prm[0], prm[1], prm[2] = ptrs[0], ptrs[1], vmap.base_keys.shape[0]
    prm[3], prm[4], prm[5] = ptrs[2], ptrs[3], vmap.extra_keys.shape[0]
    if xp is np:                                           # the host emulation: the launch itself
        launcher(xp, "rs_resolve_map", 1, THREADS, g["args"])
        header = to_numpy(g["out"][:HEADER]).tolist()
    else:
        stream = xp.cuda.get_current_stream()
        last = g.get("stream")
        if last is not None and last != stream:
            last.synchronize()        # the last batch's readers of these buffers were queued on another stream
        g["stream"] = stream
        count_launch("graph:rs_resolve_map")
        g["graph"].launch(stream)
        stream.synchronize()                               # the one transfer (the graph's last node)
        header = g["header"].tolist()
    # the views point into a copy, not into the fixed buffer: the pipeline may keep a batch's delta past the
    # next batch (jobs_every > 1), which overwrites that buffer (the GPU's pipeline-jobs test found it; one copy
    # of the buffer, no sync)
    return _net_effect_of(g["out"].copy(), g["n"], g["m"], header, n_ev)


def _net_effect_of(out, n: int, m: int, header, n_ev: int) -> NetEffect:
    """The NetEffect as views of the kernel's output ``out`` (layout of ``rs_decide``) given its header."""
    n_gone, n_created, n_ins, n_del, self_loops, ins_rows, del_rows, revived = (int(v) for v in header)
    at = HEADER
    gone, created = out[at:at + n_gone], out[at + m:at + m + n_created]
    at += 2 * m
    ins_src, ins_dst = out[at:at + n_ins], out[at + n:at + n + n_ins]
    ins_w = out[at + 2 * n:at + 3 * n].view(np.float32)[:n_ins]
    del_src, del_dst = out[at + 3 * n:at + 3 * n + n_del], out[at + 4 * n:at + 4 * n + n_del]
    return NetEffect(deleted_vertices=gone, created_vertices=created, insert_src=ins_src, insert_dst=ins_dst,
                     insert_weight=ins_w, delete_src=del_src, delete_dst=del_dst, self_loops=self_loops,
                     events=n_ev, insert_rows=ins_rows, delete_rows=del_rows, revived=revived)


def _event_columns(xp, events, staging: Staging = _STAGING):
    """(op int8, src int64, dst int64, weight float32) on ``xp``: one host -> device copy of one packed
    buffer for an Arrow table (nulls filled: dst 0, weight 1.0); a DeviceEvents batch as it is.

    On CuPy the packed buffer is the thread's pinned staging buffer and the copy is asynchronous, into a
    device buffer kept with it (:class:`Staging`): the columns are views of that buffer, valid until this
    thread's next batch (the resolve kernel is their only reader, and the header's read waits for it)."""
    if isinstance(events, DeviceEvents):
        op, src, dst, w = events.arrays(xp)
        return tuple(xp.ascontiguousarray(a) for a in (op, src, dst, w))
    n = events.num_rows
    slot = staging.get(xp, 21 * n) if xp is not np else None
    host = slot["host"][:21 * n] if slot is not None else np.empty(21 * n, dtype=np.uint8)
    _pack_events(events, host, n)
    if slot is None:
        dev = xp.asarray(host)
    else:
        dev = slot["dev"][:21 * n]
        stream = xp.cuda.get_current_stream()
        dev.data.copy_from_host_async(slot["host_ptr"], 21 * n, stream)
        slot["done"].record(stream)
    src, dst, w, op = _packed_parts(dev, n)
    return op, src, dst, w


def _packed_parts(buf, rows: int):
    """(src int64, dst int64, weight float32, op int8): the parts of a packed event buffer of ``rows`` rows
    (21 bytes a row, one part after the other), as views of ``buf`` (host or device)."""
    return (buf[:8 * rows].view(np.int64), buf[8 * rows:16 * rows].view(np.int64),
            buf[16 * rows:20 * rows].view(np.float32), buf[20 * rows:21 * rows].view(np.int8))


def _pack_events(events, host, rows: int):
    """An Arrow table's events into the first rows of the packed host buffer ``host`` of ``rows`` rows (nulls
    filled: dst 0, weight 1.0); its parts (:func:`_packed_parts`)."""
    parts = _packed_parts(host, rows)
    n = events.num_rows
    for view, (name, fill) in zip(parts, (("src", 0), ("dst", 0), ("weight", 1.0), ("op", 0))):
        col = events.column(name)
        if col.null_count:
            col = pc.fill_null(col, fill)
        view[:n] = col.to_numpy()
    return parts


def _map_args(vmap) -> tuple:
    """The vertex map's sorted arrays as kernel arguments (``RS_MAP``)."""
    return (vmap.base_keys, vmap.base_values, i64(vmap.base_keys.shape[0]),
            vmap.extra_keys, vmap.extra_values, i64(vmap.extra_keys.shape[0]))


# -- the three fused steps ------------------------------------------------------------------------
class PendingNetEffect:
    """A net effect launched by :func:`launch_net_effect` and not yet read: its output buffer, its sizes, and
    (on CuPy) the stream it runs on and the event recorded after its header's copy.  :func:`finish_net_effect`
    waits for the event and reads the header; :meth:`abandon` waits for it only (the buffers it writes - the
    thread's staging slot, the header's pinned slot - are then free again).  ``inputs`` holds the arrays the
    kernels read (the map's, the events') until then: a map that compacts meanwhile (``VertexMap.keys``)
    replaces its arrays, and CuPy's pool must not hand their memory to anyone while the kernels read it."""

    __slots__ = ("event", "header", "inputs", "m", "n", "n_ev", "out")

    def __init__(self, out, n: int, m: int, n_ev: int, event=None, header=None, inputs=()):
        self.out, self.n, self.m, self.n_ev, self.event, self.header = out, n, m, n_ev, event, header
        self.inputs = inputs

    def wait(self) -> None:
        if self.event is not None:
            self.event.synchronize()
        self.inputs = ()

    abandon = wait


def launch_net_effect(xp, events, vmap, *, undirected: bool = False, keep_self_loops: bool = False,
                      staging: Staging = _STAGING, sort_in_block: int | None = None) -> PendingNetEffect:
    """:func:`fused_net_effect`'s launches, without waiting: the events' upload, the kernels (and the
    library's sorts between them for a batch whose sorts outgrow the block) and the header's asynchronous
    copy into this thread's pinned slot, all on the current stream.  ``vmap`` is read by the kernels on the
    device: it must not change before :func:`finish_net_effect` (or :meth:`PendingNetEffect.abandon`) returns.
    ``staging``: the buffers of the upload and the header's read (default: this thread's, which every launch
    on the thread shares); a launch left pending while others run on the thread needs a :class:`Staging` of
    its own (the pipeline's resolve ahead: its device reads of the events are not ordered with theirs).
    ``sort_in_block``: the largest sort run inside the block (default :data:`SORT_IN_BLOCK`; a resolve ahead
    passes :data:`AHEAD_SORT_IN_BLOCK`: no library sort, so no host sync)."""
    n_ev = events.num_rows
    assert fits(n_ev, undirected), n_ev
    op, src, dst, weight = _event_columns(xp, events, staging)
    n = 2 * n_ev if undirected else n_ev
    m = 2 * n
    pn, pm = pow2_at_least(n), pow2_at_least(m)
    out_len = HEADER + 2 * m + 5 * n
    buf = xp.empty(out_len + 2 * pm + 2 * pn + 9 * m + 2 * n + 8, dtype=np.int64)
    out, ws = buf[:out_len], buf[out_len:]
    args = (op, src, dst, weight, i64(n_ev), np.int32(undirected), np.int32(keep_self_loops),
            *_map_args(vmap), i64(pn), i64(pm), ws, out)
    if pm <= _sort_bound(xp, SORT_IN_BLOCK if sort_in_block is None else sort_in_block):
        launcher(xp, "rs_resolve", 1, THREADS, args)
    else:                          # the names, then the edge keys, sorted between the parts
        launcher(xp, "rs_resolve_names", 1, THREADS, args)
        _sort_pairs(xp, ws[:pm], ws[pm:2 * pm])
        launcher(xp, "rs_resolve_ranks", 1, THREADS, args)
        _sort_pairs(xp, ws[2 * pm:2 * pm + pn], ws[2 * pm + pn:2 * pm + 2 * pn])
        launcher(xp, "rs_resolve_decide", 1, THREADS, args)
    if xp is np:
        return PendingNetEffect(out, n, m, n_ev, header=to_numpy(out[:HEADER]).tolist())
    slot = staging.header_slot(xp)
    stream = xp.cuda.get_current_stream()
    out.data.copy_to_host_async(slot["header_ptr"], 8 * HEADER, stream)
    event = xp.cuda.Event(block=False, disable_timing=True)
    event.record(stream)
    inputs = (vmap.base_keys, vmap.base_values, vmap.extra_keys, vmap.extra_values, op, src, dst, weight)
    return PendingNetEffect(out, n, m, n_ev, event=event, header=slot["header"], inputs=inputs)


def finish_net_effect(pending: PendingNetEffect) -> NetEffect:
    """The :class:`NetEffect` of a launched net effect: a wait for its header (the one device -> host
    transfer), then views of its output buffer."""
    header = pending.header
    if pending.event is not None:
        pending.wait()
        header = header.tolist()
    return _net_effect_of(pending.out, pending.n, pending.m, header, pending.n_ev)


def fused_net_effect(xp, events, vmap, *, undirected: bool = False, keep_self_loops: bool = False,
                     reuse: bool = False) -> NetEffect:
    """:func:`resolve.net_effect` of a batch of at most :data:`CAPACITY` rows in one launch and one
    device -> host transfer (the header of sizes); the arrays are views of one device buffer.

    ``events`` is an Arrow table (``EVENT_SCHEMA``) or a :class:`DeviceEvents` batch;
    ``vmap`` the :class:`VertexMap` before the batch (its ``lookup`` and ``released``).

    ``reuse``: with :data:`GRAPHS` an Arrow batch whose sorts fit the block runs padded on this thread's fixed
    buffers, as one CUDA graph on CuPy (the launch itself on NumPy, under the host emulation), the same net
    effect; its arrays are views of a copy of the fixed output buffer, so they outlive the next batch.
    Otherwise it is :func:`launch_net_effect` then :func:`finish_net_effect` (the pipeline may launch the
    next batch's early, on a stream of its own, while this batch's jobs run: ``Pipeline.apply``).
    """
    n_ev = events.num_rows
    assert fits(n_ev, undirected), n_ev
    if reuse and GRAPHS and not _graph_failed and not isinstance(events, DeviceEvents):
        bucket = max(pow2_at_least(n_ev), GRAPH_MIN_EVENTS)
        if pow2_at_least(4 * bucket if undirected else 2 * bucket) <= SORT_IN_BLOCK:
            net = _padded_net_effect(xp, events, vmap, bucket, undirected, keep_self_loops)
            if net is not None:
                return net
    return finish_net_effect(launch_net_effect(xp, events, vmap, undirected=undirected,
                                               keep_self_loops=keep_self_loops))


def _carve(xp, sizes: list) -> list:
    """Consecutive int64 parts of the given sizes of ONE new device buffer (one allocation)."""
    starts = [0, *itertools.accumulate(sizes)]
    buf = xp.empty(max(int(starts[-1]), 1), dtype=np.int64)
    return [buf[a:b] for a, b in itertools.pairwise(starts)]


def fused_csr_batches(xp, net: NetEffect, vmap) -> tuple[CSRBatch, CSRBatch]:
    """The insert and delete :class:`CSRBatch` es of ``net`` (after the vertex phase assigned its ids)
    in one launch and no transfer: ``CSRBatch.from_edges(vmap.lookup(src), vmap.lookup(dst), ...)``."""
    ki, kd = int(net.insert_src.shape[0]), int(net.delete_src.shape[0])
    ri, rd = int(net.insert_rows), int(net.delete_rows)
    pi, pd = pow2_at_least(ki), pow2_at_least(kd)
    half = lambda k: (k + 1) // 2
    sizes = [half(ki), ki + 1, half(ki), half(ki), 2 * pi + 2 * ki,      # rows, offsets, cols, weights, ws
             half(kd), kd + 1, half(kd), 2 * pd + 2 * kd]
    part = _carve(xp, sizes)
    irows, icols = part[0].view(np.int32), part[2].view(np.int32)
    iweights, drows, dcols = part[3].view(np.float32), part[5].view(np.int32), part[7].view(np.int32)
    # the net effect's weights are a strided view: as_contiguous copies them (small), the rest pass as they are
    args = (as_contiguous(xp, net.insert_src), as_contiguous(xp, net.insert_dst),
            as_contiguous(xp, net.insert_weight), i64(ki), i64(pi), irows, part[1], icols, iweights, part[4],
            net.delete_src, net.delete_dst, i64(kd), i64(pd), drows, part[6], dcols, part[8], *_map_args(vmap))
    if max(pi, pd) <= _sort_bound(xp, SORT_IN_BLOCK):
        launcher(xp, "rs_csr", 2, THREADS, args)
    else:
        launcher(xp, "rs_csr_keys", 2, THREADS, args)
        for k, p, ws in ((ki, pi, part[4]), (kd, pd, part[8])):
            if k:
                _sort_pairs(xp, ws[:p], ws[p:2 * p])
        launcher(xp, "rs_csr_rows", 2, THREADS, args)
    inserts = CSRBatch(rows=irows[:ri], offsets=part[1][:ri + 1], cols=icols[:ki], weights=iweights[:ki])
    deletes = CSRBatch(rows=drows[:rd], offsets=part[6][:rd + 1], cols=dcols[:kd], weights=None)
    return inserts, deletes


def fused_delta(xp, epoch: int, inserts: CSRBatch, deletes: CSRBatch, new_mask, deleted_mask, n_new: int,
                n_gone: int, new_ids, old_ids, removed_src, removed_dst) -> BatchDelta:
    """``Pipeline._delta`` with its sizes known: the masks' compactions in one launch."""
    ki, kd = inserts.num_edges, deletes.num_edges
    nremoved = int(removed_src.shape[0])
    n_upd, n_del = ki - n_new, nremoved + n_gone
    # the outputs are exact slices of one int32 and one float32 buffer: no views, no second slicing (a
    # small batch's cost is the number of host-side array operations)
    ws = xp.empty(max(3 * (ki + kd), 1), dtype=np.int64)
    ids = xp.empty(max(2 * (n_new + n_upd + n_del), 1), dtype=VERTEX_DTYPE)
    w = xp.empty(max(n_new + n_upd, 1), dtype=WEIGHT_DTYPE)
    cut = list(itertools.accumulate((0, n_new, n_new, n_upd, n_upd, n_del, n_del)))
    ins_src, ins_dst, upd_src, upd_dst, del_src, del_dst = (ids[a:b] for a, b in itertools.pairwise(cut))
    ins_w, upd_w = w[:n_new], w[n_new:n_new + n_upd]
    weights = inserts.weights if inserts.weights is not None else xp.ones(ki, dtype=WEIGHT_DTYPE)
    launcher(xp, "rs_delta", 1, THREADS,
             (inserts.rows, inserts.offsets, inserts.cols, weights, i64(inserts.num_rows), i64(ki),
              as_contiguous(xp, new_mask, bool),
              deletes.rows, deletes.offsets, deletes.cols, i64(deletes.num_rows), i64(kd),
              as_contiguous(xp, deleted_mask, bool),
              as_contiguous(xp, removed_src, VERTEX_DTYPE), as_contiguous(xp, removed_dst, VERTEX_DTYPE),
              i64(nremoved), ws, ins_src, ins_dst, ins_w, upd_src, upd_dst, upd_w, del_src, del_dst))
    return BatchDelta(
        epoch=epoch,
        vertices_added=as_contiguous(xp, new_ids, VERTEX_DTYPE),
        vertices_removed=as_contiguous(xp, old_ids, VERTEX_DTYPE),
        inserted_src=ins_src, inserted_dst=ins_dst, inserted_weight=ins_w,
        updated_src=upd_src, updated_dst=upd_dst, updated_weight=upd_w,
        deleted_src=del_src, deleted_dst=del_dst,
    )


__all__ = ["CAPACITY", "KERNELS", "SOURCE", "PendingNetEffect", "Staging", "finish_net_effect", "fits",
           "fused_csr_batches", "fused_delta", "fused_net_effect", "launch_net_effect"]
