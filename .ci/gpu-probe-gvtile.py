"""Device probe (session 19): can GraphVine's key-side passes over a 1e6-edge batch's touched rows run near
the H100's bandwidth?  Synthetic rows of R-MAT 22 in class-sized blocks (GraphVine's classes: about four
blocks a row, 2..4096 entries, blocks shuffled in each class's region of the pool), a batch of 1e6 R-MAT
keys.  Two forms of each pass, side by side in one process:

* ``lanes``: today's form (gv_stage / gv_insert_scatter): 8 lanes per walked block, each looping over its
  block's entries, the scatter's shift from a pointer through the vertex's keys;
* ``flat``: one thread per staged entry, balanced; each thread block narrows its search of the walked
  blocks' (rows') running sums to its own tile once, and a thread finds its shift by a binary search of
  its row's key ranks.

Both write the same arrays (checked).  Prints JSON: milliseconds (median of 15), entries, GB moved."""
import json
import sys
import time

import cupy as cp
import numpy as np

from vinestream.connectors.synthetic import rmat_edges

SRC = r"""
#define LANES 8
extern "C" __global__
void stage_lanes(const long long nt, const long long* tbase, const long long* trow, const long long* tk,
                 const long long* cnt, const long long* bsz, const long long* r0, const long long* soff,
                 const int* cols, const float* w, int* tcol, float* tw)
{
    for (long long q = blockIdx.x * (long long)blockDim.x + threadIdx.x; q < nt * LANES;
         q += (long long)gridDim.x * blockDim.x) {
        long long t = q / LANES, lane = q % LANES;
        long long i = trow[t], bs = bsz[i], p0 = tk[t] * bs, count = cnt[i];
        long long m = count - p0 < bs ? count - p0 : bs;
        long long r = r0[i];
        if (p0 + m <= r) continue;
        long long base = tbase[t];
        for (long long j = lane; j < m; j += LANES) {
            long long p = p0 + j;
            if (p < r) continue;
            tcol[soff[i] + p - r] = cols[base + j];
            tw[soff[i] + p - r] = w[base + j];
        }
    }
}

__device__ long long ub(const long long* a, long long lo, long long hi, long long x)
{   // first index in [lo, hi) with a[idx] > x
    while (lo < hi) { long long mid = (lo + hi) >> 1; if (a[mid] <= x) lo = mid + 1; else hi = mid; }
    return lo;
}

#define TILE_ITEMS 4
// staged entries e in [0, E): walked block t = ub(spre, e) - 1 (spre: running sum of the walked blocks'
// staged entries, nt + 1 values); the block's first staged entry is its position max(r0 - p0, 0)
extern "C" __global__
void stage_flat(const long long E, const long long nt, const long long* spre, const long long* tbase,
                const long long* trow, const long long* tk, const long long* bsz, const long long* r0,
                const long long* soff, const int* cols, const float* w, int* tcol, float* tw)
{
    __shared__ long long lim[2];
    const long long tile = (long long)blockDim.x * TILE_ITEMS;
    for (long long e0 = blockIdx.x * tile; e0 < E; e0 += (long long)gridDim.x * tile) {
        long long e1 = e0 + tile < E ? e0 + tile : E;
        if (threadIdx.x == 0) lim[0] = ub(spre, 0, nt + 1, e0) - 1;
        if (threadIdx.x == 1) lim[1] = ub(spre, 0, nt + 1, e1 - 1);
        __syncthreads();
        long long lo = lim[0], hi = lim[1];
        for (int it = 0; it < TILE_ITEMS; ++it) {
            long long e = e0 + it * (long long)blockDim.x + threadIdx.x;
            if (e >= e1) break;
            long long t = ub(spre, lo, hi, e) - 1;
            long long i = trow[t], bs = bsz[i], p0 = tk[t] * bs;
            long long skip = r0[i] > p0 ? r0[i] - p0 : 0;
            long long j = e - spre[t] + skip;
            long long p = p0 + j;
            tcol[soff[i] + p - r0[i]] = cols[tbase[t] + j];
            tw[soff[i] + p - r0[i]] = w[tbase[t] + j];
        }
        __syncthreads();
    }
}

// the scatter (insert): staged entry of row i at position p >= r0[i] goes to p + (new keys of i with rank
// <= p) in the row's destination blocks (dtab[dstart[i] + to / bs]); keys of row i: [kofs[i], kofs[i+1])
extern "C" __global__
void scatter_lanes(const long long nt, const long long* tbase, const long long* trow, const long long* tk,
                   const long long* cnt, const long long* bsz, const long long* r0, const long long* soff,
                   const long long* kofs, const long long* rank, const long long* dstart, const long long* dtab,
                   const int* tcol, const float* tw, int* cols, float* w)
{
    for (long long q = blockIdx.x * (long long)blockDim.x + threadIdx.x; q < nt * LANES;
         q += (long long)gridDim.x * blockDim.x) {
        long long t = q / LANES, lane = q % LANES;
        long long i = trow[t], bs = bsz[i], p0 = tk[t] * bs, count = cnt[i];
        long long m = count - p0 < bs ? count - p0 : bs;
        long long r = r0[i];
        if (p0 + m <= r) continue;
        long long k0 = kofs[i], k1 = kofs[i + 1];
        long long h = -1, ck = -1, cb = 0;
        for (long long j = lane; j < m; j += LANES) {
            long long p = p0 + j;
            if (p < r) continue;
            if (h < 0) { h = k0; while (h < k1 && rank[h] <= p) ++h; }
            else while (h < k1 && rank[h] <= p) ++h;
            long long to = p + (h - k0);
            long long kb = to / bs;
            if (kb != ck) { ck = kb; cb = dtab[dstart[i] + kb]; }
            cols[cb + to - kb * bs] = tcol[soff[i] + p - r];
            w[cb + to - kb * bs] = tw[soff[i] + p - r];
        }
    }
}

// flat: staged entry e -> row i = ub(rpre, e) - 1 (rpre: running sum of the rows' staged entries), p
extern "C" __global__
void scatter_flat(const long long E, const long long nr, const long long* rpre, const long long* bsz,
                  const long long* r0, const long long* kofs, const long long* rank, const long long* dstart,
                  const long long* dtab, const int* tcol, const float* tw, int* cols, float* w)
{
    __shared__ long long lim[2];
    const long long tile = (long long)blockDim.x * TILE_ITEMS;
    for (long long e0 = blockIdx.x * tile; e0 < E; e0 += (long long)gridDim.x * tile) {
        long long e1 = e0 + tile < E ? e0 + tile : E;
        if (threadIdx.x == 0) lim[0] = ub(rpre, 0, nr + 1, e0) - 1;
        if (threadIdx.x == 1) lim[1] = ub(rpre, 0, nr + 1, e1 - 1);
        __syncthreads();
        long long lo = lim[0], hi = lim[1];
        for (int it = 0; it < TILE_ITEMS; ++it) {
            long long e = e0 + it * (long long)blockDim.x + threadIdx.x;
            if (e >= e1) break;
            long long i = ub(rpre, lo, hi, e) - 1;
            long long p = r0[i] + (e - rpre[i]);
            long long h = ub(rank, kofs[i], kofs[i + 1], p);
            long long to = p + (h - kofs[i]);
            long long bs = bsz[i], kb = to / bs;
            long long slot = dtab[dstart[i] + kb] + to - kb * bs;
            cols[slot] = tcol[e];
            w[slot] = tw[e];
        }
        __syncthreads();
    }
}
"""


def timed(fn, reps=15):
    ts = []
    for _ in range(reps):
        a, b = cp.cuda.Event(), cp.cuda.Event()
        a.record()
        fn()
        b.record()
        b.synchronize()
        ts.append(cp.cuda.get_elapsed_time(a, b))
    return float(np.median(ts))


def main(scale=22, batch=1_000_000):
    mod = cp.RawModule(code=SRC, options=("-std=c++14",))
    k = {n: mod.get_function(n) for n in ("stage_lanes", "stage_flat", "scatter_lanes", "scatter_flat")}
    s, d = rmat_edges(cp, scale, 16, seed=1)
    keys = cp.unique((s << 32) | d)                      # sorted distinct
    del s, d
    n = 1 << scale
    row = keys >> 32
    col = (keys & 0xFFFFFFFF).astype(cp.int32)
    cnt = cp.bincount(row, minlength=n).astype(cp.int64)
    rstart = cp.concatenate([cp.zeros(1, cp.int64), cp.cumsum(cnt)])
    per = (cp.maximum(cnt, 1) + 3) // 4
    bsz = cp.clip(cp.left_shift(1, cp.floor(cp.log2(per.astype(cp.float64))).astype(cp.int64)), 2, 4096)
    nb = (cnt + bsz - 1) // bsz
    # blocks: (vertex, k) in order; each class's blocks shuffled inside the class's region of the pool
    bv = cp.repeat(cp.arange(n, dtype=cp.int64), nb)
    bstart = cp.concatenate([cp.zeros(1, cp.int64), cp.cumsum(nb)])
    bsize = bsz[bv]
    rng = cp.random.RandomState(7)
    order = cp.lexsort(cp.stack([rng.random_sample(bv.shape[0]), bsize]))    # by size, shuffled within
    slot_sz = bsize[order]
    region = cp.concatenate([cp.zeros(1, cp.int64), cp.cumsum(slot_sz)])[:-1]
    base = cp.empty_like(region)
    base[order] = region
    pool = int(slot_sz.sum()) + 8 * batch * 64
    cols = cp.full(pool, -1, cp.int32)
    w = cp.zeros(pool, cp.float32)
    e_v = row
    e_p = cp.arange(keys.shape[0], dtype=cp.int64) - rstart[e_v]
    e_blk = bstart[e_v] + e_p // bsz[e_v]
    e_slot = base[e_blk] + e_p % bsz[e_v]
    cols[e_slot] = col
    w[e_slot] = (col % 97).astype(cp.float32)
    # the batch: 1e6 new keys (R-MAT, distinct, not held)
    s2, d2 = rmat_edges(cp, scale, 16, seed=2)
    nk = cp.unique((s2[: 3 * batch] << 32) | d2[: 3 * batch])
    held = cp.searchsorted(keys, nk)
    held = (held < keys.shape[0]) & (keys[cp.minimum(held, keys.shape[0] - 1)] == nk)
    nk = nk[~held][:batch]
    kv = nk >> 32
    # rank of each key in its row (binary search in the sorted row)
    rank = cp.searchsorted(keys, nk) - rstart[kv]
    touched = cp.unique(kv)
    nr = int(touched.shape[0])
    ki = cp.searchsorted(touched, kv)                      # row index of each key
    kofs = cp.concatenate([cp.zeros(1, cp.int64), cp.cumsum(cp.bincount(ki, minlength=nr))])
    r0 = rank[kofs[:-1]]                                   # least rank (keys sorted by column)
    tcnt = cnt[touched]
    tbs = bsz[touched]
    staged = tcnt - r0
    soff = cp.concatenate([cp.zeros(1, cp.int64), cp.cumsum(staged)])
    E = int(soff[-1])
    # walked blocks of the touched rows
    tnb = nb[touched]
    tpre = cp.concatenate([cp.zeros(1, cp.int64), cp.cumsum(tnb)])
    nt = int(tpre[-1])
    trow = cp.repeat(cp.arange(nr, dtype=cp.int64), tnb)
    tk = cp.arange(nt, dtype=cp.int64) - tpre[trow]
    tbase = base[bstart[touched][trow] + tk]
    p0 = tk * tbs[trow]
    m = cp.minimum(tcnt[trow] - p0, tbs[trow])
    st = cp.clip(p0 + m - cp.maximum(r0[trow], p0), 0, None)
    spre = cp.concatenate([cp.zeros(1, cp.int64), cp.cumsum(st)])
    assert int(spre[-1]) == E
    # destination blocks: the old ones then new ones at the pool's end
    newc = tcnt + (kofs[1:] - kofs[:-1])
    dnb = (newc + tbs - 1) // tbs
    dstart = cp.concatenate([cp.zeros(1, cp.int64), cp.cumsum(dnb)])
    drow = cp.repeat(cp.arange(nr, dtype=cp.int64), dnb)
    dk = cp.arange(int(dstart[-1]), dtype=cp.int64) - dstart[drow]
    extra = dk >= tnb[drow]
    xsz = tbs[drow] * extra
    xbase = int(slot_sz.sum()) + cp.cumsum(xsz) - xsz
    dtab = cp.where(extra, xbase, base[bstart[touched][drow] + cp.minimum(dk, cp.maximum(tnb[drow] - 1, 0))])
    assert int(slot_sz.sum() + xsz.sum()) <= pool
    i64 = np.int64
    G = 132 * 16
    out = {"edges": int(keys.shape[0]), "keys": int(nk.shape[0]), "touched_rows": nr,
           "touched_entries": int(tcnt.sum()), "staged_entries": E, "walked_blocks": nt}
    tc1, tw1 = cp.zeros(E, cp.int32), cp.zeros(E, cp.float32)
    tc2, tw2 = cp.zeros(E, cp.int32), cp.zeros(E, cp.float32)

    def st_lanes():
        k["stage_lanes"]((G,), (256,), (i64(nt), tbase, trow, tk, tcnt, tbs, r0, soff, cols, w, tc1, tw1))

    def st_flat():
        k["stage_flat"]((G,), (256,), (i64(E), i64(nt), spre, tbase, trow, tk, tbs, r0, soff, cols, w, tc2, tw2))
    st_lanes()
    st_flat()
    cp.cuda.Device().synchronize()
    out["stage_equal"] = bool((tc1 == tc2).all() and (tw1 == tw2).all())
    out["stage_lanes_ms"] = timed(st_lanes)
    out["stage_flat_ms"] = timed(st_flat)
    c1, w1 = cols.copy(), w.copy()
    c2, w2 = cols.copy(), w.copy()

    def sc_lanes():
        k["scatter_lanes"]((G,), (256,), (i64(nt), tbase, trow, tk, tcnt, tbs, r0, soff, kofs, rank, dstart, dtab,
                                          tc1, tw1, c1, w1))

    def sc_flat():
        k["scatter_flat"]((G,), (256,), (i64(E), i64(nr), soff, tbs, r0, kofs, rank, dstart, dtab, tc2, tw2, c2, w2))
    sc_lanes()
    sc_flat()
    cp.cuda.Device().synchronize()
    out["scatter_equal"] = bool((c1 == c2).all() and (w1 == w2).all())
    out["scatter_lanes_ms"] = timed(sc_lanes)
    out["scatter_flat_ms"] = timed(sc_flat)
    # a plain copy of E int32 + E float32 (the bandwidth reference)
    out["copy_ms"] = timed(lambda: (cp.copyto(tc2, tc1), cp.copyto(tw2, tw1)))
    out["gb_per_pass"] = E * 16 / 1e9
    print(json.dumps(out), flush=True)
    return out


if __name__ == "__main__":
    t0 = time.time()
    main(*(int(a) for a in sys.argv[1:]))
    print("seconds", round(time.time() - t0, 1))
