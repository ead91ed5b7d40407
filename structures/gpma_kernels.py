"""Fused CUDA kernels for GPMA+'s GPU path (thesis section 2.2.2: leaf search and segment redistribution).

The array program in :mod:`structures.gpma` stays the reference (NumPy, and CuPy
with ``fused=False``).  Its two hot steps are launch-bound there: the leaf search
is a binary search of the pivots and then a loop of ``log2(segment_size)``
vectorised halvings (about 8 launches each), and a level's redistribution is a
segmented arange, two gathers, a two-way merge by ``searchsorted`` and several
scatters.  The kernels:

* ``gpma_lower_bound`` - one thread per key: binary search of the leaf pivots,
  then of the leaf's packed entries; leaf, lower-bound slot and hit;
* ``gpma_live_flags`` - one thread per slot of the settled ranges of a level:
  1 where the slot holds an entry (the host takes the prefix sum: each old
  entry's rank among the old entries);
* ``gpma_gather`` - the same threads copy the old entries out by their rank
  and clear their slots (each slot has one thread: read, then write GAP);
* ``gpma_place`` - one thread per merged entry (old or new): its rank in its
  range is its index in its own list plus the number of the other list's keys
  below it (a binary search), and rank ``i`` of ``n`` entries over ``m`` leaves
  lands in leaf ``((i + 1) m - 1) / n`` at offset ``i - floor(n j / m)``: the
  same even spread as the array program, so the two leave identical arrays;
* ``gpma_leaf_counts`` - one thread per leaf of the settled ranges.

Grid-stride loops, 64-bit indices; every written location has one writer per
launch.  ``GV_GRID_LOOP`` is the grid-stride macro shared with the GraphVine
kernels, so the host emulation prelude of the tests serves both sources.
"""
from __future__ import annotations

from .block_primitives import lower_bound, upper_bound
from .raw_kernels import RawKernels, i32, i64  # noqa: F401  (i32/i64 used by callers)

SOURCE = r"""
#define GPMA_GAP 0x7FFFFFFFFFFFFFFFLL
#ifndef GV_GRID_LOOP
#define GV_GRID_LOOP(t, n) \
    for (long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x; t < (n); \
         t += (long long)blockDim.x * gridDim.x)
#endif

@LOWER_BOUND@

@UPPER_BOUND@

// leaf = last leaf whose pivot <= key (0 when none); slot = first packed entry >= key in it
extern "C" __global__
void gpma_lower_bound(const long long* keys, const long long n, const long long* pivot,
                      const long long num_leaves, const long long* slot_keys,
                      const long long* leaf_count, const long long seg,
                      long long* leaf_out, long long* slot_out, bool* hit_out)
{
    GV_GRID_LOOP(t, n) {
        long long k = keys[t];
        long long leaf = gpma_upper(pivot, num_leaves, k) - 1;
        if (leaf < 0) leaf = 0;
        long long base = leaf * seg;
        long long cnt = leaf_count[leaf];
        long long lb = gpma_lower(slot_keys + base, cnt, k);
        leaf_out[t] = leaf;
        slot_out[t] = base + lb;
        hit_out[t] = lb < cnt && slot_keys[base + lb] == k;
    }
}

// live[t] = 1 where slot t of the settled ranges (range t / span) holds an entry
extern "C" __global__
void gpma_live_flags(const long long* ranges, const long long span, const long long total,
                     const long long* slot_keys, long long* live)
{
    GV_GRID_LOOP(t, total) {
        long long slot = ranges[t / span] * span + t % span;
        live[t] = slot_keys[slot] != GPMA_GAP ? 1 : 0;
    }
}

// old entries out (by their rank among the old entries), slots cleared; one thread per slot
extern "C" __global__
void gpma_gather(const long long* ranges, const long long span, const long long total,
                 const long long* rank, long long* slot_keys, float* slot_weights,
                 long long* old_keys, float* old_weights)
{
    GV_GRID_LOOP(t, total) {
        long long slot = ranges[t / span] * span + t % span;
        long long k = slot_keys[slot];
        if (k != GPMA_GAP) {
            old_keys[rank[t]] = k;
            old_weights[rank[t]] = slot_weights[slot];
            slot_keys[slot] = GPMA_GAP;
        }
    }
}

// one thread per merged entry: threads [0, n_old) the old ones, [n_old, n_old + n_new) the new ones
extern "C" __global__
void gpma_place(const long long* ranges, const long long nr, const long long* old_first,
                const long long* new_first, const long long* counts,
                const long long* old_keys, const float* old_weights, const long long n_old,
                const long long* new_keys, const float* new_weights, const long long n_new,
                const long long* new_owner, const long long m, const long long seg,
                long long* slot_keys, float* slot_weights)
{
    GV_GRID_LOOP(t, n_old + n_new) {
        long long r, i, k;
        float w;
        if (t < n_old) {
            r = gpma_upper(old_first, nr, t) - 1;          // the range whose old entries hold t
            k = old_keys[t];
            w = old_weights[t];
            i = (t - old_first[r]) + (gpma_lower(new_keys, n_new, k) - new_first[r]);
        } else {
            long long u = t - n_old;
            r = new_owner[u];
            k = new_keys[u];
            w = new_weights[u];
            long long below = gpma_lower(old_keys, n_old, k);
            i = (u - new_first[r]) + (below - old_first[r]);
        }
        long long n = counts[r];
        long long j = ((i + 1) * m - 1) / n;
        long long dest = ranges[r] * m * seg + j * seg + (i - (n * j) / m);
        slot_keys[dest] = k;
        slot_weights[dest] = w;
    }
}

// leaf j of settled range r gets floor(n (j+1) / m) - floor(n j / m) entries
extern "C" __global__
void gpma_leaf_counts(const long long* ranges, const long long* counts, const long long m,
                      const long long total, long long* leaf_count)
{
    GV_GRID_LOOP(t, total) {
        long long r = t / m, j = t % m, n = counts[r];
        leaf_count[ranges[r] * m + j] = (n * (j + 1)) / m - (n * j) / m;
    }
}
""".replace("@LOWER_BOUND@", lower_bound("gpma_lower")).replace("@UPPER_BOUND@", upper_bound("gpma_upper"))

KERNELS = ("gpma_lower_bound", "gpma_live_flags", "gpma_gather", "gpma_place", "gpma_leaf_counts")

_kernels = RawKernels(SOURCE, "GPMA")

#: the launcher in use; tests swap in a serial host emulation of the same source
launcher = _kernels.launch


def launch(xp, name: str, n: int, *args) -> None:
    """Run kernel ``name`` over ``n`` items; does nothing when ``n`` is 0."""
    if int(n) <= 0:
        return
    launcher(xp, name, int(n), tuple(args))
