"""Fused CUDA kernels for the vertex map's small-batch updates (stream/batching/vertex_map.py).

On a GPU a batch's vertex phase is launch-bound: :meth:`VertexMap.assign` alone is
some forty CuPy calls (the free-queue pop, the reverse-table scatter, two binary
searches for tombstones, two compactions, a sort, a merge), each costing the host
10-100 us while the device idles.  Here each map operation is ONE launch:

* ``vm_lookup`` - grid-stride, one thread per query: binary search of ``base``, then
  of ``extra`` where base has no live entry (:meth:`VertexMap.lookup`);
* ``vm_release`` - grid-stride over ``max(k, |free|)``: each released key's internal id
  (from base, else extra), its tombstones in both arrays, its reverse-table entry
  cleared, and the new free queue (the old one, then the released ids in key order)
  written into a freshly sized array (:meth:`VertexMap.release` with ``all_mapped``);
* ``vm_assign`` - one block: ids from the free queue then fresh ones, the reverse table,
  tombstones revived in place in base and extra (binary search), the remaining keys
  compacted by a block scan, sorted by a block bitonic sort when not already ascending
  (resolve hands them over sorted), and merged into a freshly sized ``extra`` by
  rank (each element's place is its index plus the number of the other list's keys
  below it, a binary search); the number of revived keys is written to ``out[0]``.

Every size the host needs comes from what it already knows (the free queue's length,
``next_id``, the revived count resolve read with its header), so none is read back;
without a revived count (a caller that does not know it) the new ``extra`` is sized
for every key and its length read back once, as the array program does.

Every loop between two barriers (``VM_LOOP``) has independent iterations (each
location one writer), so ``tests/vertex_map_emulation.py`` can run this exact source
on the host with g++ in any thread order.  The array program in ``vertex_map.py``
stays the reference; ``tests/test_vertex_map_fused.py`` compares the two state for state.
"""
from __future__ import annotations

import numpy as np

from vinestream.structures.array_ops import pow2_at_least
from vinestream.structures.backend import count_launch
from vinestream.structures.block_primitives import block_sort_and_scan, lower_bound
from vinestream.structures.raw_kernels import RawKernels, i64

ASSIGN_CAPACITY = 16384    # keys per assign the one-block kernel takes (a sort of 16,384 pairs)
THREADS = 1024             # the assign block

SOURCE = r"""
#define VM_MAX 0x7FFFFFFFFFFFFFFFLL
#define VM_NO_EXTERNAL (-0x7FFFFFFFFFFFFFFFLL - 1LL)
#define VM_THREADS 1024
#ifndef VM_LOOP
#define VM_LOOP(i, n) for (long long i = threadIdx.x; i < (n); i += blockDim.x)
#endif
#ifndef VM_GRID_LOOP
#define VM_GRID_LOOP(t, n) \
    for (long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x; t < (n); \
         t += (long long)blockDim.x * gridDim.x)
#endif

// the vertex map's sorted arrays: base and extra keys, their values (internal id, -1 a tombstone)
#define VM_MAP const long long* bkeys, int* bvals, const long long nb, \
               const long long* xkeys, int* xvals, const long long nx

@LOWER_BOUND@

// slot of q in keys[0, n), or -1
__device__ long long vm_find(const long long* keys, long long n, long long q)
{
    long long at = vm_lower_bound(keys, n, q);
    return (at < n && keys[at] == q) ? at : -1;
}

// VertexMap.lookup: the internal id of each query, -1 where unmapped
extern "C" __global__
void vm_lookup(const long long* q, const long long n, VM_MAP, int* out)
{
    VM_GRID_LOOP(t, n) {
        long long at = vm_find(bkeys, nb, q[t]);
        int got = at >= 0 ? bvals[at] : -1;
        if (got < 0) {
            long long ax = vm_find(xkeys, nx, q[t]);
            if (ax >= 0) got = xvals[ax];
        }
        out[t] = got;
    }
}

// VertexMap.release of k mapped, distinct keys: tombstones, reverse table cleared, and the new free
// queue new_free = free[0, nf) then the released ids in key order (new_free + nf is the result)
extern "C" __global__
void vm_release(const long long* q, const long long k, VM_MAP, long long* external_of,
                const int* free_ids, const long long nf, int* new_free)
{
    VM_GRID_LOOP(t, k > nf ? k : nf) {
        if (t < nf) new_free[t] = free_ids[t];
        if (t < k) {
            long long at = vm_find(bkeys, nb, q[t]);
            int got = at >= 0 ? bvals[at] : -1;
            if (at >= 0) bvals[at] = -1;
            long long ax = vm_find(xkeys, nx, q[t]);
            if (ax >= 0) {
                if (got < 0) got = xvals[ax];
                xvals[ax] = -1;
            }
            new_free[nf + t] = got;
            if (got >= 0) external_of[got] = VM_NO_EXTERNAL;
        }
    }
}

""" + block_sort_and_scan("vm", "VM_LOOP") + r"""

// VertexMap.assign of k distinct unmapped keys (one block): key i gets free_ids[i] for i < reused, else
// next_id + i - reused (ids[i]); the reverse table; tombstones revived in place; the other keys merged
// into new_xkeys / new_xvals (room for nx + k keys and the spare value).  pk: a power of two >= k;
// ws: 4 pk longs.  out[0]: the number of revived keys.
extern "C" __global__ void __launch_bounds__(VM_THREADS)
vm_assign(const long long* keys, const long long k, const int* free_ids, const long long reused,
          const long long next_id, int* ids, long long* external_of, VM_MAP,
          long long* new_xkeys, int* new_xvals, const long long pk, long long* ws, long long* out)
{
    __shared__ long long sh[VM_THREADS];
    __shared__ int unsorted;
    long long* flag = ws;               // key i joins extra    [pk]
    long long* rank = flag + pk;        // its rank among those [pk]
    long long* sk = rank + pk;          // their keys, sorted   [pk]
    long long* sv = sk + pk;            // their ids            [pk]
    if (threadIdx.x == 0) unsorted = 0;
    // 1. ids, the reverse table, revivals in place
    VM_LOOP(i, k) {
        long long key = keys[i];
        int id = i < reused ? free_ids[i] : (int)(next_id + i - reused);
        ids[i] = id;
        external_of[id] = key;
        bool known = false;
        long long at = vm_find(bkeys, nb, key);
        if (at >= 0) { bvals[at] = id; known = true; }
        long long ax = vm_find(xkeys, nx, key);
        if (ax >= 0) { xvals[ax] = id; known = true; }
        flag[i] = known ? 0 : 1;
    }
    __syncthreads();
    // 2. the other keys, compacted in their order; sorted unless already ascending
    const long long rest = vm_scan(flag, rank, k, sh);
    VM_LOOP(i, pk) {
        if (i < k) {
            if (flag[i]) { sk[rank[i]] = keys[i]; sv[rank[i]] = ids[i]; }
        }
        if (i >= rest) { sk[i] = VM_MAX; sv[i] = VM_MAX; }     // after any real key, even VM_MAX
    }
    __syncthreads();
    VM_LOOP(i, rest - 1) if (sk[i] > sk[i + 1]) unsorted = 1;
    __syncthreads();
    if (unsorted) vm_sort(sk, sv, pk);
    // 3. the merge by rank into the new extra (its spare value slot at the end)
    VM_LOOP(j, nx) {
        long long p = j + vm_lower_bound(sk, rest, xkeys[j]);
        new_xkeys[p] = xkeys[j];
        new_xvals[p] = xvals[j];
    }
    VM_LOOP(i, rest) {
        long long p = i + vm_lower_bound(xkeys, nx, sk[i]);
        new_xkeys[p] = sk[i];
        new_xvals[p] = (int)sv[i];
    }
    if (threadIdx.x == 0) { new_xvals[nx + rest] = -1; out[0] = k - rest; }
}
"""
SOURCE = SOURCE.replace("@LOWER_BOUND@", lower_bound("vm_lower_bound"))

KERNELS = ("vm_lookup", "vm_release", "vm_assign")

_kernels = RawKernels(SOURCE, "vertex map")


def _launch_block(xp, name: str, grid: int, block: int, args: tuple) -> None:
    count_launch(name)
    _kernels.launch_blocks(xp, name, grid, block, args)


#: the launchers in use (grid-stride over n items; a fixed grid of blocks); tests swap in a host emulation
launcher = _kernels.launch
block_launcher = _launch_block


def _map_args(vm) -> tuple:
    return (vm.base_keys, vm.base_values, i64(vm.base_keys.shape[0]),
            vm.extra_keys, vm.extra_values, i64(vm.extra_keys.shape[0]))


def lookup(xp, vm, external):
    """:meth:`VertexMap.lookup` of a contiguous int64 ``external`` in one launch."""
    k = int(external.shape[0])
    out = xp.empty(k, dtype=np.int32)
    launcher(xp, "vm_lookup", k, (external, i64(k), *_map_args(vm), out))
    return out


def release(xp, vm, external, external_of):
    """:meth:`VertexMap.release` of ``k`` mapped, distinct keys in one launch: (new free queue, released ids)."""
    k, nf = int(external.shape[0]), int(vm.free.shape[0])
    new_free = xp.empty(nf + k, dtype=np.int32)
    launcher(xp, "vm_release", max(k, nf),
             (external, i64(k), *_map_args(vm), external_of, vm.free, i64(nf), new_free))
    return new_free, new_free[nf:]


def assign(xp, vm, external, reused: int, next_id: int):
    """:meth:`VertexMap.assign`'s device work in one launch: (ids, new extra keys, new extra values with the
    spare slot, out) where the new extra has room for every key (the caller slices it to its size)."""
    k, nx = int(external.shape[0]), int(vm.extra_keys.shape[0])
    pk = pow2_at_least(k)
    buf = xp.empty(nx + k + 4 * pk + 1, dtype=np.int64)
    new_xkeys, ws, out = buf[:nx + k], buf[nx + k:nx + k + 4 * pk], buf[nx + k + 4 * pk:]
    small = xp.empty(k + nx + k + 1, dtype=np.int32)
    ids, new_xvals = small[:k], small[k:]
    block_launcher(xp, "vm_assign", 1, THREADS,
                   (external, i64(k), vm.free, i64(reused), i64(next_id), ids, vm.external_of,
                    *_map_args(vm), new_xkeys, new_xvals, i64(pk), ws, out))
    return ids, new_xkeys, new_xvals, out


__all__ = ["ASSIGN_CAPACITY", "KERNELS", "SOURCE", "assign", "lookup", "release"]
