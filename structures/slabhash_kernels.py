"""CUDA kernels of slabhash's GPU path (hashGraph / SlabHash; ``papers/dynamic-graphs-slides.txt``).

The array program in :mod:`structures.slabhash` is the reference; these kernels
replace its hash-table operations on the GPU:

* ``sh_find`` - one thread per queried edge: hash to the bucket, walk the chain,
  compare the slab's key words; stop at the key, at an empty slot (slots fill
  densely) or at the end of the chain.  Returns the key's word index or -1.
* ``sh_insert_thread`` - the slides' first strategy, one thread per edge: walk
  the chain checking for the key (duplicate check), and claim the first empty
  slot with ``atomicCAS(EMPTY -> key)``; a failed CAS means another thread took
  that slot, so the walk goes on from the next slot.  The weight (weighted
  tables) is written by the winner into the word after the key.
* ``sh_insert_warp`` - the slides' second strategy, warp-cooperative work
  sharing: every lane holds one edge; ``__ballot_sync`` finds the lanes with
  work, ``__ffs`` picks the next, ``__shfl_sync`` broadcasts its edge, and the 32
  lanes read the 32 words of a slab at once; ballots over "my word is the key"
  and "my word is empty" decide, one lane CASes the first empty slot, the next
  word (lane 31) is shuffled to everyone to move along the chain.
* ``sh_delete`` - one thread per edge: find the key, ``atomicCAS(key ->
  TOMBSTONE)``.

The host prepares the chains before an insert (every touched chain already has
the slabs its new keys need, popped from the slab pool by a prefix sum), so no
kernel allocates.  The source is one string, ``SOURCE``, compiled by nvcc in
the compile test; the one-thread kernels also run serially through a g++ host
emulation (``tests/slabhash_emulation.py``).  ``sh_insert_warp`` needs real warp
intrinsics and is left out of the host build (``SH_HOST_EMULATION``); it is
checked on the GPU only (``tests/test_slabhash_fused_gpu.py``).
"""
from __future__ import annotations

from .raw_kernels import RawKernels, i32, i64  # noqa: F401  (i32/i64 used by callers)

SOURCE = r"""
#define SH_EMPTY (-1)
#define SH_TOMBSTONE (-2)
#define SH_NEXT 31
#define SH_KEY_WORDS 30
#ifndef SH_GRID_LOOP
#define SH_GRID_LOOP(t, n) \
    for (long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x; t < (n); \
         t += (long long)blockDim.x * gridDim.x)
#endif

// bucket of key in a table of nb buckets: ((a * k + b) mod p) mod nb, as slabhash.bucket_hash
__device__ long long sh_bucket_of(long long start, int nb, long long key)
{
    unsigned long long h = ((unsigned long long)key * 2654435761ULL + 97ULL) % 4294967291ULL;
    return start + (long long)(h % (unsigned long long)nb);
}

// head slab of the bucket of (v, d), or -1 when v has no table / the ids are out of range
__device__ int sh_head(long long v, long long d, long long cap, const long long* bucket_start,
                       const int* num_buckets, const int* bucket_head)
{
    if (v < 0 || v >= cap || d < 0 || d > 0x7FFFFFFFLL) return SH_EMPTY;
    int nb = num_buckets[v];
    if (nb <= 0) return SH_EMPTY;
    return bucket_head[sh_bucket_of(bucket_start[v], nb, d)];
}

// word index of key d in the chain starting at slab s, -1 when absent
__device__ long long sh_find_in_chain(int s, int d, const int* words, int kstride, int spp)
{
    const volatile int* w = (const volatile int*)words;
    while (s >= 0) {
        long long base = (long long)s * 32;
        for (int j = 0; j < spp; ++j) {
            int k = w[base + (long long)j * kstride];
            if (k == d) return base + (long long)j * kstride;
            if (k == SH_EMPTY) return -1;            // used slots are a prefix of the chain
        }
        s = w[base + SH_NEXT];
    }
    return -1;
}

extern "C" __global__
void sh_find(const int* src, const int* dst, const long long n, const long long cap,
             const long long* bucket_start, const int* num_buckets, const int* bucket_head,
             const int* words, const int kstride, const int spp, long long* out)
{
    SH_GRID_LOOP(i, n) {
        int s = sh_head(src[i], dst[i], cap, bucket_start, num_buckets, bucket_head);
        out[i] = s < 0 ? -1 : sh_find_in_chain(s, dst[i], words, kstride, spp);
    }
}

// status[i]: 1 inserted, 0 the key was there (weight rewritten), -1 no empty slot in the chain
extern "C" __global__
void sh_insert_thread(const int* src, const int* dst, const long long n, const int* wbits,
                      const long long cap, const long long* bucket_start, const int* num_buckets,
                      const int* bucket_head, int* words, const int kstride, const int spp,
                      const int weighted, signed char* status)
{
    volatile int* w = (volatile int*)words;
    SH_GRID_LOOP(i, n) {
        int d = dst[i];
        int s = sh_head(src[i], d, cap, bucket_start, num_buckets, bucket_head);
        signed char result = -1;
        while (s >= 0 && result < 0) {
            long long base = (long long)s * 32;
            for (int j = 0; j < spp; ++j) {
                long long at = base + (long long)j * kstride;
                int k = w[at];
                if (k == SH_EMPTY) {
                    k = atomicCAS(&words[at], SH_EMPTY, d);
                    if (k == SH_EMPTY) {                 // the slot is ours
                        if (weighted) w[at + 1] = wbits[i];
                        result = 1;
                        break;
                    }
                }
                if (k == d) {                            // duplicate check on the way
                    if (weighted) w[at + 1] = wbits[i];
                    result = 0;
                    break;
                }
            }
            if (result < 0) s = w[base + SH_NEXT];
        }
        status[i] = result;
    }
}

extern "C" __global__
void sh_delete(const int* src, const int* dst, const long long n, const long long cap,
               const long long* bucket_start, const int* num_buckets, const int* bucket_head,
               int* words, const int kstride, const int spp, signed char* removed)
{
    SH_GRID_LOOP(i, n) {
        int d = dst[i];
        int s = sh_head(src[i], d, cap, bucket_start, num_buckets, bucket_head);
        long long at = s < 0 ? -1 : sh_find_in_chain(s, d, words, kstride, spp);
        removed[i] = (at >= 0 && atomicCAS(&words[at], d, SH_TOMBSTONE) == d) ? 1 : 0;
    }
}

#ifndef SH_HOST_EMULATION
// Warp-cooperative work sharing (the slides' second strategy).  The loop over the edges is
// warp-uniform (every lane of a warp runs the same iterations), so the *_sync intrinsics
// always see the full warp.
extern "C" __global__
void sh_insert_warp(const int* src, const int* dst, const long long n, const int* wbits,
                    const long long cap, const long long* bucket_start, const int* num_buckets,
                    const int* bucket_head, int* words, const int kstride, const int spp,
                    const int weighted, signed char* status)
{
    const unsigned FULL = 0xFFFFFFFFu;
    volatile int* w = (volatile int*)words;
    const int lane = threadIdx.x & 31;
    const long long warp = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const long long warps = ((long long)gridDim.x * blockDim.x) >> 5;
    // lanes whose word is a key slot: words 0..29, every kstride-th
    const bool key_lane = lane < SH_KEY_WORDS && (lane % kstride) == 0;
    for (long long first = warp * 32; first < n; first += warps * 32) {
        const long long i = first + lane;
        const bool has_work = i < n;
        const int my_v = has_work ? src[i] : 0;
        const int my_d = has_work ? dst[i] : 0;
        const int my_w = has_work ? wbits[i] : 0;
        unsigned queue = __ballot_sync(FULL, has_work);        // lanes with an edge to insert
        while (queue) {
            const int leader = __ffs(queue) - 1;                // the next lane with work
            const int v = __shfl_sync(FULL, my_v, leader);      // its edge, to every lane
            const int d = __shfl_sync(FULL, my_d, leader);
            const int wb = __shfl_sync(FULL, my_w, leader);
            int s = sh_head(v, d, cap, bucket_start, num_buckets, bucket_head);
            signed char result = -1;
            while (s >= 0) {
                const long long base = (long long)s * 32;
                const int word = w[base + lane];                // 32 lanes read the slab at once
                const unsigned found = __ballot_sync(FULL, key_lane && word == d);
                if (found) {                                    // the edge exists: rewrite its weight
                    const int at = __ffs(found) - 1;
                    if (weighted && lane == at) w[base + at + 1] = wb;
                    result = 0;
                    break;
                }
                const unsigned empty = __ballot_sync(FULL, key_lane && word == SH_EMPTY);
                if (empty) {
                    const int at = __ffs(empty) - 1;            // the first empty slot
                    int old = 0;
                    if (lane == at) {
                        old = atomicCAS(&words[base + at], SH_EMPTY, d);
                        if (old == SH_EMPTY && weighted) w[base + at + 1] = wb;
                    }
                    old = __shfl_sync(FULL, old, at);
                    if (old == SH_EMPTY) { result = 1; break; }
                    continue;                                   // lost the slot: read the slab again
                }
                s = __shfl_sync(FULL, word, SH_NEXT);           // full slab: follow the next word
            }
            if (lane == leader) status[i] = result;
            queue &= queue - 1;                                 // the leader's edge is done
        }
    }
}
#endif
"""

KERNELS = ("sh_find", "sh_insert_thread", "sh_delete", "sh_insert_warp")

_kernels = RawKernels(SOURCE, "slabhash")

#: the launcher in use; tests swap in a serial host emulation of the same source
launcher = _kernels.launch


def launch(xp, name: str, n: int, *args) -> None:
    """Run kernel ``name`` over ``n`` items; does nothing when ``n`` is 0."""
    if int(n) <= 0:
        return
    launcher(xp, name, int(n), tuple(args))
