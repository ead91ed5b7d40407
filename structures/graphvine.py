"""GraphVine (graphvine.txt, Krishnan, Tavva, Nasre): edge blocks in a complete binary tree per vertex.

Layout (all struct-of-arrays on ``self.xp``):

* **Vertex dictionary** (section 4.1, 4.4): arrays of power-of-two capacity,
  indexed by internal id, doubled by copying into a new dictionary.  Each entry
  carries the vertex's *edge sentinel*: ``edge_count``, ``root_block``,
  ``last_block`` / ``last_offset`` (the block and the number of entries used in
  it where the latest insertion ended), plus ``num_blocks``, ``in_degree`` and
  ``block_class`` (the size class of its blocks, -1 while it has none).
* **Edge blocks** (4.1): block ``b`` holds ``size`` entries of the flat arrays
  ``block_cols`` / ``block_weights`` (``-1`` marks an empty entry), starting at
  its *base*; child links ``block_left[b]`` / ``block_right[b]`` and the owning
  vertex ``block_owner[b]``.  The blocks of a vertex form a complete binary
  tree: CBT index 0 is the root, block ``k``'s children are ``2k+1`` /
  ``2k+2``, and block ``k`` is reached from the root by the bits of ``k+1``
  below its leading one (0 = left, 1 = right), the paper's *bit string*.
* **Block-size classes** (beyond the paper, whose one block size - the average
  degree of the first batch - leaves R-MAT's many low-degree vertices in
  part-empty blocks): by default (``block_sizing="degree"``) there is a class
  per power of two from ``min_block_size`` to ``max_block_size``, and a vertex's
  blocks all come from the class of about ``count / target_blocks`` entries, so
  its tree has a few, well-filled blocks whatever its degree.  A vertex is
  re-homed when its degree drifts two classes away: by an insert, inside the
  insert itself (its merged row is written whole into blocks popped from the
  right class, its old tree pushed back to its class's queue); by a delete, after
  it (its edges read out, its tree freed, its edges inserted again).  The paper's
  rule is ``block_sizing="paper"``; ``block_size=N`` fixes one class of ``N``.
* **Edge queues** (4.2): per class, the ids of its free blocks in a ring
  buffer (a region ``[q_start, q_start + q_size)`` of ``queue``, with monotone
  ``head`` / ``tail`` counters).  A batch pops the blocks of all its vertices at
  once: vertex ``i`` takes entries ``[head + excl_i, head + excl_i + need_i)``
  of its class's ring, ``excl`` being the exclusive prefix sum of the needs of
  the vertices of that class (Figure 3; no atomics).  Emptied blocks are
  pushed at their class's tail the same way.
* **Pool chunks**: a class's blocks come in chunks - contiguous runs of block
  ids whose entries are contiguous - recorded in a small chunk table
  (``first id``, ``entry base``, ``size``), which gives every block its base.
  When 80% of a class's blocks are in use it grows by 25%, by one new chunk;
  the first reservation is the measured need times ``headroom`` (not "half the
  GPU").  The flat arrays are reallocated for a new chunk (CuPy has no
  realloc), but blocks never move and only the growing class's chunk is added.

Invariant kept after every call (this is where we go beyond the paper, which
leaves holes after deletions, 4.5.2, and appends in arrival order): a vertex's
``edge_count`` edges occupy positions ``0 .. edge_count-1`` of its blocks in CBT
order, densely and **sorted by column**, and it owns exactly
``ceil(edge_count / size)`` blocks of its class.  An insert merges the new edges
into the row (old edges past the first new one shift right, into the last block
and the popped ones); a delete closes the holes keeping the order (each survivor
shifts left by the deletions before it) and returns emptied blocks to the queue.
So an edge query is a binary search: over the vertex's blocks by their first
column (each probe follows the bit string of its CBT index), then inside one
block (``gv_query``), with no scan of the row.  The price: an insert or delete
rewrites the shifted part of each touched row (see :mod:`structures.graphvine_kernels`).

Reverse information for vertex deletion: an ``in_degree`` counter per vertex and
the owner of each block.  Deleting a vertex frees its own tree directly; its
in-edges are found, only when its in-degree is non-zero, by one data-parallel
scan of the pool's columns (owner gives the source).

Every mechanism is an array program over ``xp`` (NumPy or CuPy): loops run over
tree levels and size classes only, never over vertices or edges.  On CuPy the
fused kernels of :mod:`structures.graphvine_kernels` do the same work.  A small
CSR batch (up to 8,192 keys, the common pipeline case) takes the *one-sync* path:
its six kernels are all queued before the host reads anything, their sizes live
on the device (a kept workspace holds the walked rows), the later kernels are
gated by the io buffer's STOP / HOLD slots, and one read per phase returns every
count; a batch that stops (out of order, bad ids, rows larger than the
workspace) runs again or takes the two-sync path, and one whose pops may grow the
pool is finished after the read, once the host has grown it.  With the CUDA graphs the
pipeline's two edge phases share ONE read (``edge_phases_counted``, ``combined_edge_phases``):
the delete's graph (reporting into its own io buffer) and the insert's (on the queue
table's parity the delete's finish writes) are queued back to back, and the insert's
first kernel does nothing but stop when the delete stopped or left vertices to re-home,
so that it runs after the delete's host side as it would alone.  On an H200 (R-MAT 20,
1,000-event batches) that took the two phases from 0.33 to 0.21 ms and the batch through
resolve, vertices and structure from 0.99 to 0.83 ms (bench-results/2026-11-26-gvsmall/).

Three fused variants keep the same invariant and leave the same state (block for
block: the same pops, pushes and slots), each behind a switch (``DEFAULT_KEYSIDE``,
``DEFAULT_KEYSIDE_SMALL``, ``DEFAULT_SHIFT``, ``DEFAULT_GRAPHS``), all tested on an
H100 against the array program.  The CUDA graph is on for small batches (a
1,000-edge insert 0.259 ms and delete 0.193 ms against 0.437 and 0.324 kernel by
kernel, R-MAT 20; the key side took 0.95 / 0.89 ms there), and the key side with
its one-pass shift for large ones (1e6-edge batches on R-MAT 22: insert 2.02 ms,
delete 1.65 ms, against the rows' side's 3.13 / 2.47 and the first one-pass form's
2.26 / 1.98 in the same process, and the staged key side's 3.72 / 3.58 in another;
bench-results/2026-11-26-session19/ and -session20/):

* ``keyside`` (large batches) / ``keyside_small`` (the one-sync path): the search
  goes from the keys - each key's rank in its sorted row by a binary search
  (O(k log d)) - and only a row's suffix from its first changed position moves;
  the rows' side lists every live entry of every touched row and gallops per
  entry (three passes over 52M of R-MAT 22's 65M edges for a 1e6-edge batch).
  ``shift="tiles"`` (large batches) moves the suffixes in place in one pass:
  tiles of 3,072 entries taken in dependency order, each read into shared memory,
  published, and written once the tiles it overwrites have read theirs
  (gv_insert_shift / gv_delete_shift), every entry's row and shift read from a
  table that its tile builds in shared memory from the keys falling in it (a
  max-scan of their marks); ``shift="staged"`` (and the one-sync path)
  copies them aside and scatters them back, each entry's shift from a pointer
  through its vertex's keys.  An insert's new keys that take the slots of moved
  entries are written by the shift's tiles after their wait (gv_tile_keys gives
  their slots); the others, the batch's mask and the in-degrees go to
  gv_insert_scatter.  In one pass the finish kernel (tree links, queue
  tails, the vertices' fields: nothing the shift or the new keys' scatter
  touches) and that scatter run on a side stream beside the shift
  (:meth:`GraphVine._finish_beside`).  Session
  22 (an H100): the kernels of a 1e6-edge insert / delete take 1.25 / 1.04 ms,
  0.07 / 0.10 of them beside the shift (bench-results/2026-11-26-session22/).
  Session 24 (an H100, R-MAT 22, 1e6 edges): the new keys in the shift took the
  insert's tail after gv_tile_keys from 0.83 to 0.76 ms, and tiles of 3,072
  entries instead of 2,048 the shifts from 0.661 / 0.631 to 0.610 / 0.592 ms
  (bench-results/2026-11-27-session24/).  Every
  launch that needs only the keys (the walk, the ranks, the activation, the plan) is
  queued before the first read, which waits beside them on the side stream, as the
  insert's second read waits beside gv_tile_keys (:meth:`GraphVine._ahead`): on an H100
  the device's idle time in such an insert / delete fell from 0.20 / 0.13 ms to
  0.06-0.10, and the calls took 1.31-1.36 / 1.12-1.17 ms against the start's
  1.42-1.54 / 1.16-1.26 (bench-results/2026-11-27-session23/).
* ``graphs``: the one-sync launches captured once as a CUDA graph on fixed
  buffers (rows ``BLOCK_KEYS`` apart), the batch's size and arrays passed as
  device parameters (one host -> device copy) that gv_prep_block reads, the
  later kernels reading the key count from the io buffer; replayed per batch
  (one launch) while the structure's arrays, the queue parity and the grids
  stay the same.
"""
from __future__ import annotations

import contextlib
import ctypes
import math
from typing import ClassVar

import numpy as np

from . import backend
from . import graphvine_kernels as gk
from .array_ops import (
    bincount,
    compact,
    dedupe_keys,
    doublings,
    extended,
    grouped_exclusive_sum,
    grown_capacity,
    pow2_at_least,
    repeat_index,
    scatter_add,
    unique_inverse,
    unique_sorted,
)
from .backend import as_contiguous, count_launch, pinned_empty
from .base import DynamicGraph
from .csr_types import CSR, OFFSET_DTYPE, VERTEX_DTYPE, WEIGHT_DTYPE, CSRBatch
from .options import MAX_ENTRIES, MAX_VERTEX_CAPACITY, Option
from .registry import register
from .vertex_table import AliveVertexTable

EMPTY = -1                 # an unused edge entry / a missing child or root / no class
GROW_AT = 0.8              # section 4.2: grow the pool when 80% of it is in use ...
GROW_BY = 1.25             # ... by 25%
# ... and by at least this many entries (512 KiB of them): the paper's 25% is of a pool of half the GPU's memory,
# ours of a pool sized to the graph, so a growing stream of small batches would grow each class in tiny steps
# (a replay of 51 batches: 36 growths of its 8 classes, each a re-laid queue and, on the one-sync path, CUDA graphs
# captured anew; 9 with this floor: bench-results/2026-11-26-session14)
GROW_MIN_ENTRIES = 1 << 16
REHOME_CLASSES = 2         # re-home a vertex whose degree is this many classes from its blocks'
# The pool's arrays (links, entries, queue) and its chunk table sit at the front of buffers that grow by doubling
# while they are smaller than POOL_ROOM_BYTES (never past it): a pool growth that fits writes in place, so the
# one-sync path's CUDA graphs, which name those arrays' addresses, stay valid (a replay grew its pool 36 times in 51
# batches, and each growth that moved them cost two captures: bench-results/2026-11-26-session14).  Larger buffers
# grow to the size asked (their graphs take large batches, which have none; R-MAT 22's reserved bytes per edge
# after churn rose from 1.79x to 1.98x a CSR's with 16 MiB of room a buffer, call 11).  The room counts as reserved.
POOL_ROOM_BYTES = 16 << 20
EVENT_RING = 8             # kept CUDA events (GraphVine._event)
SIDE_PRIORITY = -100       # the side stream's priority: CUDA clamps it to the device's highest (-5 on an H100)
# a large batch queues its walk before its first read (GraphVine._ahead) into a table sized by the pool's blocks (20
# bytes a block: R-MAT 22's 7.4M blocks, 148 MB); past this many bytes it reads first and sizes the table exactly
AHEAD_TABLE_BYTES = 1 << 29
WALK_ENTRY_BYTES = 20      # a walked block's table entry: block id (int32), key index and CBT index (int64)
CHUNK_TABLE_ROWS = 64      # the chunk table's first capacity (padded rows: first block and base past every id)
_NO_CHUNK = np.iinfo(np.int64).max
_LOW32 = np.int64(0xFFFFFFFF)

# bytes per vertex-dictionary entry: alive(1) edge_count(8) num_blocks(4) root(4)
# last_block(4) last_offset(4) in_degree(4) block_class(1)
VERTEX_ENTRY_BYTES = 30
BLOCK_LINK_BYTES = 12      # left, right, owner (int32 each)
QUEUE_ENTRY_BYTES = 4
ENTRY_BYTES = 8            # column (int32) + weight (float32)
SIZINGS = ("degree", "paper")
MAX_BLOCK_SIZE = 1 << 16   # the largest max_block_size / block_size (GraphVine.options_spec says why)
# Defaults of the fused GPU paths (the module docstring has the measurements behind each)
DEFAULT_KEYSIDE = True          # large batches: searches from the keys, only the rows' changed suffixes moved
DEFAULT_KEYSIDE_SMALL = False   # the one-sync path: from the rows' live entries (the key side was slower there)
SHIFTS = ("tiles", "staged")
DEFAULT_SHIFT = "tiles"         # the large key-side path's moves: one pass in place (tiles), or staged and scattered
DEFAULT_GRAPHS = True           # small batches: the one-sync launches as one CUDA graph (1.7x on an H100)


def _expand(xp, counts, total: int | None = None):
    """Segment expansion: for ``counts`` per segment, (segment id, index within it) of every element.

    Written with a scatter and a prefix sum rather than ``repeat`` with an array
    of repeats, which CuPy only accepts as a host list.  ``total`` (the sum of
    ``counts``, when the host knows it) saves reading it back and the ``nonzero``.
    """
    counts = counts.astype(np.int64)
    ends = xp.cumsum(counts)
    known = total is not None
    if not known:
        total = int(ends[-1]) if counts.shape[0] else 0
    starts = ends - counts
    if total == 0:
        z = xp.zeros(0, dtype=np.int64)
        return z, z, starts, 0
    if known:
        seg = repeat_index(xp, counts, total)
        return seg, xp.arange(total, dtype=np.int64) - starts[seg], starts, total
    nonempty = xp.nonzero(counts > 0)[0]
    flags = xp.zeros(total, dtype=np.int64)
    flags[starts[nonempty]] = 1
    seg = nonempty[xp.cumsum(flags) - 1]
    within = xp.arange(total, dtype=np.int64) - starts[seg]
    return seg, within, starts, total


def _floor_log2(xp, x):
    """floor(log2(x)) for int64 x >= 1, exact (float estimate, then one correction each way)."""
    d = xp.floor(xp.log2(x.astype(np.float64))).astype(np.int64)
    one = np.int64(1)
    d = d - (xp.left_shift(one, d) > x).astype(np.int64)
    d = d + (xp.left_shift(one, d + 1) <= x).astype(np.int64)
    return d


def _length(ids) -> int:
    """Number of ids in an array or a sequence (no conversion)."""
    return int(ids.shape[0]) if hasattr(ids, "shape") else len(ids)


def _edge_keys(src, dst):
    """One sortable int64 key per edge: src in the high 32 bits, dst in the low 32."""
    return (src.astype(np.int64) << 32) | (dst.astype(np.int64) & _LOW32)


@register
class GraphVine(AliveVertexTable, DynamicGraph):
    """GraphVine: vertex dictionary + edge sentinels + CBT of edge blocks + edge queues.

    Options: :attr:`options_spec` (block sizing, pool reservation and growth, and the fused GPU
    paths' switches).
    """

    name = "graphvine"

    #: False: the delete phase compacts a vertex's edges (its tail fills the holes) and frees its
    #: last blocks while the insert phase appends at that same tail (``last_block`` /
    #: ``last_offset``) and pops from the same class queues, so the two phases of one batch touch
    #: the same sentinels whenever a vertex has both inserts and deletes.
    concurrent_phases = False

    #: The options (see :mod:`structures.options`).  Block sizes stop at MAX_BLOCK_SIZE: the degree classes
    #: 2 .. 2^16 are GV_MAX_CLASSES (16), what the one-sync path's plan handles, and a first reservation of
    #: the default 64 blocks stays within 32 MiB (block_size=10**6 had it reserve 512 MB for 3 edges).
    options_spec: ClassVar[dict[str, Option]] = {
        "block_sizing": Option(str, "degree", "how blocks are sized: 'degree', a class of blocks per power of two "
                               "and a vertex in the class of about count / target_blocks entries; 'paper', one "
                               "size, the rounded average degree of the first insert batch's non-zero-degree "
                               "vertices, clamped to [min_block_size, max_block_size]", choices=SIZINGS),
        "block_size": Option(int, None, "one fixed block size for every vertex (overrides block_sizing; None: "
                             "block_sizing decides)", low=1, high="max_block_size", none_ok=True),
        "min_block_size": Option(int, None, "the smallest block (None: 2 with block_sizing='degree', else 1)",
                                 low=1, high="max_block_size", none_ok=True),
        "max_block_size": Option(int, 4096, "the largest block", low=1, high=MAX_BLOCK_SIZE),
        "target_blocks": Option(int, 4, "'degree' sizing: blocks a vertex's edges fill, about", low=1,
                                high=MAX_ENTRIES),
        "headroom": Option(float, 1.3, "a class's first reservation is its measured need times this", low=1.0),
        "min_pool_blocks": Option(int, 64, "a class's first reservation in blocks, at least (scaled down for the "
                                  "larger classes)", low=1, high=MAX_ENTRIES),
        "grow_min_entries": Option(int, GROW_MIN_ENTRIES, "a class grows by 25% and by at least this many entries",
                                   low=0, high=MAX_ENTRIES),
        "initial_vertex_capacity": Option(int, 0, "vertex dictionary entries reserved at the start (rounded up to a "
                                          "power of two)", low=0, high=MAX_VERTEX_CAPACITY),
        "fused": Option(bool, True, "the fused CUDA kernels on CuPy (False: the array program)", internal=True),
        "keyside": Option(bool, DEFAULT_KEYSIDE, "large batches search from the keys", internal=True),
        "keyside_small": Option(bool, DEFAULT_KEYSIDE_SMALL, "the one-sync path searches from the keys",
                                internal=True),
        "shift": Option(str, DEFAULT_SHIFT, "how the large key-side batches move the rows' suffixes",
                        choices=SHIFTS, internal=True),
        "graphs": Option(bool, DEFAULT_GRAPHS, "small batches' launches as one CUDA graph on the fused path "
                         "('emulate': recorded and rerun on the host emulation)", choices=("emulate",),
                         internal=True),
    }

    def __init__(self, xp=np, **options):
        super().__init__(xp, **options)
        opt = self.options
        self._fixed_block_size = opt["block_size"]
        self.sizing = opt["block_sizing"]
        degree_mode = self.sizing == "degree" and self._fixed_block_size is None
        self.min_block_size = opt["min_block_size"] or (2 if degree_mode else 1)
        self.max_block_size = opt["max_block_size"]
        self.target_blocks = opt["target_blocks"]
        self.headroom = opt["headroom"]
        self.min_pool_blocks = opt["min_pool_blocks"]
        self.grow_min_entries = opt["grow_min_entries"]
        # fused CUDA kernels (structures/graphvine_kernels.py) on the GPU; the array program otherwise
        # (the reference; ``fused=False`` runs it on CuPy too).  Both leave the same state.
        self.fused = opt["fused"] and backend.is_gpu(xp)
        # the fused path's large batches (the two-sync path): search from the keys (gv_rank) and move only
        # the changed suffixes of the rows (gv_insert_shift / gv_delete_shift, or staged), not every live
        # entry of every touched row (gv_fill_rows + gv_find + gv_insert_write / gv_delete_move)
        self.keyside = opt["keyside"]
        # the one-sync path (small batches) on the key side too: gv_walk_keys, gv_rank, gv_stage and a scatter
        # in place of gv_walk_fill, gv_find and gv_insert_write / gv_delete_move
        self.keyside_small = opt["keyside_small"]
        # how the large key-side path moves the changed suffixes: "tiles" (gv_insert_shift / gv_delete_shift:
        # one pass, in place, tiles of entries in dependency order) or "staged" (gv_stage, then a scatter)
        self.shift = opt["shift"]
        # the one-sync path's launches as one CUDA graph (on fixed buffers, the batch's size and arrays as
        # device parameters); "emulate": on the host emulation, a capture records the launches and a cache
        # hit reruns the recording
        graphs = opt["graphs"]
        self.graphs = "emulate" if graphs == "emulate" else (graphs and self.fused)
        self._gbuf = None
        self._graphs: dict = {}
        self._cap_stream = None
        self._side_stream = None          # the large batches' finish kernels, beside the shifts (_finish_beside)
        self._events = None               # kept events (_event)
        if self.max_block_size < self.min_block_size:     # a default min_block_size (2) above max_block_size
            raise ValueError(f"graphvine options: need min_block_size ({self.min_block_size}) <= max_block_size "
                             f"({self.max_block_size})")
        # -- size classes ------------------------------------------------------------
        self.block_size: int | None = None      # the one size (paper / fixed), None with classes
        self.class_sizes: list[int] | None = None
        self._min_shift = 0
        # No class yet (the paper's rule picks its one size from the first insert that has edges): every
        # method, memory() above all (the pipeline reads it after each batch, one that inserted no edge
        # included), sees zero classes until _set_classes replaces these.
        self.cls_blocks, self.cls_head, self.cls_tail, self.cls_qstart = [], [], [], []
        self._class_sizes_d = xp.zeros(0, dtype=np.int64)
        if self._fixed_block_size is not None:
            self._set_classes([self._fixed_block_size])
        elif degree_mode:
            lo = pow2_at_least(self.min_block_size)
            hi = max(lo, 1 << int(math.floor(math.log2(self.max_block_size))))
            self._min_shift = int(math.log2(lo))
            self._set_classes([1 << s for s in range(self._min_shift, int(math.log2(hi)) + 1)])
        # -- vertex dictionary with the edge sentinels (SoA) -----------------------
        self.capacity = 0
        self.alive = xp.zeros(0, dtype=bool)
        self.edge_count = xp.zeros(0, dtype=np.int64)
        self.num_blocks = xp.zeros(0, dtype=np.int32)
        self.root_block = xp.zeros(0, dtype=np.int32)
        self.last_block = xp.zeros(0, dtype=np.int32)
        self.last_offset = xp.zeros(0, dtype=np.int32)
        self.in_degree = xp.zeros(0, dtype=np.int32)
        self.block_class = xp.zeros(0, dtype=np.int8)
        # -- edge blocks, chunks and queues (allocated by the first edge batch) ------
        self.block_cols = self.block_weights = None
        self.block_left = self.block_right = self.block_owner = None
        self.queue = None
        self._buffers = {}                   # name -> the buffer whose front the pool array of that name is
        self._chunk_table = None             # (3, rows) first block, entry base and block size of each chunk, padded
        self.entries = 0                     # length of block_cols
        self.chunk_first: list[int] = []     # per chunk: first block id, entry base, class
        self.chunk_base: list[int] = []
        self.chunk_class: list[int] = []
        # -- counters ----------------------------------------------------------------
        self._num_vertices = 0
        self._num_edges = 0
        self._new_count = self._removed_count = None   # host counts of the last edge phase, when known
        self._no_edges = None                # delete_live_vertices' result for no ids (kept, never written)
        # the fused path's device state: the io buffer the host reads (one transfer a sync) and the queue
        # table in two parities (the kernels of a phase read one and write the next; re-uploaded only after
        # the host changed the table outside the fused kernels)
        self._io = None
        self._qstate = self._qviews = None
        self._qpar = 0
        self._qdirty = True
        self._ws = None                      # the one-sync path's scratch (see _workspace)
        self._ws_want = (1 << 12, 1 << 16)   # its blocks and entries
        # the last one-sync insert's and delete's blocks, live entries and pops (their next grids); _est: the
        # phase being queued
        self._ests = {"insert": (1, 1, 1), "delete": (1, 1, 1)}
        self._est = self._ests["insert"]
        self._gaddr = None                   # the captured graphs' array addresses (see _graph_addresses)
        self._io_all = self._io_del = None
        # how the one-sync batches went (not part of the state: the array program has no such path)
        self.one_sync = {"batches": 0, "stopped": 0, "held": 0, "workspace_grown": 0, "graphs_captured": 0}
        # edge_phases_counted's batches with one read, and those whose insert ran after the read (the delete
        # stopped or re-homed)
        self.combined_phases = {"one_read": 0, "insert_after": 0}
        self.stats = {"dictionary_doublings": 0, "pool_grows": 0, "blocks_popped": 0,
                      "blocks_pushed": 0, "rehomed": 0}
        init_cap = opt["initial_vertex_capacity"]
        if init_cap > 0:
            self._ensure_vertex_capacity(init_cap - 1)
            self.stats["dictionary_doublings"] = 0

    def _set_classes(self, sizes: list[int]) -> None:
        xp = self.xp
        self.class_sizes = list(sizes)
        if len(sizes) == 1:
            self.block_size = sizes[0]
        c = len(sizes)
        self.cls_blocks = [0] * c           # blocks of each class
        self.cls_head = [0] * c             # monotone pop / push counters of each class's ring
        self.cls_tail = [0] * c
        self.cls_qstart = [0] * c           # where each class's ring sits in ``queue``
        self._class_sizes_d = xp.asarray(np.asarray(sizes, dtype=np.int64))
        self._drop_graphs()

    # =========================================================================
    # vertex dictionary (section 4.4)
    # =========================================================================
    def _ensure_vertex_capacity(self, max_id: int) -> None:
        """Double the dictionary (copy into a new one) until ``max_id`` fits."""
        if max_id < self.capacity:
            return
        xp = self.xp
        new_cap = grown_capacity(self.capacity, max_id + 1)
        self._drop_graphs()
        self.stats["dictionary_doublings"] += doublings(self.capacity, new_cap)
        self.alive = extended(xp, self.alive, new_cap, False)
        self.edge_count = extended(xp, self.edge_count, new_cap, 0)
        self.num_blocks = extended(xp, self.num_blocks, new_cap, 0)
        self.root_block = extended(xp, self.root_block, new_cap, EMPTY)
        self.last_block = extended(xp, self.last_block, new_cap, EMPTY)
        self.last_offset = extended(xp, self.last_offset, new_cap, 0)
        self.in_degree = extended(xp, self.in_degree, new_cap, 0)
        self.block_class = extended(xp, self.block_class, new_cap, EMPTY)
        self.capacity = new_cap

    def _reset_sentinels(self, ids) -> None:
        self.edge_count[ids] = 0
        self.num_blocks[ids] = 0
        self.root_block[ids] = EMPTY
        self.last_block[ids] = EMPTY
        self.last_offset[ids] = 0
        self.block_class[ids] = EMPTY

    def _fresh_vertices(self, ids) -> None:
        """Entries that become live get a fresh, empty edge sentinel (:meth:`_activate`)."""
        self._reset_sentinels(ids)
        self.in_degree[ids] = 0

    def insert_new_vertices(self, ids, id_bound: int) -> None:
        """:meth:`insert_vertices` of distinct, dead ids below ``id_bound``: fresh sentinels, no transfer.
        The fused path takes the vertex map's int32 ids as they are (a conversion to int64 was a copy and
        a launch, about 20 us of a small batch's host time)."""
        if _length(ids) == 0:
            return
        self._ensure_vertex_capacity(int(id_bound) - 1)
        if self.fused:                                 # one launch instead of eight scatters
            ids = as_contiguous(self.xp, ids, VERTEX_DTYPE)
            n = int(ids.shape[0])
            gk.launch(self.xp, "gv_new_vertices", n, ids, gk.i64(n), self.alive, self.edge_count, self.num_blocks,
                      self.root_block, self.last_block, self.last_offset, self.in_degree, self.block_class)
            self._num_vertices += n
            return
        ids = self.xp.asarray(ids, dtype=np.int64)
        self._reset_sentinels(ids)
        self.in_degree[ids] = 0
        self.alive[ids] = True
        self._num_vertices += int(ids.shape[0])

    def delete_vertices(self, ids):
        """Remove ``ids`` with their out-trees (blocks back to the queues) and their in-edges."""
        xp = self.xp
        ids = xp.asarray(ids, dtype=np.int64)
        ids = ids[self._live(ids)]
        if ids.shape[0] == 0:
            return xp.zeros(0, dtype=VERTEX_DTYPE), xp.zeros(0, dtype=VERTEX_DTYPE)
        return self._delete_sorted_vertices(unique_sorted(xp, ids))

    def delete_live_vertices(self, ids):
        """:meth:`delete_vertices` of distinct live ids: no filter, no ``unique`` (a sort suffices).  No ids
        (most batches): two kept empty arrays, no conversion or allocation."""
        xp = self.xp
        if _length(ids) == 0:
            if self._no_edges is None:
                self._no_edges = (xp.zeros(0, dtype=VERTEX_DTYPE), xp.zeros(0, dtype=VERTEX_DTYPE))
            return self._no_edges
        return self._delete_sorted_vertices(xp.sort(xp.asarray(ids, dtype=np.int64)))

    def _delete_sorted_vertices(self, ids):
        """Delete sorted, distinct, live ``ids``.  The sizes of their trees (blocks, edges, blocks
        per class) and their in-degree come back in one transfer; a second one sizes the scan for
        in-edges, only when there are any; deleting those edges costs what an edge batch does."""
        xp = self.xp
        srcs, dsts = [], []
        in_edges = 0
        if self._has_pool:
            nb = self.num_blocks[ids].astype(np.int64)
            _, per_class = grouped_exclusive_sum(xp, xp.maximum(self.block_class[ids], 0).astype(np.int64),
                                                 nb, self.num_classes)
            blocks, edges, in_edges, *class_blocks = self._fetch(
                nb.sum(), self.edge_count[ids].sum(), self.in_degree[ids].sum(), per_class)
            # out-edges: walk the trees of all deleted vertices at once, free every block
            out_src, out_dst, _ = self._evict(ids, (blocks, edges, class_blocks))
            srcs.append(out_src.astype(VERTEX_DTYPE))
            dsts.append(out_dst.astype(VERTEX_DTYPE))
        self._reset_sentinels(ids)
        self.alive[ids] = False
        self._num_vertices -= int(ids.shape[0])
        if in_edges > 0:
            # in-edges: one scan of the pool's columns against the sorted deleted ids (those from
            # the deleted vertices themselves left with their trees: there may be none left)
            cols = self.block_cols
            pos = xp.minimum(xp.searchsorted(ids, cols.astype(np.int64)), ids.shape[0] - 1)
            hit = (cols >= 0) & (ids[pos] == cols)
            n_hit = int(hit.sum())
            if n_hit:
                hit_slots = compact(xp, xp.arange(cols.shape[0], dtype=np.int64), hit, n_hit)
                owners = self.block_owner[self._slot_block(hit_slots)]
                keys = xp.sort(_edge_keys(owners, cols[hit_slots]))
                self._delete_sorted_keys(keys)
                srcs.append((keys >> 32).astype(VERTEX_DTYPE))
                dsts.append((keys & _LOW32).astype(VERTEX_DTYPE))
        self.in_degree[ids] = 0
        if not srcs:
            return xp.zeros(0, dtype=VERTEX_DTYPE), xp.zeros(0, dtype=VERTEX_DTYPE)
        return xp.concatenate(srcs), xp.concatenate(dsts)

    # =========================================================================
    # size classes, chunks, edge queues (section 4.2)
    # =========================================================================
    @property
    def _has_pool(self) -> bool:
        return self.queue is not None

    @property
    def num_classes(self) -> int:
        return len(self.class_sizes or ())

    @property
    def pool_blocks(self) -> int:
        return sum(self.cls_blocks) if self.class_sizes else 0

    @property
    def blocks_free(self) -> int:
        return sum(t - h for h, t in zip(self.cls_head, self.cls_tail)) if self.class_sizes else 0

    @property
    def blocks_in_use(self) -> int:
        return self.pool_blocks - self.blocks_free

    def class_free_ids(self, c: int):
        """The free block ids of class ``c``, in queue order (head first)."""
        xp = self.xp
        size = self.cls_blocks[c]
        n = self.cls_tail[c] - self.cls_head[c]
        if size == 0 or n == 0:
            return xp.zeros(0, dtype=np.int32)
        return self.queue[self.cls_qstart[c] + (self.cls_head[c] + xp.arange(n, dtype=np.int64)) % size]

    def _class_of_count(self, counts):
        """The size class for vertices of ``counts`` edges: about ``count / target_blocks`` entries."""
        xp = self.xp
        counts = xp.asarray(counts, dtype=np.int64)
        if self.num_classes <= 1:
            return xp.zeros(counts.shape[0], dtype=np.int64)
        per_block = (xp.maximum(counts, 1) + self.target_blocks - 1) // self.target_blocks
        # sizes are consecutive powers of two: the class is floor(log2(per_block)) - min_shift,
        # i.e. the number of sizes <= per_block, less one, clipped into the classes
        return xp.maximum(xp.searchsorted(self._class_sizes_d, per_block, side="right") - 1, 0)

    def _sizes_of(self, classes):
        """Block size of each class id (ids < 0, i.e. no blocks, read as class 0)."""
        return self._class_sizes_d[self.xp.maximum(classes, 0).astype(np.int64)]

    def _choose_block_size(self, batch_src_counts) -> int:
        """Section 4.3: the average degree of the first batch's non-zero-degree vertices."""
        nz = batch_src_counts[batch_src_counts > 0]
        avg = float(nz.sum()) / max(int(nz.shape[0]), 1)
        return int(min(max(round(avg), self.min_block_size, 1), self.max_block_size))

    def _device_chunks(self) -> None:
        """The chunk table on the device: rows past the last chunk are padding (first block and entry base past
        every id, so the kernels' binary search over all rows and ``searchsorted`` never land there); written in
        place (one host -> device copy) while the rows suffice, doubled otherwise."""
        xp = self.xp
        n = len(self.chunk_first)
        rows = CHUNK_TABLE_ROWS if self._chunk_table is None else int(self._chunk_table.shape[1])
        while rows < n:
            rows *= 2
        host = np.empty((3, rows), dtype=np.int64)
        host[:2, n:] = _NO_CHUNK
        host[2, n:] = 1
        host[0, :n], host[1, :n] = self.chunk_first, self.chunk_base
        host[2, :n] = [self.class_sizes[c] for c in self.chunk_class]
        if self._chunk_table is None or int(self._chunk_table.shape[1]) != rows:
            self._chunk_table = xp.asarray(host)
            self._drop_graphs()
        else:
            self._chunk_table[...] = xp.asarray(host)      # in place: the graphs name its address
        self._chunk_first_d, self._chunk_base_d, self._chunk_size_d = (self._chunk_table[i] for i in range(3))

    def _pool_array(self, name: str, size: int, fill, dtype):
        """The pool array ``name`` extended to ``size`` entries, the new ones ``fill`` (None: the caller writes
        every entry, so neither the old ones are kept nor the new ones filled): in place at the front of its buffer
        while the buffer has room (the array keeps its address), else in a new buffer, which drops the captured
        graphs: twice the old one's room while that stays under POOL_ROOM_BYTES, ``size`` otherwise."""
        xp = self.xp
        arr = getattr(self, name)
        old = 0 if arr is None else int(arr.shape[0])
        buf = self._buffers.get(name)
        if buf is None or int(buf.shape[0]) < size:
            cap = POOL_ROOM_BYTES // np.dtype(dtype).itemsize
            room = size if buf is None else max(size, min(2 * int(buf.shape[0]), cap))
            new_buf = xp.empty(room, dtype=dtype)
            if old and fill is not None:
                new_buf[:old] = arr
            buf = self._buffers[name] = new_buf
            self._drop_graphs()
        if fill is not None:
            buf[old:size] = fill
        setattr(self, name, buf[:size])

    def _buffer_slack_bytes(self) -> int:
        """Bytes of the pool's buffers past its arrays (reserved, not yet in the pool)."""
        return sum((int(b.shape[0]) - int(getattr(self, name).shape[0])) * b.itemsize
                   for name, b in self._buffers.items())

    def _queue_args(self, *counters):
        """Per-class ring start, size and head or tail counters, as device int64 arrays (for kernels;
        one host -> device copy)."""
        xp = self.xp
        table = np.asarray([self.cls_qstart, self.cls_blocks, *counters], dtype=np.int64)
        d = xp.asarray(table)
        return tuple(d[i] for i in range(d.shape[0]))

    def _block_base(self, ids):
        """Entry offset of each block id (its chunk's base + its rank in the chunk x the chunk's size)."""
        xp = self.xp
        ids = ids.astype(np.int64)
        j = xp.searchsorted(self._chunk_first_d, ids, side="right") - 1
        return self._chunk_base_d[j] + (ids - self._chunk_first_d[j]) * self._chunk_size_d[j]

    def _slot_block(self, slots):
        """The block holding each entry slot."""
        xp = self.xp
        slots = slots.astype(np.int64)
        j = xp.searchsorted(self._chunk_base_d, slots, side="right") - 1
        return self._chunk_first_d[j] + (slots - self._chunk_base_d[j]) // self._chunk_size_d[j]

    def _min_blocks(self, c: int) -> int:
        """First reservation floor of class ``c``: ``min_pool_blocks`` of the smallest class's entries."""
        return max(1, self.min_pool_blocks * self.class_sizes[0] // self.class_sizes[c])

    def _reserve(self, needs) -> None:
        """Make sure ``needs[c]`` more blocks of each class can be popped, keeping every class under
        80% use (grow by 25% steps of at least GROW_MIN_ENTRIES entries, one new chunk per class that grows)."""
        grown = {}
        for c, need in enumerate(needs):
            need = int(need)
            if need <= 0:
                continue
            size = self.cls_blocks[c]
            new = size if size else max(self._min_blocks(c), math.ceil(need * self.headroom))
            target = size - (self.cls_tail[c] - self.cls_head[c]) + need
            grows = 0
            step = self.grow_min_entries // self.class_sizes[c]
            while target > GROW_AT * new:
                new = max(new + 1, math.ceil(new * GROW_BY), new + step)
                grows += 1
            self.stats["pool_grows"] += grows
            if new > size:
                grown[c] = new - size
        if grown:
            self._add_chunks(grown)

    def _add_chunks(self, grown: dict) -> None:
        """One new chunk of ``grown[c]`` blocks for each growing class; the queue is re-laid by class,
        each ring holding its free ids (in queue order) then its new ids."""
        xp = self.xp
        old_start, old_size = list(self.cls_qstart), list(self.cls_blocks)
        old_head = list(self.cls_head)
        n_free = [t - h for h, t in zip(self.cls_head, self.cls_tail)] if self.queue is not None \
            else [0] * self.num_classes
        first_id, entries = self.pool_blocks, self.entries
        add, first_new = [0] * self.num_classes, [0] * self.num_classes      # new ids per class: count, first
        entry_total = 0
        for c, more in sorted(grown.items()):
            self.chunk_first.append(first_id)
            self.chunk_base.append(entries + entry_total)
            self.chunk_class.append(c)
            add[c], first_new[c] = more, first_id
            first_id += more
            entry_total += more * self.class_sizes[c]
            self.cls_blocks[c] += more

        blocks = first_id                               # the pool's blocks after the growth
        for name in ("block_left", "block_right", "block_owner"):
            self._pool_array(name, blocks, EMPTY, np.int32)
        self._pool_array("block_cols", entries + entry_total, EMPTY, VERTEX_DTYPE)
        self._pool_array("block_weights", entries + entry_total, 0, WEIGHT_DTYPE)
        self.entries += entry_total
        # the new queue in one gather: ring c holds its free ids from the old ring (head first), then its new
        # ids, then zeros (one pass instead of a slice, a concatenation and a cast per class)
        start = 0
        for c in range(self.num_classes):
            self.cls_qstart[c] = start
            self.cls_head[c], self.cls_tail[c] = 0, n_free[c] + add[c]
            start += self.cls_blocks[c]
        table = xp.asarray(np.asarray([self.cls_qstart, old_start, [max(z, 1) for z in old_size], old_head, n_free,
                                       add, first_new], dtype=np.int64))
        new_start, o_start, o_size, o_head, free_n, add_n, new_first = (table[i] for i in range(table.shape[0]))
        pos = xp.arange(start, dtype=np.int64)
        c = xp.searchsorted(new_start, pos, side="right") - 1
        off = pos - new_start[c]
        nf = free_n[c]
        queue = xp.where(off < nf + add_n[c], new_first[c] + (off - nf), 0)
        if self.queue is not None and self.queue.shape[0]:
            at = xp.where(off < nf, o_start[c] + (o_head[c] + off) % o_size[c], 0)
            queue = xp.where(off < nf, self.queue[at], queue)
        self._pool_array("queue", start, None, np.int32)   # its address kept where its buffer has room
        self.queue[...] = queue
        self._qdirty = True
        self._device_chunks()

    def _pop_plan(self, classes, need):
        """Per-class exclusive prefix sums of ``need`` (the pop offsets) and per-class totals (host)."""
        excl, totals = grouped_exclusive_sum(self.xp, classes, need, self.num_classes)
        return excl, [int(x) for x in backend.to_numpy(totals)]

    def _pop_blocks(self, classes, cexcl, need, totals):
        """The popped block ids, vertex by vertex (vertex ``i``'s ``need[i]`` blocks in a row): vertex
        ``i`` of class ``c`` takes ring entries ``head[c] + cexcl[i] + j`` (Figure 3)."""
        xp = self.xp
        bseg, j, _, total = _expand(xp, need)
        if total == 0:
            return xp.zeros(0, dtype=np.int32)
        qstart, qsize, qhead = self._queue_args(self.cls_head)
        c = classes[bseg].astype(np.int64)
        ids = self.queue[qstart[c] + (qhead[c] + cexcl[bseg] + j) % qsize[c]]
        self._advance_heads(totals)
        return ids

    def _advance_heads(self, totals, device: bool = False) -> None:
        """Heads += ``totals``; ``device``: the fused kernels advanced the device table's next parity."""
        for c, t in enumerate(totals):
            self.cls_head[c] += t
            self.stats["blocks_popped"] += t
        self._qdirty |= not device

    def _release_blocks(self, ids, classes, totals=None) -> None:
        """Clear ``ids`` (links, owner) and push them at their classes' tails, in array order.
        ``totals``: the blocks of each class, when the host knows them (no read-back then)."""
        xp = self.xp
        n = int(ids.shape[0])
        if n == 0:
            return
        self.block_left[ids] = EMPTY
        self.block_right[ids] = EMPTY
        self.block_owner[ids] = EMPTY
        known_totals = totals
        rank, totals = grouped_exclusive_sum(xp, classes, xp.ones(n, dtype=np.int64), self.num_classes)
        qstart, qsize, qtail = self._queue_args(self.cls_tail)
        c = classes.astype(np.int64)
        self.queue[qstart[c] + (qtail[c] + rank) % qsize[c]] = ids.astype(np.int32)
        self._advance_tails(backend.to_numpy(totals) if known_totals is None else known_totals)

    def _advance_tails(self, totals, device: bool = False) -> None:
        for c, t in enumerate(totals):
            self.cls_tail[c] += int(t)
            self.stats["blocks_pushed"] += int(t)
        self._qdirty |= not device

    def _queue_device(self):
        """The fused kernels' queue table, current parity: (qstart, qsize, qhead, qtail, the row, the next
        parity's row), views of one device array.  Uploaded (one host -> device copy) only when the host
        changed the table outside the fused kernels (a pool growth, the array program's pops and pushes)."""
        xp = self.xp
        c = self.num_classes
        if self._qstate is None or self._qstate.shape[1] != 4 * c:
            self._qstate = xp.zeros((2, 4 * c), dtype=np.int64)
            self._drop_graphs()
            rows = (self._qstate[0], self._qstate[1])
            self._qviews = [(r[:c], r[c:2 * c], r[2 * c:3 * c], r[3 * c:], r, rows[1 - p]) for p, r in enumerate(rows)]
            self._qdirty = True
        if self._qdirty:
            self._qstate[self._qpar] = xp.asarray(np.asarray(
                [self.cls_qstart, self.cls_blocks, self.cls_head, self.cls_tail], dtype=np.int64).reshape(-1))
            self._qdirty = False
        return self._qviews[self._qpar]

    def _queue_flip(self) -> None:
        """After a fused phase: its finish kernel wrote the next parity (the host advanced its counters)."""
        self._qpar ^= 1

    # =========================================================================
    # traversal (sections 4.5.1 bit strings, 4.5.2 / 4.6 traversal)
    # =========================================================================
    def locate_blocks(self, verts, k):
        """Block id of CBT index ``k`` of each vertex: from the root, follow the bits of ``k+1``
        below its leading one (0 = left child, 1 = right child), all pairs at once, one level per step."""
        xp = self.xp
        verts = xp.asarray(verts, dtype=np.int64)
        if self.fused:
            ks = xp.ascontiguousarray(xp.asarray(k, dtype=np.int64))
            out = xp.empty(verts.shape[0], dtype=np.int32)
            gk.launch(xp, "gv_locate", verts.shape[0], xp.ascontiguousarray(verts), ks,
                      gk.i64(verts.shape[0]), self.root_block, self.block_left, self.block_right, out)
            return out
        x = xp.asarray(k, dtype=np.int64) + 1
        node = self.root_block[verts].astype(np.int64)
        if x.shape[0] == 0:
            return node.astype(np.int32)
        depth = _floor_log2(xp, x)
        for step in range(int(depth.max())):
            active = depth > step
            bit = (x >> xp.maximum(depth - 1 - step, 0)) & 1
            safe = xp.maximum(node, 0)
            child = xp.where(bit == 1, self.block_right[safe], self.block_left[safe])
            node = xp.where(active, child, node)
        return node.astype(np.int32)

    def _block_tables(self, verts, total: int | None = None):
        """Every block of ``verts`` in CBT order: ``table[tstart[i] + k]`` is block ``k`` of ``verts[i]``.

        A level-order traversal from the roots over all the vertices at once:
        each step follows the left and right links of the current level.  ``total``: the
        number of blocks, when the host knows it.
        """
        xp = self.xp
        nbv = self.num_blocks[verts].astype(np.int64)
        ends = xp.cumsum(nbv)
        tstart = ends - nbv
        if total is None:
            total = int(ends[-1]) if nbv.shape[0] else 0
        if self.fused:
            table, _, _ = self._walk_fused(xp.asarray(verts, dtype=np.int64), 0, ends, total)
            return tstart, table
        table = xp.full(total, EMPTY, dtype=np.int32)
        seg = xp.nonzero(nbv > 0)[0]
        k = xp.zeros(seg.shape[0], dtype=np.int64)
        blk = self.root_block[verts[seg]]
        while seg.shape[0]:
            table[tstart[seg] + k] = blk
            lim = nbv[seg]
            kl, kr = 2 * k + 1, 2 * k + 2
            ml, mr = kl < lim, kr < lim
            seg = xp.concatenate([seg[ml], seg[mr]])
            blk = xp.concatenate([self.block_left[blk[ml]], self.block_right[blk[mr]]])
            k = xp.concatenate([kl[ml], kr[mr]])
        return tstart, table

    def _live_slots(self, verts, tstart, table, total: int | None = None):
        """(vertex index, position, pool slot) of every live edge of ``verts``, in position order.

        Positions ``0 .. edge_count-1`` are dense (the compaction invariant), so
        position ``p`` is entry ``p % size`` of the vertex's CBT block ``p // size``.
        ``total``: the number of edges, when the host knows it.
        """
        xp = self.xp
        seg, pos, _, total = _expand(xp, self.edge_count[verts], total)
        if total == 0:
            z = xp.zeros(0, dtype=np.int64)
            return z, z, z
        bs = self._sizes_of(self.block_class[verts])[seg]
        blk = table[tstart[seg] + pos // bs]
        return seg, pos, self._block_base(blk) + pos % bs

    def _find_slots(self, ukeys):
        """Pool slot of each edge key (sorted, distinct, live sources), -1 where absent.

        Walks the trees of the keys' source vertices and looks every live edge up
        in the sorted keys (searchsorted): no sort of the adjacency is needed.
        Returns the slot array and the gathered walk for reuse by compaction.
        (The array program's reference search; the fused path binary-searches the sorted
        rows in ``gv_query`` and scans them in ``gv_find``.)
        """
        xp = self.xp
        n = ukeys.shape[0]
        found = xp.full(n, -1, dtype=np.int64)
        src = ukeys >> 32
        first = xp.ones(n, dtype=bool)
        first[1:] = src[1:] != src[:-1]
        verts = src[first]
        verts = verts[self.edge_count[verts] > 0]
        tstart, table = self._block_tables(verts)
        # cheap prefilter: only entries whose column is some key's column are searched for
        wanted = xp.zeros(self.capacity, dtype=bool)
        kcol = ukeys & _LOW32
        wanted[kcol[kcol < self.capacity]] = True     # a column past the dictionary is no edge
        seg, pos, slot = self._live_slots(verts, tstart, table)
        cols = self.block_cols[slot]
        cand = xp.nonzero(wanted[cols])[0]
        key = _edge_keys(verts[seg[cand]], cols[cand])
        at = xp.minimum(xp.searchsorted(ukeys, key), n - 1)
        matched = ukeys[at] == key
        found[at[matched]] = slot[cand[matched]]
        hit = xp.zeros(slot.shape[0], dtype=bool)
        hit[cand[matched]] = True
        return found, (verts, tstart, table, seg, pos, slot, hit)

    # =========================================================================
    # re-homing: a vertex whose degree left its class gets a tree of the right class
    # =========================================================================
    def _evict(self, verts, sizes=None):
        """Take every edge of ``verts`` (sorted, distinct, live) out: their trees go back to the
        queues, their sentinels are reset.  Returns the edges ``(src, dst, weight)`` in position order.
        ``sizes``: ``(blocks, edges, blocks of each class)`` of ``verts``, when the host knows them
        (then nothing is read back)."""
        xp = self.xp
        blocks, edges, class_blocks = sizes if sizes is not None else (None, None, None)
        tstart, table = self._block_tables(verts, blocks)
        seg, _, slot = self._live_slots(verts, tstart, table, edges)
        src = verts[seg].astype(np.int64)
        dst = self.block_cols[slot].astype(np.int64)
        w = self.block_weights[slot].astype(WEIGHT_DTYPE)
        self.block_cols[slot] = EMPTY
        tseg, _, _, _ = _expand(xp, self.num_blocks[verts], blocks)
        self._release_blocks(table, self.block_class[verts][tseg], class_blocks)
        scatter_add(xp, self.in_degree, dst, xp.full(dst.shape[0], -1, dtype=np.int32))
        self._num_edges -= int(slot.shape[0])
        self._reset_sentinels(verts)
        return src, dst, w

    def _misplaced_mask(self, rows, counts, ok):
        """Device mask over ``rows`` (sorted, distinct where ``ok``) whose trees hold ``counts``
        edges after the batch but whose block class is ``REHOME_CLASSES`` or more away from those
        counts' class (or below the top class when the counts ask for it); None when classes do not
        apply.  No sync: the fused path reads it in the fetch it makes anyway."""
        xp = self.xp
        if self.num_classes <= 1 or not self._has_pool or rows.shape[0] == 0:
            return None
        cls = self.block_class[rows].astype(np.int64)
        want = self._class_of_count(counts)
        top = self.num_classes - 1                 # hubs go to the largest blocks without hysteresis
        return ok & (self.num_blocks[rows] > 0) & ((xp.abs(want - cls) >= REHOME_CLASSES)
                                                   | ((want == top) & (cls < top)))

    def _rehome(self, verts, src, dst, w):
        """Evict ``verts`` and insert their edges before the batch ``(src, dst, w)``; the batch's mask.
        (A delete's re-homing; an insert re-homes inside :meth:`_append` / the fused insert.)"""
        xp = self.xp
        self.stats["rehomed"] += int(verts.shape[0])
        es, ed, ew = self._evict(verts)
        mask = self._insert_arrays(xp.concatenate([es, src]), xp.concatenate([ed, dst]),
                                   xp.concatenate([ew, w]))
        return mask[es.shape[0]:]

    # =========================================================================
    # edge batches (section 4.5)
    # =========================================================================
    def _dedupe(self, src, dst):
        """Sorted distinct keys, the index of the last occurrence of each (its weight wins) and of
        the first (it is the one reported new)."""
        return dedupe_keys(self.xp, _edge_keys(src, dst))

    def _batch_sources(self, batch: CSRBatch):
        """The source of every edge of ``batch`` (int64), on CuPy without a device->host sync (the
        edge count is the length of ``cols``, so no total has to be read back)."""
        xp = self.xp
        n = int(batch.cols.shape[0])
        if xp is np or n == 0:
            return batch.sources().astype(np.int64)
        rows = xp.asarray(batch.rows).astype(np.int64)
        return rows[xp.searchsorted(xp.asarray(batch.offsets)[1:], xp.arange(n, dtype=np.int64), side="right")]

    def _batch_rows(self, batch: CSRBatch):
        """The batch's rows clipped into the dictionary, their edge counts (int64) and which were in it
        (a mask rather than a filter: a boolean filter costs CuPy a sync)."""
        xp = self.xp
        rows = xp.asarray(batch.rows).astype(np.int64)
        ok = (rows >= 0) & (rows < self.capacity)
        return xp.clip(rows, 0, max(self.capacity - 1, 0)), xp.diff(xp.asarray(batch.offsets).astype(np.int64)), ok

    def insert_edges(self, batch: CSRBatch):
        """Algorithm 1: dedupe (batch and graph), upsert weights, fill last blocks, then new blocks.

        Endpoints that are not live vertices are created (the event semantics).
        A vertex whose new count is two classes past its blocks' is re-homed in the
        same pass (its merged row goes into blocks of the right class).  Returns the
        per-edge mask, True where the edge was new.
        """
        return self.insert_edges_counted(batch)[0]

    def insert_edges_counted(self, batch: CSRBatch):
        """:meth:`insert_edges` and its number of new edges, which the fused path reads in its second
        sync anyway (None on the array program)."""
        self._new_count = None
        mask = self._insert_batch(batch)
        return mask, self._new_count

    def _insert_batch(self, batch: CSRBatch):
        xp = self.xp
        if self.fused and self.class_sizes is not None and batch.cols.shape[0]:
            if self._one_sync(batch):
                return self._insert_one_sync(batch)
            return self._insert_fused_batch(batch)
        src = self._batch_sources(batch)
        dst = xp.asarray(batch.cols).astype(np.int64)
        n = int(dst.shape[0])
        if n == 0:
            return xp.zeros(0, dtype=bool)
        w = (xp.asarray(batch.weights, dtype=WEIGHT_DTYPE) if batch.weights is not None
             else xp.ones(n, dtype=WEIGHT_DTYPE))
        return self._insert_arrays(src, dst, w)

    def _class_args(self):
        """Kernel arguments of the class rule: classes, target entries a block, re-homing distance."""
        return gk.i32(self.num_classes), gk.i64(self.target_blocks), gk.i64(REHOME_CLASSES)

    def _insert_arrays(self, src, dst, w):
        """Insert the edges ``(src[i], dst[i], w[i])`` (any order, repeats allowed): the mask.
        A vertex whose new count leaves its blocks' class ``REHOME_CLASSES`` behind is re-homed
        in the same pass (:meth:`_append`)."""
        xp = self.xp
        n = int(dst.shape[0])
        mask = xp.zeros(n, dtype=bool)
        if n == 0:
            return mask
        if self.fused and self.class_sizes is not None:
            return self._insert_fused(src, dst, w)         # it checks the ids in its first sync
        if int(src.min()) < 0 or int(dst.min()) < 0:
            raise ValueError("vertex ids must be >= 0")
        self._activate(xp.concatenate([src, dst]))
        ukeys, last, first = self._dedupe(src, dst)
        uw = w[last]
        if self.class_sizes is None:            # the paper's rule, from the first batch
            usrc = ukeys >> 32
            chg = xp.ones(usrc.shape[0], dtype=bool)
            chg[1:] = usrc[1:] != usrc[:-1]
            self._set_classes([self._choose_block_size(xp.diff(xp.nonzero(
                xp.concatenate([chg, xp.ones(1, dtype=bool)]))[0]))])
        walk = None
        if self._has_pool:
            found, walk = self._find_slots(ukeys)
        else:
            found = xp.full(ukeys.shape[0], -1, dtype=np.int64)
        # existing edges: weight update in place
        exists = found >= 0
        if self.block_weights is not None:
            self.block_weights[found[exists]] = uw[exists]
        new = ~exists
        mask[first[new]] = True
        nkeys, nw = ukeys[new], uw[new]
        if nkeys.shape[0]:
            self._append(nkeys, nw, walk)
        return mask

    def _append(self, keys, weights, walk=None) -> None:
        """Merge new edges (sorted keys, absent from the graph) into their vertices' sorted rows:
        blocks popped for all vertices at once by per-class prefix sums of their needs, then the new
        edges and the old ones that shift written at their ranks in the merged rows (old edges past
        the first new one shift right), so each row stays sorted by column (the query's binary
        search relies on it).  A vertex whose new count is misplaced in its blocks' class
        (:meth:`_misplaced_mask`) is re-homed here: its merged row goes whole into blocks popped from
        the class of its new count, and its old tree goes back to its class's queue, vertex by vertex
        in CBT order (what the fused insert does).  ``walk``: :meth:`_find_slots`' walk of a
        superset of the rows."""
        xp = self.xp
        src = keys >> 32
        starts = xp.ones(src.shape[0], dtype=bool)
        starts[1:] = src[1:] != src[:-1]
        start_idx = xp.nonzero(starts)[0]
        verts = src[start_idx]                                   # distinct, ascending
        add = xp.diff(xp.concatenate([start_idx, xp.asarray([src.shape[0]], dtype=start_idx.dtype)]))
        old_count = self.edge_count[verts]
        old_blocks = self.num_blocks[verts].astype(np.int64)
        new_count = old_count + add
        # the old rows of these vertices (each sorted, so their keys are sorted), read before any
        # block changes: positions, slots, keys and the CBT table of their blocks
        if walk is not None and walk[0].shape[0]:
            wverts, wtstart, table, wseg, wpos, wslot, _ = walk
            j = xp.minimum(xp.searchsorted(verts, wverts), verts.shape[0] - 1)
            in_batch = verts[j] == wverts                        # walked rows with new edges
            tstart = xp.zeros(verts.shape[0], dtype=np.int64)
            tstart[j[in_batch]] = wtstart[in_batch]
            keep = in_batch[wseg]
            oseg, opos, oslot = j[wseg[keep]], wpos[keep], wslot[keep]
        else:
            tstart, table = xp.zeros(verts.shape[0], dtype=np.int64), xp.zeros(0, dtype=np.int32)
            oseg = opos = oslot = xp.zeros(0, dtype=np.int64)
        okey = _edge_keys(verts[oseg], self.block_cols[oslot]) if oslot.shape[0] else oslot
        ow = self.block_weights[oslot] if oslot.shape[0] else xp.zeros(0, dtype=WEIGHT_DTYPE)
        # a vertex without blocks takes the class of its new count; the others keep theirs, but for
        # one whose new count is misplaced in it (re-homed: its merged row goes whole into new blocks
        # of the right class, its old tree back to the queue; ``old_blocks`` below is then the number
        # of old blocks the merged row keeps, 0)
        old_cls = self.block_class[verts].astype(np.int64)
        rehome = self._misplaced_mask(verts, new_count, old_blocks > 0)
        if rehome is None:
            rehome = xp.zeros(verts.shape[0], dtype=bool)
        cls = xp.where((old_blocks > 0) & ~rehome, old_cls, self._class_of_count(new_count))
        walked_blocks = old_blocks
        old_blocks = xp.where(rehome, 0, old_blocks)
        bs = self._sizes_of(cls)
        new_blocks = (new_count + bs - 1) // bs
        need = new_blocks - old_blocks
        # pop: vertex i takes its class ring's entries [cexcl_i, cexcl_i + need_i) after the head
        excl = xp.cumsum(need) - need                            # where its blocks sit in ``ids``
        cexcl, totals = self._pop_plan(cls, need)
        total = sum(totals)
        self._reserve(totals)
        ids = self._pop_blocks(cls, cexcl, need, totals)
        if total:
            bseg, j, _, _ = _expand(xp, need)
            k = old_blocks[bseg] + j                               # CBT index of each new block
            owner = verts[bseg]
            self.block_left[ids] = EMPTY
            self.block_right[ids] = EMPTY
            self.block_owner[ids] = owner.astype(np.int32)
            is_root = k == 0
            self.root_block[owner[is_root]] = ids[is_root]
            # link each non-root block under its parent (k-1)//2: a block popped in this batch,
            # or an old block found by the bit string of its index (section 4.5.1)
            child = ~is_root
            kc, oc, cseg, cid = k[child], owner[child], bseg[child], ids[child]
            kp = (kc - 1) // 2
            parent_new = kp >= old_blocks[cseg]
            parent = xp.empty(kc.shape[0], dtype=np.int32)
            parent[parent_new] = ids[excl[cseg[parent_new]] + kp[parent_new] - old_blocks[cseg[parent_new]]]
            old = ~parent_new
            if bool(old.any()):
                parent[old] = self.locate_blocks(oc[old], kp[old])
            odd = (kc % 2) == 1
            self.block_left[parent[odd]] = cid[odd]
            self.block_right[parent[~odd]] = cid[~odd]
        # the merged rows: an old edge moves right by the new keys below it; a new key goes after the
        # old edges below it and the new keys before it (two searches of sorted keys, no sort)
        oto = opos + xp.searchsorted(keys, okey) - start_idx[oseg]
        moved = (oto != opos) | rehome[oseg]                    # a re-homed row moves whole
        nseg = xp.searchsorted(verts, src)
        ostart = xp.searchsorted(okey, verts << 32)              # each old row's start in the walk
        nto = (xp.searchsorted(okey, keys) - ostart[nseg]
               + xp.arange(keys.shape[0], dtype=np.int64) - start_idx[nseg])
        seg = xp.concatenate([oseg[moved], nseg])
        p = xp.concatenate([oto[moved], nto])
        mcol = xp.concatenate([self.block_cols[oslot[moved]], (keys & _LOW32).astype(VERTEX_DTYPE)])
        mw = xp.concatenate([ow[moved].astype(WEIGHT_DTYPE), xp.asarray(weights, dtype=WEIGHT_DTYPE)])
        # position p of vertex v is entry p % bs of its CBT block p // bs (old table or popped)
        ebs = bs[seg]
        kb = p // ebs
        in_new = kb >= old_blocks[seg]
        # ``popped`` / ``table`` are never empty so the clipped gathers below are always valid
        popped = ids if total else xp.full(1, EMPTY, dtype=np.int32)
        last_popped = max(total - 1, 0)
        old_table = table if table.shape[0] else xp.full(1, EMPTY, dtype=np.int32)
        blk = xp.where(in_new,
                       popped[xp.clip(excl[seg] + kb - old_blocks[seg], 0, last_popped)],
                       old_table[xp.clip(tstart[seg] + kb, 0, old_table.shape[0] - 1)]).astype(np.int64)
        # a position inside the old row has the slot the walk found for it; the others are computed
        inside = (p < old_count[seg]) & ~rehome[seg]
        slot = xp.where(inside, oslot[xp.minimum(ostart[seg] + p, max(oslot.shape[0] - 1, 0))]
                        if oslot.shape[0] else 0, 0)
        out = ~inside
        slot[out] = self._block_base(blk[out]) + p[out] % ebs[out]
        gone = oslot[rehome[oseg]]                                # the re-homed rows' old entries
        self.block_cols[gone] = EMPTY
        self.block_cols[slot] = mcol
        self.block_weights[slot] = mw
        # sentinels: count, blocks, class, and where the latest insertion ended
        last_k = (new_count - 1) // bs
        last_new = last_k >= old_blocks
        last_id = xp.where(last_new,
                           popped[xp.clip(excl + last_k - old_blocks, 0, last_popped)],
                           self.last_block[verts])
        self.last_block[verts] = last_id.astype(np.int32)
        self.last_offset[verts] = (new_count - last_k * bs).astype(np.int32)
        self.edge_count[verts] = new_count
        self.num_blocks[verts] = new_blocks.astype(np.int32)
        self.block_class[verts] = cls.astype(np.int8)
        scatter_add(xp, self.in_degree, keys & _LOW32, xp.ones(keys.shape[0], dtype=np.int32))
        self._num_edges += int(keys.shape[0])
        # the re-homed vertices' old trees back to their classes' queues, vertex by vertex in CBT order
        moved_v = xp.nonzero(rehome)[0]
        n_moved = int(moved_v.shape[0])
        if n_moved:
            self.stats["rehomed"] += n_moved
            fseg, fk, _, _ = _expand(xp, walked_blocks[moved_v])
            self._release_blocks(table[tstart[moved_v][fseg] + fk], old_cls[moved_v][fseg])

    def delete_edges(self, batch: CSRBatch):
        """Algorithm 2 (traversal, all vertices of the batch at once), then compaction and block
        reclamation; a vertex left two classes below its blocks' is re-homed."""
        return self.delete_edges_counted(batch)[0]

    def delete_edges_counted(self, batch: CSRBatch):
        """:meth:`delete_edges` and its number of removed edges, which the fused path reads in its
        second sync anyway (None on the array program)."""
        self._removed_count = None
        mask = self._delete_batch(batch)
        return mask, self._removed_count

    def _delete_batch(self, batch: CSRBatch, queued=None):
        """``queued``: the one-sync delete's queue record and read (the combined edge phases), to finish."""
        xp = self.xp
        n = int(batch.cols.shape[0])
        if n == 0 or not self._has_pool:
            return xp.zeros(n, dtype=bool)
        if self.fused:
            # the re-homing check rides on its sync
            if queued is not None:
                mask, move = self._delete_one_sync_finish(batch, *queued)
            elif self._one_sync(batch):
                mask, move = self._delete_one_sync(batch)
            else:
                mask, move = self._delete_edges_fused(batch)
        else:
            src = self._batch_sources(batch)
            dst = xp.asarray(batch.cols).astype(np.int64)
            mask = xp.zeros(n, dtype=bool)
            ukeys, _, first = self._dedupe(src, dst)
            usrc = ukeys >> 32
            ok = self._live(usrc)
            removed = xp.zeros(ukeys.shape[0], dtype=bool)
            removed[ok] = self._delete_sorted_keys(ukeys[ok])
            mask[first] = removed
            rows, _, ok = self._batch_rows(batch)
            off = self._misplaced_mask(rows, self.edge_count[rows], ok)
            move = rows[off] if off is not None and bool(off.any()) else None
        if move is not None:
            z = xp.zeros(0, dtype=np.int64)
            self._rehome(move, z, z, xp.zeros(0, dtype=WEIGHT_DTYPE))
        return mask

    def _delete_sorted_keys(self, ukeys):
        """Delete the edges of sorted distinct keys (live sources); True where one was removed."""
        xp = self.xp
        if ukeys.shape[0] == 0:
            return xp.zeros(0, dtype=bool)
        if self.fused:
            return self._delete_keys_fused(ukeys)
        found, walk = self._find_slots(ukeys)
        hit_any = found >= 0
        verts, tstart, table, seg, pos, slot, dead = walk
        gone = self.block_cols[found[hit_any]].astype(np.int64)
        self._compact(verts, tstart, table, seg, pos, slot, dead)
        scatter_add(xp, self.in_degree, gone, xp.full(gone.shape[0], -1, dtype=np.int32))
        self._num_edges -= int(gone.shape[0])
        return hit_any

    def _compact(self, verts, tstart, table, seg, pos, slot, dead) -> None:
        """Close each vertex's holes keeping its order (the i-th survivor moves to position i), then
        free the blocks past the new end.

        Rows stay sorted by column (a query is a binary search).  Blocks with CBT
        index >= ceil(count/size) are the last ones of a complete tree: cutting them
        keeps it complete.
        """
        xp = self.xp
        nv = verts.shape[0]
        if nv == 0:
            return
        old_count = self.edge_count[verts]
        new_count = old_count - bincount(xp, seg[dead], nv)
        cls = self.block_class[verts].astype(np.int64)
        bs = self._sizes_of(cls)
        # survivor at position p moves to p - (deletions before it in its row): only those behind a hole
        before = xp.cumsum(dead) - dead
        before = before - before[xp.searchsorted(seg, seg, side="left")]
        move = ~dead & (before > 0)
        mslot = slot[move]
        # the target lies inside the row, whose slots the walk found: the entry ``before`` places back
        target = slot[xp.nonzero(move)[0] - before[move]]
        cols, ws = self.block_cols[mslot], self.block_weights[mslot]
        self.block_cols[slot[pos >= new_count[seg]]] = EMPTY
        self.block_cols[target] = cols
        self.block_weights[target] = ws
        # free the blocks past the new end and unlink them from surviving parents
        new_blocks = (new_count + bs - 1) // bs
        tseg, tk, _, _ = _expand(xp, self.num_blocks[verts])
        freed = tk >= new_blocks[tseg]
        cut = freed & (tk >= 1) & ((tk - 1) // 2 < new_blocks[tseg])
        parent = table[tstart[tseg[cut]] + (tk[cut] - 1) // 2]
        odd = (tk[cut] % 2) == 1
        self.block_left[parent[odd]] = EMPTY
        self.block_right[parent[~odd]] = EMPTY
        self._release_blocks(table[freed], cls[tseg[freed]])
        # sentinels
        has = new_blocks > 0
        last_k = xp.maximum(new_blocks - 1, 0)
        last_id = table[xp.minimum(tstart + last_k, max(int(table.shape[0]) - 1, 0))]
        self.root_block[verts[~has]] = EMPTY
        self.block_class[verts[~has]] = EMPTY
        self.last_block[verts] = xp.where(has, last_id, EMPTY).astype(np.int32)
        self.last_offset[verts] = xp.where(has, new_count - last_k * bs, 0).astype(np.int32)
        self.edge_count[verts] = new_count
        self.num_blocks[verts] = new_blocks.astype(np.int32)

    # =========================================================================
    # queries (section 4.6)
    # =========================================================================
    def _query_slots(self, src, dst):
        """Pool slot of each queried edge (any order, repeats allowed), -1 where absent."""
        xp = self.xp
        src = xp.asarray(src, dtype=np.int64)
        dst = xp.asarray(dst, dtype=np.int64)
        out = xp.full(src.shape[0], -1, dtype=np.int64)
        if src.shape[0] == 0 or not self._has_pool:
            return out
        ok = xp.nonzero(self._live(src))[0]
        ukeys, inverse = unique_inverse(xp, _edge_keys(src[ok], dst[ok]))
        if ukeys.shape[0] == 0:
            return out
        found, _ = self._find_slots(ukeys)
        out[ok] = found[inverse.reshape(-1)]
        return out

    def contains(self, src, dst):
        if self.fused:
            return self._query_fused(src, dst, False)[0]
        return self._query_slots(src, dst) >= 0

    def edge_weights(self, src, dst):
        xp = self.xp
        if self.fused:
            return self._query_fused(src, dst, True)[1]
        slot = self._query_slots(src, dst)
        out = xp.full(slot.shape[0], np.nan, dtype=np.float32)
        hit = slot >= 0
        if self.block_weights is not None:
            out[hit] = self.block_weights[slot[hit]]
        return out

    def degree(self, vertices=None):
        return self._per_vertex(self.edge_count, vertices)

    def adjacency(self, vertices=None) -> CSR:
        """CSR of the requested rows (in that order), each row in its CBT position order."""
        xp = self.xp
        if vertices is None:
            v = xp.arange(self.capacity, dtype=np.int64)
        else:
            v = xp.asarray(vertices, dtype=np.int64)
        if self.fused and self._has_pool and v.shape[0]:
            return self._adjacency_fused(v, whole=vertices is None)
        counts = self.degree(v)
        offsets = xp.zeros(v.shape[0] + 1, dtype=OFFSET_DTYPE)
        offsets[1:] = xp.cumsum(counts)
        if not self._has_pool or int(offsets[-1]) == 0:
            return CSR(offsets=offsets, cols=xp.zeros(0, dtype=VERTEX_DTYPE),
                       weights=xp.zeros(0, dtype=WEIGHT_DTYPE))
        rows = v[counts > 0]               # rows without edges walk no tree
        tstart, table = self._block_tables(rows)
        _, _, slot = self._live_slots(rows, tstart, table)
        return CSR(offsets=offsets, cols=self.block_cols[slot].astype(VERTEX_DTYPE),
                   weights=self.block_weights[slot].astype(WEIGHT_DTYPE))

    # =========================================================================
    # the fused GPU path (structures/graphvine_kernels.py): same state as the array program,
    # with the tree walks, searches and compaction inside kernels and two syncs a batch
    # =========================================================================
    def _fetch(self, *values):
        """Device scalars and small 1-d arrays -> one flat tuple of Python ints, in one transfer (one
        sync): the device values are joined by one ``concatenate`` (which promotes integer parts; a
        cast only for booleans), host ints pass through."""
        xp = self.xp
        parts, where = [], []
        for x in values:
            if isinstance(x, (int, np.integer)):
                where.append(int(x))
                continue
            x = x.reshape(-1)
            if x.dtype == np.bool_:
                x = x.astype(np.int64)
            parts.append(x)                  # integer parts: the concatenation promotes them
            where.append(("device", int(x.shape[0])))
        dev = backend.to_numpy(xp.concatenate(parts)).astype(np.int64).tolist() if parts else []
        out, at = [], 0
        for w in where:
            if isinstance(w, tuple):
                out += dev[at:at + w[1]]
                at += w[1]
            else:
                out.append(w)
        return tuple(int(v) for v in out)

    def _chunk_args(self):
        return (self._chunk_first_d, self._chunk_base_d, self._chunk_size_d, gk.i32(self._chunk_table.shape[1]))

    def _sorted_keys_fused(self, src, dst):
        """Sort the batch's keys (no sync): sorted keys, order, and the walk's segments (see
        :meth:`_key_blocks_fused`)."""
        xp = self.xp
        key = _edge_keys(src, dst)
        order = xp.argsort(key, kind="stable")
        sk = key[order]
        return (sk, order, *self._key_blocks_fused(sk))

    def _key_blocks_fused(self, sk):
        """Per first-of-source key (0 for the others and ids outside the dictionary): blocks, their
        prefix sum, live edges and their prefix sum (gv_key_blocks and two prefix sums)."""
        xp = self.xp
        n = int(sk.shape[0])
        nbv = xp.zeros((2, n), dtype=np.int64)
        if self.capacity:
            gk.launch(xp, "gv_key_blocks", n, sk, gk.i64(n), gk.i64(self.capacity), self.num_blocks,
                      self.edge_count, nbv[0], nbv[1])
        sums = xp.cumsum(nbv, axis=1)
        return nbv[0], sums[0], nbv[1], sums[1]

    def _dedupe_sorted_fused(self, sk, order):
        """Batch with repeated keys (one extra sync): distinct keys, last and first occurrence."""
        xp = self.xp
        change = sk[1:] != sk[:-1]
        start = xp.ones(sk.shape[0], dtype=bool)
        start[1:] = change
        end = xp.ones(sk.shape[0], dtype=bool)
        end[:-1] = change
        sidx, eidx = xp.nonzero(start)[0], xp.nonzero(end)[0]
        ukeys = sk[sidx]
        return (ukeys, order[eidx], order[sidx], *self._key_blocks_fused(ukeys))

    def _walk_fused(self, segs, shift, ends, total):
        """gv_walk: block k of every segment's tree, one thread per (segment, k)."""
        xp = self.xp
        table = xp.empty(total, dtype=np.int32)
        tidx = xp.empty(total, dtype=np.int64)
        tk = xp.empty(total, dtype=np.int64)
        gk.launch(xp, "gv_walk", total, xp.ascontiguousarray(segs), gk.i32(shift), ends,
                  gk.i64(ends.shape[0]), self.root_block, self.block_left, self.block_right,
                  gk.i64(total), table, tidx, tk)
        return table, tidx, tk

    def _walk_rows_fused(self, ukeys, ends, nbv, cnt, cnt_ends, total, live):
        """gv_walk + gv_fill_rows (the two-sync path): the keys' trees in CBT order (table, tidx, tk) and
        the slot and segment of every live entry of their rows (tslot, tseg).  (The one-sync path does
        both in gv_walk_fill; at 1e6 keys the two kernels measured less device time: run 2 of
        bench-results/2026-11-25-gv2.)"""
        xp = self.xp
        table, tidx, tk = self._walk_fused(ukeys, 32, ends, total)
        tslot = xp.empty(live, dtype=np.int64)
        tseg = xp.empty(live, dtype=np.int32)
        gk.launch(xp, "gv_fill_rows", gk.FILL_LANES * total, table, tidx, tk, gk.i64(total), ukeys, cnt, cnt_ends,
                  self.block_class, self._class_sizes_d, *self._chunk_args(), tslot, tseg)
        return table, tidx, tk, tslot, tseg

    def _find_run(self, ukeys, tseg, tslot, live, flag, delete_mode=False):
        """gv_find over every live edge of the keys' sources: the rows' copies ``(tcol, tw)``."""
        xp = self.xp
        nu = ukeys.shape[0]
        tcol = xp.empty(live, dtype=VERTEX_DTYPE)
        tw = xp.empty(live, dtype=WEIGHT_DTYPE)
        gk.launch(xp, "gv_find", live, tseg, tslot, ukeys, gk.i64(nu), self.block_cols, self.block_weights,
                  gk.i64(live), flag, tcol, tw, gk.i32(int(delete_mode)), gk.i32(int(delete_mode)), self.in_degree,
                  *self._ungated())
        return tcol, tw

    # -- the key-side path (keyside / keyside_small): gv_walk_keys, gv_rank, gv_stage, then a scatter ----------
    # Each takes its sizes as arguments, or (negative, the one-sync path) from the device, and a gate
    # ``(dsz, gate)``: ``self._ungated()`` or ``self._gated()``.
    def _walk_keys(self, ukeys, ends, nk: int, total: int, out, grid: int, gated) -> None:
        """gv_walk_keys: the keys' trees in CBT order into ``out = (table, tidx, tk, rmin)``, rmin reset."""
        gk.launch(self.xp, "gv_walk_keys", grid, ukeys, ends, gk.i64(nk), gk.i64(total), self.root_block,
                  self.block_left, self.block_right, *out, *gated)

    def _rank(self, ukeys, nk: int, nbv, ends, cnt, table, uw, mode: int, flag, rank, rmin, grid: int, gated):
        """gv_rank: each key's rank in its source's sorted row, the flags (insert: 0 for a key the row holds,
        which takes its new weight; delete: 1 for one found, in-degree dropped) and per vertex (at its first
        key) the least rank of its new / found keys."""
        gk.launch(self.xp, "gv_rank", grid, ukeys, gk.i64(nk), ends, nbv, cnt, table, self.block_class,
                  self._class_sizes_d, *self._chunk_args(), self.block_cols, self.block_weights, uw, gk.i32(mode),
                  flag, rank, rmin, self.in_degree, *gated)

    def _stage(self, walk, total: int, ukeys, cnt, cnt_ends, rmin, aux, mode: int, copies, grid: int, gated):
        """gv_stage: the changed suffix of every touched row copied aside into ``copies = (tcol, tw)``
        (indexed as the rows' live entries), the entries that leave the pool cleared."""
        table, tidx, tk = walk
        gk.launch(self.xp, "gv_stage", grid, table, tidx, tk, gk.i64(total), ukeys, cnt, cnt_ends, self.block_class,
                  self._class_sizes_d, *self._chunk_args(), rmin, aux, gk.i32(mode), self.block_cols,
                  self.block_weights, *copies, *gated)

    def _insert_scatter(self, walk, total: int, ukeys, nk: int, cnt, cnt_ends, rank, rmin, newc, isnew, uw, firsti,
                        mask, plan_rows, ends, nbv, qargs, copies, grid: int, gated, kslot=None) -> None:
        """gv_insert_scatter: the merged rows from the staged copies and the new keys (``firsti`` None: the
        keys are the batch's, the mask by key); ``qargs``: the queue table's ring starts, sizes and heads,
        then the plan's pop offsets (cexcl); ``kslot``: the new keys that gv_insert_shift writes (>= 0), left out."""
        table, tidx, tk = walk
        sfirst, _add, old_count, keep, cls, bs, _need, free, _oldc = plan_rows
        cexcl = qargs[3]
        gk.launch(self.xp, "gv_insert_scatter", grid, table, tidx, tk, gk.i64(total), ukeys, gk.i64(nk), cnt,
                  cnt_ends, self.block_class, self._class_sizes_d, *self._chunk_args(), rank, rmin, newc, isnew, uw,
                  newc if firsti is None else firsti, gk.i32(int(firsti is None)), mask, sfirst, old_count, keep,
                  cexcl, cls, bs, free, ends, nbv, self.queue, *qargs[:3], *copies, self.block_cols,
                  self.block_weights, self.in_degree, gk.i32(int(kslot is not None)),
                  kslot if kslot is not None else self.in_degree, *gated)     # (in_degree: int32, unread)

    def _delete_scatter(self, walk, total: int, ukeys, nk: int, cnt, cnt_ends, rank, rmin, foundc, ends, nbv, copies,
                        grid: int, gated) -> None:
        """gv_delete_scatter: each staged survivor into its compacted position."""
        table, tidx, tk = walk
        gk.launch(self.xp, "gv_delete_scatter", grid, table, tidx, tk, gk.i64(total), ukeys, gk.i64(nk), cnt,
                  cnt_ends, self.block_class, self._class_sizes_d, *self._chunk_args(), rank, rmin, foundc, ends,
                  nbv, *copies, self.block_cols, self.block_weights, *gated)

    def _tile_keys(self, table, total: int, ukeys, nk: int, cnt, cnt_ends, rank, live: int, mode: int, rows):
        """gv_tile_keys for the one-pass shifts: (tiles, the shift kernels' leading arguments - the walked blocks'
        entry bases, the entries and the tile size, each tile's first key and its first row's gallop start, the
        zeroed tile counter and flags -, the keys' flat positions, the rows' fields (gv_shift_row, 8 int32 each),
        and on an insert (mode 0) the slots of the new keys that the shift writes and the flat positions of the
        entries whose slots they take (kslot, kdst; -1 for the others)).  ``rows``: (rmin, ends, nb, cum, aux, bsz,
        keep), gv_tile_keys' inputs for the fields (bsz and keep are the insert's; the delete passes rmin in their
        place, unread)."""
        xp = self.xp
        tile = int(gk.SHIFT_TILE)
        assert 0 < tile <= gk.SHIFT_TILE_MAX
        ntiles = (live + tile - 1) // tile
        tile_key = xp.empty(ntiles + 1, dtype=np.int64)
        tile_h = xp.empty(ntiles + 1, dtype=np.int64)
        tbase = xp.empty(max(total, 1), dtype=np.int64)
        flags = xp.empty(ntiles + 1, dtype=np.uint32)
        kpos = xp.empty(max(nk, 1), dtype=np.int32)
        fields = xp.empty(8 * max(nk, 1), dtype=np.int32)
        # written on an insert only (32-bit slots: the one-pass path's pools are under SHIFT_POOL_ENTRIES); a
        # delete passes kpos in their place, unread
        kslot, kdst = ((xp.empty(max(nk, 1), dtype=np.int32), xp.empty(max(nk, 1), dtype=np.int32)) if mode == 0
                       else (kpos, kpos))
        gk.launch(xp, "gv_tile_keys", max(ntiles + 1, total, nk), cnt_ends, cnt, ukeys, rank, gk.i64(nk),
                  gk.i64(live), gk.i64(tile), gk.i32(mode), table, gk.i64(total), *self._chunk_args(), tile_key, tile_h,
                  tbase, flags, kpos, self.block_class, self._class_sizes_d, *rows, fields, kslot, kdst)
        return ntiles, (tbase, gk.i64(live), gk.i64(tile), tile_key, tile_h, flags), kpos, fields, (kslot, kdst)

    def _one_pass(self, nk: int, live: int, total: int) -> bool:
        """Whether a large key-side batch of ``nk`` keys over ``live`` entries in ``total`` walked blocks moves
        its rows' suffixes in one pass (gv_insert_shift / gv_delete_shift): ``shift="tiles"``, fewer keys than
        their tables hold (SHIFT_TABLE_KEYS), entries and blocks that their 32-bit fields hold (SHIFT_ENTRIES),
        and a pool whose slots they hold (SHIFT_POOL_ENTRIES; an insert checks again once its pops have grown
        the pool); else staged."""
        return (self.shift == "tiles" and nk < gk.SHIFT_TABLE_KEYS and live < gk.SHIFT_ENTRIES
                and total < gk.SHIFT_ENTRIES and self._pool_fits_shift())

    def _pool_fits_shift(self) -> bool:
        """Whether the pool's slots fit the one-pass shifts' 32-bit destinations (SHIFT_POOL_ENTRIES)."""
        return self.block_cols is None or int(self.block_cols.shape[0]) < gk.SHIFT_POOL_ENTRIES

    def _insert_shift(self, tiles, ukeys, uw, nk: int, cnt, cnt_ends, newc, cls, qargs, isnew) -> None:
        """gv_insert_shift: the changed suffixes moved right in place in one pass, with the new keys that take the
        slots of moved entries (the others go beside it, :meth:`_insert_scatter` with ``kslot``); ``tiles``:
        :meth:`_tile_keys`' result."""
        ntiles, tiles, kpos, fields, (kslot, kdst) = tiles
        gk.launch(self.xp, "gv_insert_shift", ntiles, *tiles, gk.i64(nk), cnt, cnt_ends, fields,
                  *self._chunk_args(), newc, qargs[3], cls, self.queue, *qargs[:3],
                  self.block_cols, self.block_weights, kpos, isnew, ukeys, uw, kslot, kdst)

    def _delete_shift(self, tiles, nk: int, cnt, cnt_ends, foundc, hit) -> None:
        """gv_delete_shift: the survivors of the changed suffixes moved left in place in one pass, the
        entries past the new counts cleared; ``tiles``: :meth:`_tile_keys`' result."""
        ntiles, tiles, kpos, fields, _keys = tiles
        gk.launch(self.xp, "gv_delete_shift", ntiles, *tiles, gk.i64(nk), cnt, cnt_ends, fields, foundc,
                  self.block_cols, self.block_weights, kpos, hit)

    @contextlib.contextmanager
    def _finish_beside(self, finish, beside: bool):
        """The launches of the ``with`` body, then ``finish()`` (gv_insert_finish / gv_delete_finish, an insert's
        after the scatter of the new keys that its shift does not write); with ``beside`` (a large one-pass batch)
        on CuPy, ``finish()`` goes first to the side stream (:meth:`_side`, of the highest priority), after
        everything the current stream has queued, and runs beside the body's launches (the shifts): the finish
        kernels write the tree links, the queue's tails and next parity and the vertices' fields, the scatter the
        batch's mask, the in-degrees and pool slots past the rows' old counts or in popped blocks, none of which
        the shifts read or write (gv_tile_keys, which reads the classes, is queued before).  The current stream
        waits for it after the body."""
        xp = self.xp
        if not (beside and hasattr(xp, "cuda")):
            yield
            finish()
            return
        main = xp.cuda.get_current_stream()
        side = self._side()
        side.wait_event(self._event(main))
        with side:
            finish()
        yield                                   # the body's launches, on the current stream
        main.wait_event(self._event(side))

    def _side(self):
        """The side stream (CuPy): the large batches' finish kernels beside the shifts, and reads beside the launches
        queued after what they read (:meth:`_read_io`'s ``after``)."""
        if self._side_stream is None:
            # the highest priority: launched beside a shift (whose blocks stay resident until every tile is done) and
            # ready with it, the side kernels' blocks are placed first instead of after the shift.  On an H100
            # (bench-results/2026-11-27-session23) gv_delete_finish on a stream of default priority ran after the
            # shift (call 3), with this one beside it (call 7); the delete took as long from gv_tile_keys' end to
            # the last kernel's either way (0.644 / 0.646 ms): during the shift the device has no time to spare
            try:
                self._side_stream = self.xp.cuda.Stream(non_blocking=True, priority=SIDE_PRIORITY)
            except TypeError:                    # a CuPy without stream priorities
                self._side_stream = self.xp.cuda.Stream(non_blocking=True)
        return self._side_stream

    def _mark(self):
        """An event after everything the current stream has queued (CuPy; None on NumPy): a later
        :meth:`_read_io` given it reads what those launches wrote, beside the launches queued since."""
        return None if self.xp is np else self._event(self.xp.cuda.get_current_stream())

    def _event(self, stream):
        """One of a ring of kept events (CuPy, no timing), recorded on ``stream``: creating one per record cost the
        host about 5 us.  An event is waited on right after its record (a wait takes the event's state when it is
        queued), so recording it again, :data:`EVENT_RING` records later, is safe."""
        if self._events is None:
            self._events = [self.xp.cuda.Event(disable_timing=True) for _ in range(EVENT_RING)]
            self._event_at = 0
        ev = self._events[self._event_at]
        self._event_at = (self._event_at + 1) % EVENT_RING
        ev.record(stream)
        return ev

    def _keyside_fused(self, ukeys, nbv, ends, cnt, total: int, uw, mode: int, flag, rows: int | None = None,
                       gated=None):
        """The two-sync path's walk and ranks: ((table, tidx, tk), rank, rmin).  ``rows``: the table's rows (default
        ``total``); a ``total`` of -1 is read on the device (:meth:`_ahead`); ``gated``: the kernels' (sizes, gate)
        (default :meth:`_ungated`)."""
        xp = self.xp
        nu = int(ukeys.shape[0])
        rows = total if rows is None else rows
        walk = (xp.empty(rows, dtype=np.int32), xp.empty(rows, dtype=np.int64), xp.empty(rows, dtype=np.int64))
        rank = xp.empty(nu, dtype=np.int64)
        rmin = xp.empty(nu, dtype=np.int64)
        gated = self._ungated() if gated is None else gated
        self._walk_keys(ukeys, ends, nu, total, (*walk, rmin), max(rows, nu), gated)
        self._rank(ukeys, nu, nbv, ends, cnt, walk[0], uw, mode, flag, rank, rmin, nu, gated)
        return walk, rank, rmin

    def _ahead(self, uw, mode: int):
        """The ``ahead`` of a large key-side batch's :meth:`_prep_fused` (insert: ``mode`` 0, ``uw`` its weights;
        delete: 1): every launch that needs only the keys, queued before sync 1 so that the device runs them while
        the host reads and works - gv_walk_keys and gv_rank, on an insert gv_activate, then the plan
        (:meth:`_insert_plan` / :meth:`_delete_plan`).  The blocks to walk are read on the device (io's BLOCKS) into
        a table of the pool's blocks (a bound the host knows: every walked block is one of them; its first blocks
        are the walked ones, and the kernels after the read take their count).  A batch out of order or with an id
        negative or past the dictionary (io's BAD and NEG) is sorted by the host after the read, so the kernels
        that change the structure (the ranks' upserted weights and in-degrees, the activation) take those two
        slots as their gate and do nothing; the plan's kernels change nothing but their outputs, and gv_prep gave
        such a batch's invalid edges key 0 (no read past the dictionary).  Returns ``ahead(keys, flag, nbv, ends,
        cnt) -> (((table, tidx, tk), rank, rmin), plan)``.  On an H100 the device was idle 0.05-0.08 ms after
        sync 1 while the host launched these, and 0.05 after the insert's sync 2
        (bench-results/2026-11-26-session22/call13-closing-timeline)."""

        def ahead(keys, flag, nbv, ends, cnt):
            gate = self._io_at(gk.IO_BAD)
            walked = self._keyside_fused(keys, nbv, ends, cnt, -1, uw, mode, flag, rows=max(self.pool_blocks, 1),
                                         gated=(self._io_at(gk.IO_BLOCKS), gate))
            if mode == 0:
                self._activate_fused(keys, gate)     # io's NEWV2 zeroed by the prep
                plan = self._insert_plan(keys, flag)
            else:
                plan = self._delete_plan(keys, nbv, cnt, flag)
            return walked, plan
        return ahead

    def _walks_ahead(self) -> bool:
        """Whether a large batch takes :meth:`_ahead`: on the key side, into a pool whose blocks' walk table fits
        :data:`AHEAD_TABLE_BYTES`."""
        return self.keyside and self._has_pool and WALK_ENTRY_BYTES * self.pool_blocks <= AHEAD_TABLE_BYTES

    def _activate_fused(self, ukeys, gate) -> None:
        """gv_activate: the keys' endpoints that are not live made live (empty sentinels), counted in io's NEWV2."""
        nu = int(ukeys.shape[0])
        gk.launch(self.xp, "gv_activate", nu, ukeys, gk.i64(nu), self.alive, self.edge_count, self.num_blocks,
                  self.root_block, self.last_block, self.last_offset, self.in_degree, self.block_class,
                  self._io_at(gk.IO_NEWV2), gate)

    def _copies(self, live: int):
        xp = self.xp
        return xp.empty(max(live, 1), dtype=VERTEX_DTYPE), xp.empty(max(live, 1), dtype=WEIGHT_DTYPE)

    # -- the io buffers: what the kernels report, read in one transfer per sync ---------------------------
    def _io_buffer(self):
        """The io buffers, allocated once: ``_io`` (the insert's, and every path's but the one-sync delete's)
        and ``_io_del`` (the one-sync delete's) side by side in one device array ``_io_all``, so that the
        combined edge phases read both in one transfer; on CuPy a pinned host mirror receives the reads."""
        if self._io is None:
            xp = self.xp
            self._io_all = xp.zeros(2 * gk.IO_SLOTS, dtype=np.int64)
            self._io, self._io_del = self._io_all[:gk.IO_SLOTS], self._io_all[gk.IO_SLOTS:]
            self._io_views = {}
            self._gate0 = xp.zeros(2, dtype=np.int64)
            if xp is not np:
                self._io_host = pinned_empty(xp, 2 * gk.IO_SLOTS, np.int64)
                # the raw addresses of _read_io's copy and _zero_io's memset: CuPy's pointer objects and slice
                # assignments cost the host 10-20 us each, where the large batches' device waits for the host
                self._io_addr = (int(self._io_all.data.ptr), int(self._io_host.ctypes.data))
            self._gaddr = None
        return self._io

    def _zero_io(self, lo: int, hi: int) -> None:
        """Slots ``[lo, hi)`` of the io buffers set to 0 (on CuPy one memset, queued)."""
        xp = self.xp
        if xp is np:
            self._io_all[lo:hi] = 0
            return
        xp.cuda.runtime.memsetAsync(self._io_addr[0] + 8 * lo, 0, 8 * (hi - lo), xp.cuda.get_current_stream().ptr)

    def _ungated(self):
        """(sizes, gate) of a kernel launched with its sizes as arguments, outside the one-sync path."""
        return self._io_at(gk.IO_BLOCKS), self._gate0

    def _io_at(self, slot: int):
        """``_io`` from ``slot`` on, a view kept once made: a CuPy slice costs the host about 5 us, and a large
        batch's launches take a dozen of them."""
        view = self._io_views.get(slot)
        if view is None:
            view = self._io_views[slot] = self._io[slot:]
        return view

    def _gated(self, io=None):
        """(sizes, gate) of the one-sync path: sizes from gv_prep_block, run only while the STOP and HOLD of
        ``io`` (default ``_io``; the one-sync delete's is ``_io_del``) are 0."""
        io = self._io if io is None else io
        return io[gk.IO_BLOCKS:], io[gk.IO_STOP:]

    def _read_io(self, lo: int, hi: int, after=None) -> list:
        """Slots ``[lo, hi)`` of the io buffers (``_io``, then ``_io_del`` from ``IO_SLOTS`` on) as Python ints:
        one device -> host transfer (a sync), no concatenation; on CuPy an asynchronous copy into the pinned
        mirror and a wait on the stream (what resolve's header read does).  ``after`` (an event of
        :meth:`_mark`): the copy goes on the side stream once the event has passed, so that the launches queued
        since (which must not write these slots) keep the device busy while the host waits and then works: the
        large batches' kernels that do not need the read's sizes (the walk, ranks, activation and plan before sync
        1, the one-pass tiles before the insert's sync 2)."""
        xp = self.xp
        if xp is np:
            return [int(v) for v in backend.to_numpy(self._io_all[lo:hi]).tolist()]
        stream = xp.cuda.get_current_stream()
        if after is not None:
            stream = self._side()
            stream.wait_event(after)
        dev, host = self._io_addr
        xp.cuda.runtime.memcpyAsync(host, dev + 8 * lo, 8 * (hi - lo), xp.cuda.runtime.memcpyDeviceToHost,
                                    stream.ptr)
        stream.synchronize()
        return self._io_host[:hi - lo].tolist()

    def _block_plan(self, nu: int) -> bool:
        """Whether a plan of ``nu`` keys runs in one block (gv_*_plan_block)."""
        return nu <= gk.BLOCK_KEYS and self.num_classes <= gk.MAX_CLASSES

    def _prep_fused(self, batch: CSRBatch, activate: bool, flag_init: int, ahead=None):
        """A CSR batch's keys (in order by CSRBatch's promise, which the kernel checks; no sort), the walk's
        segments and their running sums, the find's flags set to ``flag_init`` and (``activate``) the
        endpoints made live, then sync 1: (out-of-order keys, negative ids, largest id, blocks, live
        edges, vertices activated, whether the endpoints were activated).  A small batch: gv_prep_block,
        one launch; a large one: gv_prep (which fills the flags too) and the module's prefix sums
        (graphvine_kernels.scan_rows), then ``ahead(keys, flag, nbv, ends, cnt)`` (:meth:`_ahead`), whose
        launches run while the host reads.  Returns the sync's values, the arrays
        ``(keys, flag, nbv, ends, cnt, cnt_ends)`` and what ``ahead`` returned (None without it)."""
        xp = self.xp
        n = int(batch.cols.shape[0])
        rows = as_contiguous(xp, batch.rows, VERTEX_DTYPE)
        offsets = as_contiguous(xp, batch.offsets, np.int64)
        cols = as_contiguous(xp, batch.cols, VERTEX_DTYPE)
        io = self._io_buffer()
        keys = xp.empty(n, dtype=np.int64)
        if n <= gk.BLOCK_KEYS:
            seg = xp.empty((4, n), dtype=np.int64)
            flag = xp.empty(n, dtype=np.int8)
            gk.launch(xp, "gv_prep_block", n, rows, offsets, gk.i64(rows.shape[0]), cols, gk.i64(n),
                      gk.i64(self.capacity), self.num_blocks, self.edge_count, keys, seg, flag, gk.i32(flag_init),
                      gk.i32(int(activate)), self.alive, self.root_block, self.last_block, self.last_offset,
                      self.in_degree, self.block_class, self.num_blocks, io, gk.i64(-1), gk.i64(-1), gk.i64(n), io,
                      io)
            arrays = (keys, flag, seg[0], seg[1], seg[2], seg[3])
        else:
            seg, sums = xp.empty((2, n), dtype=np.int64), xp.empty((2, n), dtype=np.int64)
            flag = xp.empty(n, dtype=np.int8)
            self._zero_io(0, gk.IO_TOTALS)
            gk.launch(xp, "gv_prep", n, rows, offsets, gk.i64(rows.shape[0]), cols, gk.i64(n),
                      gk.i64(self.capacity), self.num_blocks, self.edge_count, keys, seg[0], seg[1], io, flag,
                      gk.i32(flag_init))
            gk.scan_rows(xp, seg, sums, self._io_at(gk.IO_BLOCKS))      # the totals: io's BLOCKS and LIVE
            arrays = (keys, flag, seg[0], sums[0], seg[1], sums[1])
            if ahead is not None:
                after = self._mark()
                walked = ahead(*arrays[:5])                     # queued before the read, which waits beside them
                return self._read_io(0, gk.IO_ACTIVATED + 1, after), arrays, walked          # sync 1
        return self._read_io(0, gk.IO_ACTIVATED + 1), arrays, None                     # sync 1

    # -- small batches: one device -> host read per phase ------------------------------------------------
    def _one_sync(self, batch: CSRBatch) -> bool:
        """Whether a batch takes the one-sync path: a small CSR batch (one-block prep and plan) into a pool
        that exists."""
        return (self._has_pool and int(batch.cols.shape[0]) <= gk.BLOCK_KEYS
                and self.num_classes <= gk.MAX_CLASSES)

    def _workspace(self):
        """The one-sync path's scratch, kept between batches (its sizes are known on the device only):
        (blocks, entries, table, tidx, tk, tslot, tseg, tcol, tw).  A batch whose rows do not fit stops
        after gv_prep_block; the host grows it and runs the batch again."""
        xp = self.xp
        wb, wl = self._ws_want
        if self._ws is None or self._ws[0] < wb or self._ws[1] < wl:
            self._drop_graphs()
            self._ws = (wb, wl, xp.empty(wb, dtype=np.int32), xp.empty(wb, dtype=np.int64),
                        xp.empty(wb, dtype=np.int64), xp.empty(wl, dtype=np.int64), xp.empty(wl, dtype=np.int32),
                        xp.empty(wl, dtype=VERTEX_DTYPE), xp.empty(wl, dtype=WEIGHT_DTYPE))
        return self._ws

    def _grid(self, n: int) -> int:
        """Launch size of a gated kernel whose size is on the device: the last batch's rounded up to a power
        of two, at least a full wave of the GPU (the grid-stride loops cover whatever is left; the rounding
        lets a CUDA graph captured for one batch serve the next ones)."""
        return max(pow2_at_least(n), gk.MIN_GRID)

    # -- the one-sync path as a CUDA graph: fixed buffers, the batch's size and arrays as device parameters --
    def _graph_mode(self) -> bool:
        """Whether this one-sync batch runs as a CUDA graph (``graphs``; after a first one-sync batch, which
        loads the kernels) or, with ``graphs="emulate"`` (tests), its launches run one by one on the same
        fixed buffers with the sizes on the device."""
        return bool(self.graphs) and (self.graphs == "emulate" or self.one_sync["batches"] > 0)

    def _graph_buffers(self, kind: str):
        """The graph path's fixed buffers of phase ``kind`` ("insert" or "delete": each phase its own, so that
        the combined edge phases queue both before one read), BLOCK_KEYS keys of room (rows ``gk.BLOCK_KEYS``
        apart): keys, seg (4 rows), flags, weights, ranks; the insert's plan (9 rows) / scan (3) / newc / mask;
        the delete's plan (5 rows) / foundc / chunk sums; and the phase's 8 device parameters (n, nrows, the
        batch's rows, offsets, cols and weights as addresses, the io buffer of a phase queued before it and
        that buffer's slot that stops it), both phases' in one device array with one pinned host copy."""
        if self._gbuf is None:
            xp = self.xp
            m = gk.BLOCK_KEYS
            prm = xp.zeros(16, dtype=np.int64)
            if xp is np:
                host = prm
            else:
                host = pinned_empty(xp, 16, np.int64)
                host[:] = 0
                self._cap_stream = xp.cuda.Stream(non_blocking=True)
            self._gbuf = {}
            for j, kind_j in enumerate(("insert", "delete")):
                b = {"keys": xp.empty(m, dtype=np.int64), "seg": xp.empty((4, m), dtype=np.int64),
                     "flag": xp.empty(m, dtype=np.int8), "w": xp.empty(m, dtype=WEIGHT_DTYPE),
                     "rank": xp.empty(m, dtype=np.int64), "rmin": xp.empty(m, dtype=np.int64),
                     "prm": prm[8 * j:8 * j + 8], "prm_host": host[8 * j:8 * j + 8], "prm_all": prm,
                     "prm_host_all": host}
                if kind_j == "insert":
                    b.update(plan=xp.empty((9, m), dtype=np.int64), scan=xp.empty((3, m), dtype=np.int64),
                             newc=xp.empty(m, dtype=np.int64), mask=xp.empty(m, dtype=bool))
                else:
                    b.update(dplan=xp.empty((5, m), dtype=np.int64), foundc=xp.empty(m, dtype=np.int64),
                             csum=xp.empty(((m + gk.SCAN_CHUNK - 1) // gk.SCAN_CHUNK, gk.MAX_CLASSES + 1),
                                           dtype=np.int64))
                for name in ("seg", "plan", "scan", "dplan"):
                    if name in b:
                        b[name + "_rows"] = tuple(b[name][i] for i in range(b[name].shape[0]))
                self._gbuf[kind_j] = b
        return self._gbuf[kind]

    def _graph_params(self, batch: CSRBatch, b, after=None, send: bool = True) -> tuple:
        """The batch's size and arrays into the device parameters of ``b``; ``after``: an io buffer whose STOP
        or re-homing slot, when set on the device, makes this phase stop at once (gv_prep_block; the combined
        edge phases' insert names the delete's).  ``send``: copy them to the device now (one host -> device
        copy; the combined phases send both phases' in one).  Returns the arrays (kept alive by the caller
        until its read)."""
        xp = self.xp
        rows = as_contiguous(xp, batch.rows, VERTEX_DTYPE)
        offsets = as_contiguous(xp, batch.offsets, np.int64)
        cols = as_contiguous(xp, batch.cols, VERTEX_DTYPE)
        w = None if batch.weights is None else as_contiguous(xp, batch.weights, WEIGHT_DTYPE)
        h = b["prm_host"]
        if xp is np:
            addr = [a.ctypes.data if a is not None else 0 for a in (rows, offsets, cols, w, after)]
        else:
            addr = [a.data.ptr if a is not None else 0 for a in (rows, offsets, cols, w, after)]
        h[0], h[1], h[2], h[3], h[4], h[5], h[6] = int(cols.shape[0]), int(rows.shape[0]), *addr
        h[7] = gk.IO_TOTALS + self.num_classes if after is not None else 0
        if send:
            self._send_params(b["prm"], h, 8)
        return rows, offsets, cols, w

    def _send_params(self, prm, host, slots: int) -> None:
        """``slots`` device parameters from their pinned host copy: one asynchronous host -> device copy."""
        if self.xp is not np:
            prm.data.copy_from_host_async(ctypes.c_void_p(host.ctypes.data), 8 * slots)
        count_launch("copy:gv_params")

    def _graph_addresses(self) -> tuple:
        """The workspace's sizes and the address of every array a captured graph names (part of its key),
        kept until :meth:`_drop_graphs`, which every reallocation of them calls (on the emulation, checked
        against a fresh computation at every use)."""
        on_np = self.xp is np

        def addr(a):
            return a.ctypes.data if on_np else a.data.ptr

        def fresh():
            ws = self._ws
            return (ws[0], ws[1],
                    *(addr(a) for a in (self.alive, self.edge_count, self.num_blocks, self.root_block, self.last_block,
                                        self.last_offset, self.in_degree, self.block_class, self.block_left,
                                        self.block_right, self.block_owner, self.block_cols, self.block_weights,
                                        self.queue, self._chunk_first_d, self._chunk_base_d, self._chunk_size_d,
                                        self._class_sizes_d, self._io_all, self._qstate, *ws[2:])))
        if self._gaddr is None:
            self._gaddr = fresh()
        elif self.graphs == "emulate":
            assert self._gaddr == fresh(), "an array a graph names was reallocated without _drop_graphs"
        return self._gaddr

    def _graph_run(self, kind: str, launches, out: dict) -> None:
        """``launches()`` (the phase's kernels on the fixed buffers; it fills ``out`` with what the host uses
        after the read) as a CUDA graph, captured once per argument set (the structure's arrays, the queue
        parity, the grids, the path) and replayed (one launch).  On NumPy (``graphs="emulate"``) the capture
        records the launches with their arguments and a replay runs the recording: what a graph bakes in is
        what a cache hit reruns, so a per-batch value left in an argument shows up there too."""
        xp = self.xp
        on_np = xp is np
        eb, el, ep = self._est
        grids = (self._grid(gk.WALK_LANES * eb), self._grid(gk.FILL_LANES * eb), self._grid(el),
                 self._grid(max(ep, gk.BLOCK_KEYS)), self._grid(max(eb, gk.BLOCK_KEYS)))
        key = (kind, self.keyside_small, self._qpar, self.capacity, self._chunk_table.shape[1], self.num_classes, grids,
               *self._graph_addresses())
        hit = self._graphs.get(key)
        if hit is None:
            if len(self._graphs) >= 16:
                self._graphs.clear()
            if on_np:
                recording, saved = [], gk.launcher
                gk.launcher = lambda _xp, name, n, args: recording.append((name, n, args))
                try:
                    launches()
                finally:
                    gk.launcher = saved
                g = recording
            else:
                try:
                    gk.preload(xp, gk.ONE_SYNC_KERNELS)      # compiled and loaded before the capture
                    stream = self._cap_stream
                    stream.begin_capture()
                    try:
                        with stream:
                            launches()
                    finally:
                        g = stream.end_capture()
                except Exception:                # no capture here: the launches go one by one from now on
                    self.graphs = False
                    self.one_sync["graph_failed"] = 1
                    launches()
                    return
            hit = self._graphs[key] = (g, dict(out))
            self.one_sync["graphs_captured"] += 1
        g, captured = hit
        out.update(captured)                      # the fixed buffers and the HOLD relaunch of that capture
        count_launch(f"graph:{kind}")
        if on_np:
            for name, n, args in g:
                gk.launcher(xp, name, n, args)
        else:
            g.launch(xp.cuda.get_current_stream())

    def _drop_graphs(self) -> None:
        """Forget the captured graphs and their arrays' addresses (the arrays they name were reallocated)."""
        self._graphs.clear()
        self._gaddr = None

    def _prep_one_sync(self, batch: CSRBatch, activate: bool, flag_init: int, b=None, uw=None, io=None):
        """gv_prep_block with the workspace's sizes (it stops the batch when its rows do not fit), then
        gv_walk_fill and gv_find (delete mode without ``activate``), or with ``keyside_small`` gv_walk_keys and
        gv_rank (the insert's weights ``uw``), all gated: no read.  ``b``: the graph path's fixed buffers (the
        batch from the device parameters, sizes on the device) or None; ``io``: the phase's io buffer (default
        ``_io``)."""
        xp = self.xp
        n = int(batch.cols.shape[0])
        io = self._io_buffer() if io is None else io
        wb, wl, table, tidx, tk, tslot, tseg, tcol, tw = self._workspace()
        if b is None:
            rows = xp.ascontiguousarray(batch.rows, dtype=VERTEX_DTYPE)
            keys = xp.empty(n, dtype=np.int64)
            seg = xp.empty((4, n), dtype=np.int64)
            flag = xp.empty(n, dtype=np.int8)
            nk, ps, inputs = n, n, (rows, xp.ascontiguousarray(batch.offsets, dtype=np.int64),
                                    gk.i64(rows.shape[0]), xp.ascontiguousarray(batch.cols, dtype=VERTEX_DTYPE))
            prm = wout = io
            segs = (seg[0], seg[1], seg[2], seg[3])
        else:
            keys, seg, flag, segs, prm, wout = b["keys"], b["seg"], b["flag"], b["seg_rows"], b["prm"], b["w"]
            nk, ps, inputs = -1, gk.BLOCK_KEYS, (io, io, gk.i64(-1), io)
        gk.launch(xp, "gv_prep_block", n, *inputs, gk.i64(nk), gk.i64(self.capacity), self.num_blocks,
                  self.edge_count, keys, seg, flag, gk.i32(flag_init), gk.i32(int(activate)), self.alive,
                  self.root_block, self.last_block, self.last_offset, self.in_degree, self.block_class, self.num_blocks,
                  io, gk.i64(wb), gk.i64(wl), gk.i64(ps), prm, wout)
        gated = self._gated(io)
        nbv, ends, cnt, cnt_ends = segs
        eb, el, _ = self._est
        if self.keyside_small:
            rank, rmin = (xp.empty(n, dtype=np.int64), xp.empty(n, dtype=np.int64)) if b is None else (b["rank"],
                                                                                                       b["rmin"])
            self._walk_keys(keys, ends, nk, -1, (table, tidx, tk, rmin), self._grid(max(eb, gk.BLOCK_KEYS)), gated)
            self._rank(keys, nk, nbv, ends, cnt, table, self.block_weights if uw is None else uw, int(not activate),
                       flag, rank, rmin, gk.BLOCK_KEYS, gated)
            return keys, flag, (nbv, ends, cnt, cnt_ends), (table, tidx, tk, rank, rmin, tcol, tw), nk, ps
        gk.launch(xp, "gv_walk_fill", self._grid(gk.WALK_LANES * eb), keys, ends, gk.i64(nk), gk.i64(-1),
                  self.root_block, self.block_left, self.block_right, cnt, cnt_ends, self.block_class,
                  self._class_sizes_d, *self._chunk_args(), table, tidx, tk, tslot, tseg, *gated)
        mode = gk.i32(int(not activate))
        gk.launch(xp, "gv_find", self._grid(el), tseg, tslot, keys, gk.i64(nk), self.block_cols, self.block_weights,
                  gk.i64(-1), flag, tcol, tw, mode, mode, self.in_degree, *gated)
        return keys, flag, (nbv, ends, cnt, cnt_ends), (table, tidx, tk, tslot, tseg, tcol, tw), nk, ps

    def _stopped(self, got, retry):
        """After a stopped one-sync batch: grow the workspace or the dictionary and ``retry()``, or None
        (the caller takes the two-sync path)."""
        blocks, live = got[gk.IO_BLOCKS], got[gk.IO_LIVE]
        wb, wl = self._ws_want
        if not (got[gk.IO_BAD] or got[gk.IO_NEG]) and (blocks > wb or live > wl):
            self._ws_want = (max(wb, blocks + blocks // 2), max(wl, live + live // 2))
            self.one_sync["workspace_grown"] += 1
            return retry()
        return None

    def _insert_one_sync(self, batch: CSRBatch):
        """The fused insert of a small CSR batch with one read: gv_prep_block (keys, sums, activation),
        gv_walk_fill, gv_find, gv_insert_plan_block, gv_insert_write, gv_insert_finish, all queued before
        the read (as one CUDA graph with ``graphs``), the later ones gated on the device (io's STOP / HOLD).
        The read then says whether the batch went through; if the pops may grow the pool (HOLD), the host
        reserves and launches the last two kernels after it; a batch out of order or with bad ids takes
        the two-sync path."""
        q = self._insert_one_sync_queue(batch, self._graph_buffers("insert") if self._graph_mode() else None)
        return self._insert_one_sync_finish(batch, q, self._read_io(0, q["read"]))         # the one sync

    def _insert_one_sync_queue(self, batch: CSRBatch, b, params=None) -> dict:
        """:meth:`_insert_one_sync`'s launches, queued: ``b`` the graph path's fixed buffers (the batch's device
        parameters already written when ``params``, the arrays they name, is given) or None.  Returns what
        the host side needs after the read (:meth:`_insert_one_sync_finish`)."""
        xp = self.xp
        n = int(batch.cols.shape[0])
        c = self.num_classes
        width = 2 * c + 2
        io = self._io_buffer()
        self._workspace()
        self._est = self._ests["insert"]
        qargs = self._queue_device()
        if b is not None and params is None:
            params = self._graph_params(batch, b)
        _eb, el, ep = self._est
        out = {}
        keyside = self.keyside_small

        def launches():
            if b is None:
                w = (xp.ascontiguousarray(batch.weights, dtype=WEIGHT_DTYPE) if batch.weights is not None
                     else xp.ones(n, dtype=WEIGHT_DTYPE))
            else:
                w = b["w"]                              # gv_prep_block copies the batch's weights there
            keys, isnew, (nbv, ends, cnt, cnt_ends), (table, tidx, tk, tslot, tseg, tcol, tw), nk, ps = \
                self._prep_one_sync(batch, activate=True, flag_init=1, b=b, uw=w)
            rank, rmin = tslot, tseg                    # with keyside_small: the ranks, the rows' first changes
            if b is None:
                plan = xp.empty((9, n), dtype=np.int64)
                scan = xp.empty((3, n), dtype=np.int64)
                newc = xp.empty(n, dtype=np.int64)
                plan_rows, scan_rows = plan, scan
                mask = xp.empty(n, dtype=bool)
            else:
                plan, scan, newc, mask = b["plan"], b["scan"], b["newc"], b["mask"]
                plan_rows, scan_rows = b["plan_rows"], b["scan_rows"]
            q4 = qargs[4]
            gk.launch(xp, "gv_insert_plan_block", n, keys, gk.i64(nk), isnew, newc, self.edge_count, self.num_blocks,
                      self.block_class, self._class_sizes_d, *self._class_args(), plan, gk.i64(ps), gk.i64(width),
                      *scan_rows, io, q4, gk.i32(1), io[gk.IO_STOP:])
            sfirst, add, old_count, keep, cls, bs, need, free, oldc = plan_rows
            cexcl, pexcl, needc = scan_rows

            def write_finish(sizes, queue_args, gate, nkeys):
                live, pop, ttotal, grid_w, grid_f, blocks, grid_l = sizes
                qs, qz, qh, qt, qq, qn = queue_args
                if keyside:
                    walk, copies, gated = (table, tidx, tk), (tcol, tw), (io[gk.IO_BLOCKS:], gate)
                    self._stage(walk, blocks, keys, cnt, cnt_ends, rmin, free, 0, copies, grid_l, gated)
                    self._insert_scatter(walk, blocks, keys, nkeys, cnt, cnt_ends, rank, rmin, newc, isnew, w, None,
                                         mask, plan_rows, ends, nbv, (qs, qz, qh, cexcl), copies,
                                         grid_l + gk.BLOCK_KEYS, gated)
                else:
                    gk.launch(xp, "gv_insert_write", grid_w, keys, gk.i64(nkeys), isnew, w, newc, sfirst, newc,
                              old_count, keep, cexcl, cls, bs, table, ends, nbv, cnt_ends, tcol, tw, gk.i64(live),
                              self.queue, qs, qz, qh, *self._chunk_args(), free, oldc, self._class_sizes_d, tseg,
                              tslot, self.block_cols, self.block_weights, self.in_degree, gk.i32(1), mask,
                              io[gk.IO_BLOCKS:], gate)
                gk.launch(xp, "gv_insert_finish", grid_f, keys, gk.i64(nkeys), need, needc, add, old_count, keep,
                          cexcl, cls, bs, self.queue, qs, qz, qh, gk.i64(pop), table, tidx, tk, gk.i64(ttotal), free,
                          pexcl, oldc, qt, self.block_left, self.block_right, self.block_owner, self.root_block,
                          self.last_block, self.last_offset, self.edge_count, self.num_blocks, self.block_class,
                          qq, qn, gk.i64(c), io[gk.IO_TOTALS:], io[gk.IO_BLOCKS:], gate)

            write_finish((-1, -1, -1, self._grid(el) + gk.BLOCK_KEYS, self._grid(max(ep, gk.BLOCK_KEYS)), -1,
                          self._grid(gk.FILL_LANES * _eb)), qargs, io[gk.IO_STOP:], nk)
            out.update(keys=keys, mask=mask, write_finish=write_finish)

        q = {"out": out, "n": n, "b": b, "params": params, "read": gk.IO_TOTALS + width}
        if b is None:
            launches()
        else:
            self._graph_run("insert", launches, out)
            q["mask"] = out["mask"][:n].copy()      # queued before the read: its launch overlaps the graph's run
        return q

    def _insert_one_sync_finish(self, batch: CSRBatch, q: dict, got: list):
        """:meth:`_insert_one_sync`'s host side after the read ``got`` (the insert's io slots): counters, queue
        table, a stopped batch run again or on the two-sync path, a held one reserved and finished."""
        out, n, b = q["out"], q["n"], q["b"]
        c = self.num_classes
        self._num_vertices += got[gk.IO_NEWV]
        self.one_sync["batches"] += 1
        if got[gk.IO_STOP]:
            self.one_sync["stopped"] += 1
            if got[gk.IO_NEG]:
                raise ValueError("vertex ids must be >= 0")
            if not got[gk.IO_BAD] and not got[gk.IO_ACTIVATED] and got[gk.IO_TOP] >= self.capacity:
                self._ensure_vertex_capacity(got[gk.IO_TOP])                                  # then again
                return self._insert_one_sync(batch)
            again = self._stopped(got, lambda: self._insert_one_sync(batch))
            return again if again is not None else self._insert_fused_batch(batch)
        blocks, live = got[gk.IO_BLOCKS], got[gk.IO_LIVE]
        new_edges, totals = got[gk.IO_COUNT], got[gk.IO_TOTALS:q["read"]]
        pops, pushes, pop, rehomed = totals[:c], totals[c:2 * c], totals[2 * c], totals[2 * c + 1]
        mask = q.get("mask")
        if got[gk.IO_HOLD]:                     # the host's growth rule, then the write and the finish
            self.one_sync["held"] += 1
            self._reserve(pops)
            ttotal = blocks if rehomed else 0
            out["write_finish"]((live, pop, ttotal, live + n, max(pop, n, ttotal), blocks, gk.FILL_LANES * blocks),
                                self._queue_device(), self._gate0, n)
            mask = None                         # the write came after the copy
        self._advance_heads(pops, device=True)
        self._advance_tails(pushes, device=True)
        self._queue_flip()
        self._est = self._ests["insert"] = (blocks, live, pop)
        self.stats["rehomed"] += rehomed
        self._num_edges += new_edges
        self._new_count = new_edges
        if b is None:
            return out["mask"]
        return mask if mask is not None else out["mask"][:n].copy()

    def _delete_one_sync(self, batch: CSRBatch):
        """The fused delete of a small CSR batch with one read: gv_prep_block, gv_walk_fill, gv_find,
        gv_delete_plan_block, gv_delete_move, gv_delete_finish, gated on the device (as one CUDA graph with
        ``graphs``), reporting into ``_io_del``.  (mask, vertices to re-home or None); a batch out of order or
        with bad ids takes the two-sync path."""
        q = self._delete_one_sync_queue(batch, self._graph_buffers("delete") if self._graph_mode() else None)
        return self._delete_one_sync_finish(batch, q, self._read_io(gk.IO_SLOTS, gk.IO_SLOTS + q["read"]))

    def _delete_one_sync_queue(self, batch: CSRBatch, b, params=None) -> dict:
        """:meth:`_delete_one_sync`'s launches, queued (``b``, ``params``: as :meth:`_insert_one_sync_queue`)."""
        xp = self.xp
        n = int(batch.cols.shape[0])
        c = self.num_classes
        width = c + 1
        self._io_buffer()
        io = self._io_del
        self._workspace()
        self._est = self._ests["delete"]
        qargs = self._queue_device()
        if b is not None and params is None:
            params = self._graph_params(batch, b)
        out = {}

        def launches():
            qstart, qsize, _qh, qtail, q4, qnext = qargs
            keys, hit, (nbv, ends, cnt, cnt_ends), (table, tidx, tk, tslot, tseg, tcol, tw), nk, ps = \
                self._prep_one_sync(batch, activate=False, flag_init=0, b=b, io=io)
            gated = self._gated(io)
            if b is None:
                dplan = xp.empty((5, n), dtype=np.int64)
                foundc = xp.empty(n, dtype=np.int64)
                csum = xp.empty(((n + gk.SCAN_CHUNK - 1) // gk.SCAN_CHUNK, width), dtype=np.int64)
                new_count, misplaced = dplan[0], dplan[4]
            else:
                dplan, foundc, csum = b["dplan"], b["foundc"], b["csum"]
                new_count, misplaced = b["dplan_rows"][0], b["dplan_rows"][4]
            gk.launch(xp, "gv_delete_plan_block", n, keys, gk.i64(nk), nbv, cnt, hit, foundc, self.block_class,
                      self._class_sizes_d, *self._class_args(), dplan, gk.i64(ps), gk.i64(width), csum, io, gated[1])
            eb, el, _ = self._est
            if self.keyside_small:                        # tslot, tseg: the ranks, the rows' first changes
                walk, copies, grid = (table, tidx, tk), (tcol, tw), self._grid(gk.FILL_LANES * eb)
                self._stage(walk, -1, keys, cnt, cnt_ends, tseg, new_count, 1, copies, grid, gated)
                self._delete_scatter(walk, -1, keys, nk, cnt, cnt_ends, tslot, tseg, foundc, ends, nbv, copies, grid,
                                     gated)
            else:
                gk.launch(xp, "gv_delete_move", self._grid(el), tseg, tslot, cnt, cnt_ends, keys, gk.i64(nk), foundc,
                          new_count, tcol, tw, gk.i64(-1), self.block_cols, self.block_weights, *gated)
            gk.launch(xp, "gv_delete_finish", self._grid(max(eb, gk.BLOCK_KEYS)), table, tidx, tk, dplan, csum,
                      gk.i64(width), gk.i64(c), keys, ends, nbv, gk.i64(nk), gk.i64(ps), gk.i64(-1),
                      self._class_sizes_d, self.queue, qstart, qsize, qtail, self.block_left, self.block_right,
                      self.block_owner, self.root_block, self.last_block, self.last_offset, self.edge_count,
                      self.num_blocks, self.block_class, q4, qnext, io[gk.IO_TOTALS:], *gated)
            out.update(keys=keys, hit=hit, misplaced=misplaced)

        q = {"out": out, "n": n, "b": b, "params": params, "read": gk.IO_TOTALS + width}
        if b is None:
            launches()
        else:
            self._graph_run("delete", launches, out)
            q["mask"] = out["hit"][:n].view(bool).copy()      # queued before the read, as the insert's
        return q

    def _delete_one_sync_finish(self, batch: CSRBatch, q: dict, got: list):
        """:meth:`_delete_one_sync`'s host side after the read ``got`` (the delete's io slots)."""
        out, n, b = q["out"], q["n"], q["b"]
        self.one_sync["batches"] += 1
        if got[gk.IO_STOP]:
            self.one_sync["stopped"] += 1
            again = self._stopped(got, lambda: self._delete_one_sync(batch))
            return again if again is not None else self._delete_edges_fused(batch)
        n_removed, ftotals = got[gk.IO_COUNT], got[gk.IO_TOTALS:q["read"]]
        has_move = ftotals.pop()
        self._advance_tails(ftotals, device=True)
        self._queue_flip()
        self._est = self._ests["delete"] = (got[gk.IO_BLOCKS], got[gk.IO_LIVE], self._ests["delete"][2])
        self._num_edges -= n_removed
        self._removed_count = n_removed
        keys, hit, misplaced = out["keys"], out["hit"], out["misplaced"]
        move = None
        if has_move:
            move = (keys[:n] >> 32)[misplaced[:n] > 0]
        return (hit.view(bool) if b is None else q["mask"]), move

    # -- both edge phases behind one read -----------------------------------------------------------------
    @property
    def combined_edge_phases(self) -> bool:
        """Whether :meth:`edge_phases_counted` saves a read (the fused path with its CUDA graphs, or their
        emulation); the pipeline then calls it, timed as one ``edges`` phase."""
        return bool(self.fused and self.graphs)

    def edge_phases_counted(self, inserts: CSRBatch, deletes: CSRBatch):
        """:meth:`DynamicGraph.edge_phases_counted`, the same state block for block.

        Two small batches on the CUDA graph path: ONE read instead of two.  Both phases' device parameters
        go up in one copy, the delete's graph (reporting into ``_io_del``, on its own fixed buffers) and the
        insert's (on the queue table's parity that the delete's gv_delete_finish writes) are queued back to
        back, then both io buffers come back in one transfer.  The insert's gv_prep_block first reads the
        delete's io: where the delete stopped (the host runs it again, or on the two-sync path) or left
        vertices to re-home (the host does that after it), the insert does nothing but stop, and runs after
        the delete's host side, as the two phases one after the other do.  Otherwise the read finishes the
        delete's host side, then the insert's (a held insert is finished after it, as alone)."""
        kd, ki = int(deletes.cols.shape[0]), int(inserts.cols.shape[0])
        if not (kd and ki and self.fused and self.graphs and self._one_sync(deletes) and self._one_sync(inserts)
                and self._graph_mode()):
            return super().edge_phases_counted(inserts, deletes)
        bd, bi = self._graph_buffers("delete"), self._graph_buffers("insert")
        self._io_buffer()
        pd = self._graph_params(deletes, bd, send=False)
        pi = self._graph_params(inserts, bi, after=self._io_del, send=False)
        self._send_params(bi["prm_all"], bi["prm_host_all"], 16)
        qd = self._delete_one_sync_queue(deletes, bd, pd)
        self._qpar ^= 1                      # the parity the delete's finish writes on the device
        try:
            qi = self._insert_one_sync_queue(inserts, bi, pi)
        finally:
            self._qpar ^= 1
        got = self._read_io(0, gk.IO_SLOTS + qd["read"])                                  # the one read
        dgot = got[gk.IO_SLOTS:]
        self.combined_phases["one_read"] += 1
        self._removed_count = None
        deleted = self._delete_batch(deletes, queued=(qd, dgot))
        n_gone = self._removed_count
        self._new_count = None
        if dgot[gk.IO_STOP] or dgot[gk.IO_TOTALS + self.num_classes]:
            self.combined_phases["insert_after"] += 1                # the insert stopped at once: now
            inserted = self._insert_batch(inserts)
        else:
            inserted = self._insert_one_sync_finish(inserts, qi, got[:qi["read"]])
        return inserted, self._new_count, deleted, n_gone

    def _insert_fused_batch(self, batch: CSRBatch):
        """The fused insert of a CSR batch whose keys are distinct and in order (the common case:
        no sort, no dedupe, 2 syncs); any other batch takes :meth:`_insert_fused`."""
        xp = self.xp
        n = int(batch.cols.shape[0])
        w = (as_contiguous(xp, batch.weights, WEIGHT_DTYPE) if batch.weights is not None
             else xp.ones(n, dtype=WEIGHT_DTYPE))
        ahead = self._ahead(w, 0) if self._walks_ahead() else None
        (bad, neg, top, total, live, newv, activated), (keys, isnew, nbv, ends, _cnt, cnt_ends), early = \
            self._prep_fused(batch, activate=True, flag_init=1, ahead=ahead)
        self._num_vertices += newv
        if neg:
            raise ValueError("vertex ids must be >= 0")
        if bad:
            src = self._batch_sources(batch)
            return self._insert_fused(src, xp.asarray(batch.cols).astype(np.int64), w)
        return self._insert_keys_fused(keys, w, None, (nbv, ends, _cnt, cnt_ends, total, live), top, n,
                                       isnew=isnew, activated=bool(activated), early=early)

    def _insert_fused(self, src, dst, w):
        """Algorithm 1 with the fused kernels on any edges (sorted here), re-homing included: 2 syncs
        (3 when the batch repeats a key)."""
        xp = self.xp
        n = int(dst.shape[0])
        sk, order, nbv, ends, _cnt, cnt_ends = self._sorted_keys_fused(src, dst)
        dup = (sk[1:] == sk[:-1]).any() if n > 1 else xp.zeros((), dtype=bool)
        lo_src, lo_dst, top, has_dup, total, live = self._fetch(    # sync 1 (sizes, checks)
            src.min(), dst.min(), xp.maximum(src.max(), dst.max()), dup, ends[-1:], cnt_ends[-1:])
        if lo_src < 0 or lo_dst < 0:
            raise ValueError("vertex ids must be >= 0")
        if has_dup:
            ukeys, last, firsti, nbv, ends, _cnt, cnt_ends = self._dedupe_sorted_fused(sk, order)
        else:
            ukeys, last, firsti = sk, order, order
        return self._insert_keys_fused(xp.ascontiguousarray(ukeys), xp.ascontiguousarray(w[last]),
                                       xp.ascontiguousarray(firsti), (nbv, ends, _cnt, cnt_ends, total, live),
                                       top, n)

    def _insert_keys_fused(self, ukeys, uw, firsti, plan, top, n, isnew=None, activated=False, early=None):
        """Insert sorted distinct keys with weights ``uw``; ``firsti``: each key's index in the batch's
        mask of ``n`` entries (None: the keys are the batch); ``plan``: the walk's segments and sizes;
        ``isnew``: the find's flags, already set to 1; ``activated``: the endpoints are live already;
        ``early``: the key side's walk, ranks, activation and plan, launched before sync 1 (:meth:`_ahead`; the
        vertices activated are counted in io's NEWV2)."""
        xp = self.xp
        nbv, ends, cnt, cnt_ends, total, live = plan
        nu = int(ukeys.shape[0])
        self._io_buffer()                                # (allocated once: the kernels below report into it)
        walked, planned = early if early is not None else (None, None)
        counted = early is not None or not activated          # NEWV2 counts the vertices activated
        if early is None and not activated:
            self._ensure_vertex_capacity(top)
            self._zero_io(gk.IO_NEWV2, gk.IO_NEWV2 + 1)
            self._activate_fused(ukeys, self._gate0)
        if isnew is None:
            isnew = xp.ones(nu, dtype=np.int8)           # gv_find / gv_rank mark the keys that exist with 0
        keyside = self.keyside
        if live and keyside:
            (table, tidx, tk), rank, rmin = (walked if walked is not None else
                                             self._keyside_fused(ukeys, nbv, ends, cnt, total, uw, 0, isnew))
        elif live:
            table, tidx, tk, tslot, tseg = self._walk_rows_fused(ukeys, ends, nbv, cnt, cnt_ends, total, live)
            tcol, tw = self._find_run(ukeys, tseg, tslot, live, isnew)
        else:
            table, tcol, tw, tseg = (xp.zeros(1, dtype=np.int32), xp.zeros(1, dtype=VERTEX_DTYPE),
                                     xp.zeros(1, dtype=WEIGHT_DTYPE), xp.zeros(1, dtype=np.int32))
            tidx = tk = tslot = xp.zeros(1, dtype=np.int64)
            total = 0
            rank = rmin = xp.zeros(nu, dtype=np.int64)   # no rows: every key new, at rank 0
        # the plan: per vertex (at its first key) the new edges, class, blocks to pop and to push
        # back (a re-homed tree), their per-class offsets
        (sfirst, add, old_count, keep, cls, bs, need, free, oldc), cexcl, pexcl, needc, newc = \
            planned if planned is not None else self._insert_plan(ukeys, isnew)
        one_pass = keyside and self._one_pass(nu, live, total)
        # the one-pass shift's tiles and row fields need only the walk and the plan: queued before the read, the
        # device builds them while the host waits (the pool's growth after the read moves no walked block)
        # the read waits beside them (_read_io's after)
        after = self._mark() if one_pass and live else None
        tiles = (self._tile_keys(table, total, ukeys, nu, cnt, cnt_ends, rank, live, 0,
                                 (rmin, ends, nbv, newc, free, bs, keep)) if one_pass and live else None)
        c = self.num_classes
        got = self._read_io(gk.IO_NEWV2, gk.IO_TOTALS + 2 * c + 2, after)                 # sync 2
        newv, new_edges, totals = got[0], got[gk.IO_COUNT - gk.IO_NEWV2], got[gk.IO_TOTALS - gk.IO_NEWV2:]
        if counted:
            self._num_vertices += newv
        pops, pushes, pop, rehomed = totals[:c], totals[c:2 * c], totals[2 * c], totals[2 * c + 1]
        self._reserve(pops)
        one_pass = one_pass and self._pool_fits_shift()      # (its tiles, queued before the growth, go unused)
        qstart, qsize, qhead, qtail, q4, qnext = self._queue_device()
        # every entry of the mask is written when the keys are the batch's (firsti None)
        mask = xp.empty(n, dtype=bool) if firsti is None else xp.zeros(n, dtype=bool)

        walk, ungated = (table, tidx, tk), self._ungated()
        plan_rows = (sfirst, add, old_count, keep, cls, bs, need, free, oldc)
        qargs = (qstart, qsize, qhead, cexcl)
        # one pass over old entries: the shift writes the new keys that take moved entries' slots; the others (past
        # the old counts, in popped blocks: slots no tile reads), the mask and the in-degrees go beside it, with the
        # finish.  Session 23 wrote every new key after the shift (0.165 ms on an H100, R-MAT 22, 1e6 edges), and
        # tried their slots beside the shift with only their writes after it: the shift slowed by as much (call 7 of
        # bench-results/2026-11-27-session23).  Now (session 24, call 3) the shift takes 0.71 ms alone against 0.66
        # and the rest of the scatter 0.064 ms after it; beside it, the two end 0.76 ms after gv_tile_keys against
        # 0.83 before
        in_shift = one_pass and live > 0

        def new_keys(kslot=None):               # one pass: gv_insert_scatter over the keys only (no staged rows)
            self._insert_scatter(walk, 0, ukeys, nu, cnt, cnt_ends, rank, rmin, newc, isnew, uw, firsti, mask,
                                 plan_rows, ends, nbv, qargs, self._copies(0), nu, ungated, kslot=kslot)

        def finish():
            if in_shift:
                new_keys(kslot=tiles[4][0])     # those the shift does not write
            gk.launch(xp, "gv_insert_finish", max(pop, nu, total if rehomed else 0), ukeys, gk.i64(nu), need,
                      needc, add, old_count, keep, cexcl, cls, bs, self.queue, qstart, qsize, qhead, gk.i64(pop),
                      table, tidx, tk, gk.i64(total if rehomed else 0), free, pexcl, oldc, qtail,
                      self.block_left, self.block_right, self.block_owner, self.root_block,
                      self.last_block, self.last_offset, self.edge_count, self.num_blocks, self.block_class,
                      q4, qnext, gk.i64(c), self._io_at(gk.IO_TOTALS), *ungated)

        # the finish beside the shift in one pass (_finish_beside), else after the writes
        with self._finish_beside(finish, one_pass):
            if in_shift:
                self._insert_shift(tiles, ukeys, uw, nu, cnt, cnt_ends, newc, cls, qargs, isnew)
            elif one_pass:                      # no old entries: every key new, into popped blocks
                new_keys()
            elif keyside:
                copies = self._copies(live)
                self._stage(walk, total, ukeys, cnt, cnt_ends, rmin, free, 0, copies, gk.FILL_LANES * total, ungated)
                self._insert_scatter(walk, total, ukeys, nu, cnt, cnt_ends, rank, rmin, newc, isnew, uw, firsti, mask,
                                     plan_rows, ends, nbv, qargs, copies, gk.FILL_LANES * total + nu, ungated)
            else:
                gk.launch(xp, "gv_insert_write", live + nu, ukeys, gk.i64(nu), isnew, uw,
                          newc if firsti is None else firsti, sfirst, newc, old_count, keep, cexcl, cls, bs,
                          table, ends, nbv, cnt_ends, tcol, tw, gk.i64(live), self.queue, qstart, qsize, qhead,
                          *self._chunk_args(), free, oldc, self._class_sizes_d, tseg, tslot, self.block_cols,
                          self.block_weights, self.in_degree, gk.i32(int(firsti is None)), mask, *ungated)
        self._advance_heads(pops, device=True)
        self._advance_tails(pushes, device=True)
        self._queue_flip()
        self.stats["rehomed"] += rehomed
        self._num_edges += new_edges
        self._new_count = new_edges                    # distinct new keys: the mask's True entries
        return mask

    def _chunk_sums(self, nu: int, width: int):
        """Zeroed per-chunk column sums of a plan (gv_cell): ``ceil(nu / SCAN_CHUNK)`` rows."""
        return self.xp.zeros(((nu + gk.SCAN_CHUNK - 1) // gk.SCAN_CHUNK, width), dtype=np.int64)

    def _insert_plan(self, ukeys, isnew):
        """The inclusive count of the new keys (newc), gv_insert_plan's rows (sfirst, add, old_count,
        kept old blocks, class, block size, need, free, old class), the per-class offsets cexcl / pexcl /
        needc (by chunk sums), and into io the new edges and the column totals (pops per class, pushes
        per class, all pops, re-homed vertices).  Small batches: gv_insert_plan_block, one launch; large
        ones: the module's prefix sums (scan_rows, scan_columns), gv_insert_plan and gv_plan_scan."""
        xp = self.xp
        nu = int(ukeys.shape[0])
        c = self.num_classes
        width = 2 * c + 2
        io = self._io
        plan = xp.empty((9, nu), dtype=np.int64)
        scan = xp.empty((3, nu), dtype=np.int64)
        if self._block_plan(nu):
            newc = xp.empty(nu, dtype=np.int64)
            qdev = self._queue_device()
            gk.launch(xp, "gv_insert_plan_block", nu, ukeys, gk.i64(nu), isnew, newc, self.edge_count,
                      self.num_blocks, self.block_class, self._class_sizes_d, *self._class_args(), plan, gk.i64(nu),
                      gk.i64(width), scan[0], scan[1], scan[2], io, qdev[4], gk.i32(0), self._gate0)
            return plan, scan[0], scan[1], scan[2], newc
        newc = xp.empty(nu, dtype=np.int64)
        gk.scan_rows(xp, isnew, newc, self._io_at(gk.IO_COUNT))
        csum = self._chunk_sums(nu, width)
        gk.launch(xp, "gv_insert_plan", nu, ukeys, gk.i64(nu), newc, self.edge_count, self.num_blocks,
                  self.block_class, self._class_sizes_d, *self._class_args(), plan, gk.i64(width), csum)
        gk.scan_columns(xp, csum, self._io_at(gk.IO_TOTALS))
        gk.launch(xp, "gv_plan_scan", nu, plan, gk.i64(nu), gk.i64(c), gk.i64(width), csum,
                  scan[0], scan[1], scan[2])
        return plan, scan[0], scan[1], scan[2], newc

    def _delete_edges_fused(self, batch: CSRBatch):
        """The fused delete of a CSR batch: its keys in order (gv_prep; sorted here only when the batch
        breaks CSRBatch's promise), then :meth:`_delete_keys_fused`.  (mask, vertices to re-home)."""
        xp = self.xp
        n = int(batch.cols.shape[0])
        ahead = self._ahead(self.block_weights, 1) if self._walks_ahead() else None
        (bad, _neg, _top, total, live, _, _), (keys, hit, nbv, ends, cnt, cnt_ends), early = \
            self._prep_fused(batch, activate=False, flag_init=0, ahead=ahead)
        if not bad:
            return self._delete_keys_fused(keys, (nbv, ends, cnt, cnt_ends, total, live), rehome_check=True,
                                           hit=hit, early=early)
        src = self._batch_sources(batch)
        dst = xp.asarray(batch.cols).astype(np.int64)
        sk, order, nbv, ends, cnt, cnt_ends = self._sorted_keys_fused(src, dst)
        dup = (sk[1:] == sk[:-1]).any() if n > 1 else xp.zeros((), dtype=bool)
        has_dup, total, live = self._fetch(dup, ends[-1:], cnt_ends[-1:])   # the table size
        if has_dup:
            ukeys, _, firsti, nbv, ends, cnt, cnt_ends = self._dedupe_sorted_fused(sk, order)
        else:
            ukeys, firsti = sk, order
        removed, move = self._delete_keys_fused(xp.ascontiguousarray(ukeys),
                                                (nbv, ends, cnt, cnt_ends, total, live), rehome_check=True)
        mask = xp.zeros(n, dtype=bool)
        mask[firsti] = removed
        return mask, move

    def _delete_keys_fused(self, ukeys, plan=None, rehome_check=False, hit=None, early=None):
        """Delete sorted distinct keys: find, compact, free emptied blocks; True where one was removed.

        Passes over the touched rows' live entries: gv_walk_fill (list), gv_find (copy + search) and
        gv_delete_move; the other kernels run over the keys or the walked blocks.  With ``rehome_check``
        it returns ``(removed, vertices to re-home or None)``, the check read in its second sync.
        ``hit``: the find's flags, already zeroed; ``early``: the key side's walk, ranks and plan, launched before
        sync 1 (:meth:`_ahead`)."""
        xp = self.xp
        ukeys = xp.ascontiguousarray(ukeys)
        nu = int(ukeys.shape[0])
        if plan is None:
            nbv, ends, cnt, cnt_ends = self._key_blocks_fused(ukeys)
            total, live = self._fetch(ends[-1:], cnt_ends[-1:])             # sync: the table size
        else:
            nbv, ends, cnt, cnt_ends, total, live = plan
        if hit is None:
            hit = xp.zeros(nu, dtype=np.int8)            # gv_find marks the keys it finds with 1
        if live == 0:
            if rehome_check:
                self._removed_count = 0
            return (hit.view(bool), None) if rehome_check else hit.view(bool)
        self._io_buffer()
        qstart, qsize, _qhead, qtail, q4, qnext = self._queue_device()
        keyside = self.keyside
        walked, planned = early if early is not None else (None, None)
        if keyside:
            (table, tidx, tk), rank, rmin = (walked if walked is not None else
                                             self._keyside_fused(ukeys, nbv, ends, cnt, total, self.block_weights,
                                                                 1, hit))
        else:
            table, tidx, tk, tslot, tseg = self._walk_rows_fused(ukeys, ends, nbv, cnt, cnt_ends, total, live)
            tcol, tw = self._find_run(ukeys, tseg, tslot, live, hit, delete_mode=True)
        removed = hit.view(bool)
        c = self.num_classes
        width = c + 1
        dplan, csum, foundc = planned if planned is not None else self._delete_plan(ukeys, nbv, cnt, hit)

        def finish():
            gk.launch(xp, "gv_delete_finish", max(total, nu), table, tidx, tk, dplan, csum, gk.i64(width), gk.i64(c),
                      ukeys, ends, nbv, gk.i64(nu), gk.i64(nu), gk.i64(total), self._class_sizes_d, self.queue, qstart,
                      qsize, qtail, self.block_left, self.block_right, self.block_owner, self.root_block,
                      self.last_block, self.last_offset, self.edge_count, self.num_blocks, self.block_class, q4, qnext,
                      self._io_at(gk.IO_TOTALS), *self._ungated())

        one_pass = keyside and self._one_pass(nu, live, total)
        if one_pass:                           # queued before the finish, which changes the classes it reads
            tiles = self._tile_keys(table, total, ukeys, nu, cnt, cnt_ends, rank, live, 1,
                                    (rmin, ends, nbv, foundc, dplan[0], rmin, rmin))
        # the finish beside the shift in one pass (_finish_beside), else after the compaction
        with self._finish_beside(finish, one_pass):
            if one_pass:
                self._delete_shift(tiles, nu, cnt, cnt_ends, foundc, hit)
            elif keyside:
                walk, copies, ungated = (table, tidx, tk), self._copies(live), self._ungated()
                self._stage(walk, total, ukeys, cnt, cnt_ends, rmin, dplan[0], 1, copies, gk.FILL_LANES * total,
                            ungated)
                self._delete_scatter(walk, total, ukeys, nu, cnt, cnt_ends, rank, rmin, foundc, ends, nbv, copies,
                                     gk.FILL_LANES * total, ungated)
            else:
                gk.launch(xp, "gv_delete_move", live, tseg, tslot, cnt, cnt_ends, ukeys, gk.i64(nu), foundc, dplan[0],
                          tcol, tw, gk.i64(live), self.block_cols, self.block_weights, *self._ungated())
        got = self._read_io(gk.IO_COUNT, gk.IO_TOTALS + width)                  # sync 2 (counters)
        n_removed, ftotals = got[0], got[gk.IO_TOTALS - gk.IO_COUNT:]
        has_move = ftotals.pop()
        self._advance_tails(ftotals, device=True)
        self._queue_flip()
        self._num_edges -= n_removed
        if not rehome_check:
            return removed
        self._removed_count = n_removed                 # distinct keys: the batch mask's True entries
        return removed, ((ukeys >> 32)[dplan[4] > 0] if has_move else None)

    def _delete_plan(self, ukeys, nbv, cnt, hit):
        """Per vertex (at its first key): new count, class, kept and freed blocks, misplaced; freed blocks ranked per
        class.  ``(dplan, csum, foundc)``, into io the removed edges and the column totals."""
        xp = self.xp
        io = self._io
        nu = int(ukeys.shape[0])
        width = self.num_classes + 1
        dplan = xp.empty((5, nu), dtype=np.int64)
        foundc = xp.empty(nu, dtype=np.int64)
        if self._block_plan(nu):
            csum = xp.empty(((nu + gk.SCAN_CHUNK - 1) // gk.SCAN_CHUNK, width), dtype=np.int64)
            gk.launch(xp, "gv_delete_plan_block", nu, ukeys, gk.i64(nu), nbv, cnt, hit, foundc, self.block_class,
                      self._class_sizes_d, *self._class_args(), dplan, gk.i64(nu), gk.i64(width), csum, io,
                      self._gate0)
        else:
            gk.scan_rows(xp, hit, foundc, self._io_at(gk.IO_COUNT))
            csum = self._chunk_sums(nu, width)
            gk.launch(xp, "gv_delete_plan", nu, ukeys, gk.i64(nu), nbv, cnt, foundc, self.block_class,
                      self._class_sizes_d, *self._class_args(), dplan, gk.i64(width), csum)
            gk.scan_columns(xp, csum, self._io_at(gk.IO_TOTALS))
        return dplan, csum, foundc

    def _query_fused(self, src, dst, want_weight: bool):
        """gv_query: one launch, no sync, a binary search of each source's sorted row: (hit, weight)."""
        xp = self.xp
        src, dst = xp.asarray(src), xp.asarray(dst)
        name = "gv_query_i32" if src.dtype == dst.dtype == np.int32 else "gv_query_i64"
        if name == "gv_query_i64":
            src, dst = src.astype(np.int64, copy=False), dst.astype(np.int64, copy=False)
        n = int(src.shape[0])
        hit = xp.zeros(n, dtype=bool)
        weight = xp.full(n if want_weight else 1, np.nan, dtype=WEIGHT_DTYPE)
        if self._has_pool and self.capacity:
            gk.launch(xp, name, n, xp.ascontiguousarray(src), xp.ascontiguousarray(dst), gk.i64(n),
                      gk.i64(self.capacity), self.edge_count, self.num_blocks, self.root_block,
                      self.block_left, self.block_right, self.block_class, self._class_sizes_d,
                      *self._chunk_args(), self.block_cols, self.block_weights, hit,
                      gk.i32(int(want_weight)), weight)
        return hit, (weight if want_weight else None)

    def _adjacency_fused(self, v, whole: bool = False) -> CSR:
        """Requested rows through gv_walk + gv_gather: one sync for their edge and block totals, or, for the whole
        graph (``whole``: ``v`` every slot in order), none: its totals are the host's counters (every live edge,
        every block in use)."""
        xp = self.xp
        cap = self.capacity
        if whole:
            # every row in order (the jobs' read each batch, host-bound on small graphs): the per-vertex arrays
            # are the rows' counts as they stand, no range check or gather
            vc, counts, nbv = v, self.edge_count[:cap], self.num_blocks[:cap].astype(np.int64)
        else:
            ok = (v >= 0) & (v < cap)
            vc = xp.ascontiguousarray(xp.clip(v, 0, cap - 1))
            counts = xp.where(ok, self.edge_count[vc], 0)
            nbv = xp.where(ok, self.num_blocks[vc], 0).astype(np.int64)
        row_ends = xp.cumsum(counts)
        tends = xp.cumsum(nbv)
        total, ttotal = (self._num_edges, self.blocks_in_use) if whole else self._fetch(row_ends[-1:], tends[-1:])
        offsets = xp.zeros(v.shape[0] + 1, dtype=OFFSET_DTYPE)
        offsets[1:] = row_ends
        cols = xp.empty(total, dtype=VERTEX_DTYPE)
        weights = xp.empty(total, dtype=WEIGHT_DTYPE)
        if total:
            table, _, _ = self._walk_fused(vc, 0, tends, ttotal)
            gk.launch(xp, "gv_gather", total, row_ends, gk.i64(v.shape[0]), tends, nbv, table, vc,
                      self.block_class, self._class_sizes_d, *self._chunk_args(), self.block_cols,
                      self.block_weights, gk.i64(total), cols, weights)
        return CSR(offsets=offsets, cols=cols, weights=weights)

    # =========================================================================
    # sizes and memory
    # =========================================================================
    def memory(self) -> dict:
        """Reserved (everything allocated) and used (live vertices + blocks in use) bytes."""
        sizes = self.class_sizes or []
        in_use = [self.cls_blocks[c] - (self.cls_tail[c] - self.cls_head[c]) for c in range(len(sizes))]
        entries_used = sum(u * s for u, s in zip(in_use, sizes))
        reserved = (VERTEX_ENTRY_BYTES * self.capacity + self._buffer_slack_bytes()
                    + self.pool_blocks * (BLOCK_LINK_BYTES + QUEUE_ENTRY_BYTES) + ENTRY_BYTES * self.entries)
        used = (VERTEX_ENTRY_BYTES * self._num_vertices + BLOCK_LINK_BYTES * sum(in_use)
                + ENTRY_BYTES * entries_used)
        return {
            "reserved_bytes": int(reserved),
            "used_bytes": int(used),
            "blocks_in_use": int(sum(in_use)),
            "blocks_free": int(self.blocks_free),
            "pool_blocks": int(self.pool_blocks),
            "block_size": int(self.block_size or 0),
            "blocks_in_use_by_size": {int(s): int(u) for s, u, b in zip(sizes, in_use, self.cls_blocks) if b},
            "pool_chunks": len(self.chunk_first),
            "average_block_fill": (self._num_edges / entries_used) if entries_used else 0.0,
            "vertex_capacity": int(self.capacity),
            "reverse_info_bytes": int(4 * self.capacity + 4 * self.pool_blocks),
            "pool_grows": int(self.stats["pool_grows"]),
            "dictionary_doublings": int(self.stats["dictionary_doublings"]),
            "rehomed": int(self.stats["rehomed"]),
        }
