"""Breadth-first search: hop distances and parents from one or more sources, static and incremental.

Distances are exact (networkx ``single_source_shortest_path_length``, the
minimum over the sources when there are several); ``-1`` marks an unreachable
vertex.  A parent is any in-neighbour one hop closer, ``-1`` for sources and unreachable
vertices.

**Static on the host** (NumPy with scipy installed, the default there):
``scipy.sparse.csgraph.breadth_first_order``, a compiled FIFO traversal, on the
structure's out-CSR as it is (no copy of its columns, no weights); levels come
from the visit order (:func:`levels_from_order`: one binary search per level),
several sources go through one virtual vertex.  No in-edge index is built: an
update builds it from the graph the first time it needs one.

**Static as array programs** (the GPU; NumPy without scipy): direction-optimizing
BFS (Beamer, Asanovic and Patterson, SC 2012).  A *top-down* level gathers the
frontier's out-rows (positions by a segmented arange over the CSR offsets), keeps
the neighbours not yet reached and picks one parent per new vertex (one scatter:
the last writer wins, and a compare finds it).  A *bottom-up* level asks every
unreached vertex whether one of its in-neighbours is in the frontier, over the
in-edges the job keeps for its incremental form: the first in-neighbours of all
candidates are tried one at a time (Beamer's early exit, vectorised in ``stages``
steps) and the rest of their rows in one gather.  Each level takes the cheaper
direction by the edges it would read: the frontier's out-degree sum against the
in-degree sum of the unreached vertices.  :func:`bfs_arrays` is the plain
top-down form; its column array is read through an accessor, so the same code
walks a plain CSR or the Fixed-Length bit-packed one (:mod:`algorithms.compressed`).
A parent is an in-neighbour one level closer (deterministic on NumPy; any valid
one on a GPU).

**On a GPU** (``fused``, on by default with CuPy) the static form is the fused
direction-optimizing kernels (:func:`algorithms.bfs_kernels.bfs_direction_optimizing`,
on the in-CSR the transpose gives: with ``fused_transpose``, on by default there, the
counting-sort kernels of :mod:`algorithms.transpose_kernels` below 2**21 edges and cuSPARSE's
csr2csc with its rows' order checked by a kernel from there; the in-CSR is also the in-edge
index's snapshot, so the static run builds the index too and counts its edges once, as
``index_edges``), and the repair below runs as the fused
kernels of :func:`algorithms.bfs_kernels.bfs_repair` (same steps, work lists on
the device, one read of its counters per batch as a rule) when no vertex went, no
source newly resolved, and the out-rows come from a CSR (a ``csr`` structure's own, or
another structure's whole adjacency for batches of >= 0.4% of the edges:
``BFS._fused_repair_takes``); the array program stays the reference (and the path
for other batches).

**Incremental** (the classic decremental/incremental BFS-tree repair, e.g.
Ramalingam and Reps), with the graph already in its new state.  Every step reads
only the batch, the invalidated subtrees, their boundary and the region whose
distances drop: the live set is followed from the delta, scratch arrays over the
slots are kept between batches (set and reset at the touched ids only), the
in-edge index is an :class:`~algorithms.in_edge_log.InEdgeLog` (a CSR snapshot of
the in-edges with an alive flag per edge plus a sorted log of the edges inserted
since: rows read by their offsets), and the reached count is kept as a running sum.

The in-edge index is read only by a repair that cuts tree edges (the fused repair
too: a batch without deletions reads none), so a batch's changes are queued for it
(O(k); on the fused path its keys by one kernel) and folded in, in one sort (the
fused jobs: each queued batch by the fused fold, up to :data:`FUSED_FOLDS` of them),
by the next update that reads it; a recompute therefore costs the static traversal
and nothing for the index (the direction-optimizing one transposes the graph for
its bottom-up levels anyway: that transpose becomes the index, its queue dropped).
Once the log and the queue outgrow a rebuild
(:meth:`~algorithms.in_edge_log.InEdgeLog.outgrown`), the index is dropped and
rebuilt when next read.

1. a deleted edge ``u -> v`` with ``parent[v] == u`` cut the tree.  If another
   in-neighbour of ``v`` one level closer survives (not removed, not itself cut),
   it becomes ``v``'s parent and nothing else changes (one read of the cut
   vertices' in-rows, for all of them at once).  Otherwise the subtree below ``v``
   (found by walking tree edges down, one level per step, reading only the
   subtree's rows) loses its distances, and so do removed vertices (a rescued
   vertex whose new parent falls in such a subtree is reached by the walk);
2. every invalidated vertex is re-seeded from its *boundary*: its in-neighbours
   that kept a distance (from the in-edge index, since structures answer
   out-adjacency only);
3. inserted edges ``u -> v`` with ``dist[u] + 1 < dist[v]`` seed ``v``;
   sources that appeared since the last batch seed themselves at 0;
4. the seeds are relaxed outward by label-correcting rounds
   (:func:`relax_rounds`; :func:`relax_rounds_host` on NumPy, which reads a CSR
   structure's rows directly): seeds at different levels repair their regions in
   parallel, and distances only ever drop, so it touches the region whose
   distances changed.  The host repair relaxes many seeds in level order instead
   (:func:`relax_buckets_host`: a bucket queue over the levels, each vertex
   expanded once at its final distance).

Vertices outside the invalidated subtrees keep a tree path made of surviving
edges, so their old distance is still an upper bound, and step 4 makes every
edge satisfy ``dist[w] <= dist[u] + 1``: the result is exact.

**On the host** a batch without vertex events over a CSR structure takes
:func:`repair_host`: the same steps in about a third fewer NumPy operations (a
small batch is all per-call overhead: about 200 operations of 1-2 us where the
array program took about 350), see its docstring; the in-edge index folds such a
batch without reading the snapshot (:meth:`InEdgeLog.fold_edges`: deletions wait,
masked by the reads, and are taken out a few thousand at a time).  On
coAuthorsDBLP a 196-change batch went from 0.93 to 0.59 ms (2-core CPU, caches
flushed before each update; NetworKit's ``DynBFS.updateBatch`` 0.29 ms, from 3.2x
its time to 2.0x under a load of 2; bench-results/2026-11-25-bfscpu).  Its
relaxation goes in level order from more than :data:`FEW_SEEDS` seeds (no vertex
lowered twice, one compare with a scalar per edge: where random insertions lower
40-60% of cnr-2000's vertices the label-correcting rounds lowered some vertices
twice and sorted their offers), by label-correcting rounds from fewer (fewer
steps where the seeds' regions are apart).

**When an update recomputes instead.**  A source that disappears or moves, or a
batch changing more than ``fallback_fraction`` of the edges, runs the static form.
By default (``fallback_fraction=None``) that is a cost model, always recomputing
above 5% of the edges (:data:`MAX_REPAIR_FRACTION`; 10% for the array programs).

*The host repair* (:func:`repair_host`) runs under a budget from measured costs
(:meth:`BFS._repair_budget`): the edges it may read (traversal and in-rows; the
in-edge index's fold of the queued batches is left out, maintenance that a
recompute defers, and so is a build) in the time of one static run,
from the median seconds of the last three static runs over the least seconds per
edge of the last five large repairs (timed, ``time.perf_counter``; the least, so
that a repair slowed by a busy machine does not shrink the next ones' budget).  Past it the repair stops and
the update recomputes (the repair's reads stay in the work counters, as
``aborted_repair_edges``), so an update costs at most about two static runs; each
try is remembered with the edges it read, or where it stopped with a projection
of the rest (:func:`_projected`: the wave's steps shrinking geometrically, or
infinite while it still grows).  A batch skips the repair when the last try within
a factor :data:`SIMILAR_SIZE` of its size, scaled to it, is over
:data:`HOPELESS` budgets, and tries again after :data:`RETRY_AFTER` such skips, a
wait doubled after every hopeless retry (up to :data:`MAX_RETRY_AFTER`).  The
repair's cost is not bounded by the batch: a deleted tree edge can invalidate
a large subtree, an inserted shortcut can lower a large region.  On cnr-2000 (36
levels from the bench's source) the bench's random 1% batches (half insertions
between random vertices) lower 13-63% of the vertices (41% and 63% in two of its
three): a repair reads 0.4-1.7M edges of relaxation plus about 0.9M of index work
and costs 1-2.5 static runs, and the budget sends them to the static form; its
0.1% batches repair in about a third of a static run
(bench-results/2026-11-25-bfscnr).

*The array programs* (a GPU, or NumPy off the host repair): until a repair has
run, batches above 0.5% (scipy's compiled static traversal) or 10% (the array
programs) recompute; after one, a batch of ``k`` changes recomputes when
``(r + log2 |E|) k > |E|``, with ``r`` the largest traversal edges per changed
edge of the last :data:`REPAIR_WINDOW` repairs (``log2 |E|`` per change for the
index; ``r k > |E|`` for a batch without deletions, which cuts nothing and so reads
no in-edge: its changes only queue for the index, O(k), and a queue that outgrows
a rebuild drops it).  On a GPU graph small enough for its updates to cost host
time rather than device time, a static run is the dearer one (a read per level
and a transpose against one read for most repairs): on the sx-mathoverflow
replay (insertions only) this rule sends six more batches to the repair
(bench-results/2026-11-26-bfssmall).

A recompute inside an update costs the static traversal plus O(k): the live
set follows the delta and the in-edge index only queues the batch (above), so an
update that does not try the repair never costs more than a from-scratch run but
for that O(k).
"""
from __future__ import annotations

import functools
import math
import time

import numpy as np

from vinestream.structures.array_ops import (
    compact,
    compact_together,
    distinct_by_scatter,
    edge_keys,
    fill_at,
    owners_of,
    range_positions,
    scatter_min,
    segment_positions,
    segmented_arange,
)
from vinestream.structures.backend import CountedArray, to_numpy
from vinestream.structures.base import DynamicGraph
from vinestream.structures.csr import CSRGraph
from vinestream.structures.csr_types import CSR
from vinestream.structures.delta import BatchDelta

from . import bfs_kernels as bk
from .base import Job, grow
from .edge_index import expand_rows, transpose
from .in_edge_log import InEdgeLog

DIST = np.int32
#: default ``fallback_fraction`` (changed edges / |E| above which an update recomputes): with scipy's
#: compiled static traversal on the host, and with the array-program traversal (NumPy without scipy, GPU)
LIBRARY_FALLBACK = 0.005
ARRAY_FALLBACK = 0.1
#: by default (``fallback_fraction=None``) those fractions hold only until a repair has run: then an update
#: recomputes when the last repair's edges touched per changed edge, times this batch's changes, exceed
#: ``REPAIR_BUDGET`` x |E| (a static traversal's edges), and always above ``MAX_REPAIR_FRACTION``
REPAIR_BUDGET = 1.0
MAX_REPAIR_FRACTION = 0.05
#: the repairs whose rates the rule remembers (it takes the largest: a cut near the root makes one batch
#: of a size cost 100x another)
REPAIR_WINDOW = 8
#: the host repair (repair_host) stops and recomputes once it has read as many traversal edges as take one
#: static run's time (both measured: BFS._repair_budget); until a large repair has been timed, a repair edge
#: is taken to cost this many static edges (a static run's seconds over |E|); with no static run timed yet
#: (a restored checkpoint) the budget is PRIOR_BUDGET x |E|
PRIOR_EDGE_COST = 2.5
#: the host repair relaxes from more seeds than this in level order (relax_buckets_host), from fewer by
#: label-correcting rounds (relax_rounds_csr)
FEW_SEEDS = 64
#: relax_rounds_csr settles up to this many improving offers of a round in place (a sort of them), more by
#: lowest_offers
FEW_OFFERS = 64
PRIOR_BUDGET = 0.4
#: a repair's seconds per edge are learnt from repairs (aborted ones too) reading at least |E| / LEARN_FROM
#: edges (smaller ones cost their calls more than their edges) that did not build the in-edge index
LEARN_FROM = 16
#: a batch skips the repair when the last try within SIMILAR_SIZE of its size read, or was projected to read,
#: over HOPELESS budgets once scaled to it; it tries again after RETRY_AFTER skips, a wait doubled after every
#: hopeless retry up to MAX_RETRY_AFTER (BFS._skips)
SIMILAR_SIZE = 3
RETRY_AFTER = 3
MAX_RETRY_AFTER = 48
HOPELESS = 1.5
#: the fused repair reads a non-CSR structure's whole adjacency only when the graph has at most this many
#: edges per changed edge (BFS._fused_repair_takes)
FUSED_ADJACENCY_PER_CHANGE = 256
#: queued batches the fused jobs fold one by one (about 6 device operations and one read each, the fused fold);
#: more go through the array program's fold of several batches at once (newest change per key: some 50-60
#: operations and 5 reads whatever their number)
FUSED_FOLDS = 8
NO_PARENT = np.uint64(2**63)     # scatter_min sentinel (cupyx.scatter_min has no int64: keys are uint64)


def host_shortcuts(xp, a) -> bool:
    """Whether the NumPy-only shortcuts apply: plain NumPy arrays.  Under
    :func:`~structures.backend.count_transfers` (a :class:`CountedArray`) the code takes the
    path a GPU takes, so that the counted transfers are the GPU's."""
    return xp is np and not isinstance(a, CountedArray)


def _claim(xp, scratch, nbr):
    """Mask of one entry per distinct value of ``nbr`` (the last writer of a scatter wins)."""
    at = xp.arange(nbr.shape[0], dtype=np.int64)
    scratch[nbr] = at
    return scratch[nbr] == at


def relax_levels(xp, dist, parent, seeds, expand, scratch=None):
    """Lower distances outward from ``seeds`` (vertices whose ``dist`` was just set), level by level.

    ``expand(frontier) -> (owner, neighbour)`` lists the out-edges of the
    frontier vertices.  ``dist``/``parent`` are updated in place; ``scratch`` is
    an int64 array over the slots plus one (its contents do not matter; allocated
    when None).  Returns (levels processed, edges scanned, vertices set, newly
    reached): the last is a device scalar (vertices that had no distance before).

    Two host transfers per level besides ``expand``'s own: the level with its
    frontier size, and the number of vertices the level improves; every
    compaction in between knows its size.
    """
    cap = dist.shape[0]
    if scratch is None or scratch.shape[0] <= cap:
        scratch = xp.empty(cap + 1, dtype=np.int64)
    active = distinct_by_scatter(xp, seeds.astype(np.int64), scratch)
    levels = edges = touched = 0
    newly = 0
    while active.shape[0]:
        labels = dist[active]
        low = labels.min()
        at_level = labels == low
        level, n_at = (int(v) for v in xp.stack([low.astype(np.int64), at_level.sum()]).tolist())
        frontier = compact(xp, active, at_level, n_at)      # duplicates are harmless: claims dedupe below
        active = compact(xp, active, ~at_level, int(active.shape[0]) - n_at)
        owner, nbr = expand(frontier)
        edges += int(nbr.shape[0])
        levels += 1
        if nbr.shape[0] == 0:
            continue
        nbr = nbr.astype(np.int64)
        dn = dist[nbr]
        better = (dn < 0) | (dn > level + 1)
        # one claim per improved vertex; the others write to the spare slot ``cap``
        at = xp.arange(nbr.shape[0], dtype=np.int64)
        target = xp.where(better, nbr, cap)
        scratch[target] = at
        win = better & (scratch[target] == at)
        n_win = int(win.sum())
        if n_win == 0:
            continue
        reached, won = compact_together(xp, (nbr, owner), win, n_win)
        src = frontier[won]
        newly = newly + (dist[reached] < 0).sum()
        dist[reached] = level + 1
        parent[reached] = src.astype(parent.dtype)
        touched += n_win
        active = xp.concatenate([active, reached])
    return levels, edges, touched, newly


def relax_rounds(xp, dist, parent, seeds, expand, scratch, best=None):
    """Lower distances outward from ``seeds`` by label-correcting rounds (the incremental repair).

    Each round reads the out-edges of every vertex improved in the last round, whatever its
    level, and lowers each neighbour to the smallest ``dist + 1`` offered (its parent the
    vertex offering it).  Seeds spread over many levels repair their regions in parallel,
    so the rounds number the longest chain of improvements instead of the span of levels
    that :func:`relax_levels` walks one by one; a vertex may be lowered more than once.
    The fixed point is exact: every label is the length of a path, and every edge leaving
    a changed vertex is relaxed.  ``scratch``: int64 over the slots plus one.  Returns
    (rounds, edges scanned, vertices set, newly reached as a device scalar).

    A neighbour improves when its distance, read as unsigned (``-1``, unreached, is then the
    largest), exceeds the offer: one compare.  NumPy counts with ``count_nonzero`` on the host;
    a GPU reads the count and the offers' range in one transfer per round.

    When a round's offers differ, each neighbour must take its smallest: NumPy's scatter keeps the
    last write, so the offers are sorted largest first; a GPU's scatter keeps an arbitrary one, so
    there the winner is the smallest packed ``(offer, place)`` by a scatter-min into ``best``
    (uint64 over the slots, :data:`NO_PARENT` at rest, reset at the ids it sets).
    """
    active = distinct_by_scatter(xp, seeds.astype(np.int64), scratch)
    rounds = edges = touched = 0
    newly = 0
    host = host_shortcuts(xp, dist)
    while active.shape[0]:
        owner, nbr = expand(active)
        rounds += 1
        edges += int(nbr.shape[0])
        if nbr.shape[0] == 0:
            break
        offer = dist[active][owner] + 1
        better = dist[nbr].view(np.uint32) > offer.view(np.uint32)
        if host:
            n_better = int(np.count_nonzero(better))
            if n_better == 0:
                break
            nbr, offer, src = nbr[better], offer[better], owner[better]
            spread = bool(offer.min() != offer.max())
        else:
            cap = dist.shape[0]
            n_better, lo, hi = (int(v) for v in xp.stack([better.sum(), xp.where(better, offer, cap).min(),
                                                           xp.where(better, offer, -1).max()]).tolist())
            if n_better == 0:
                break
            nbr, offer, src = compact_together(xp, (nbr, offer, owner), better, n_better)
            spread = lo != hi
        at = xp.arange(n_better, dtype=np.int64)
        if spread and best is not None and not host:      # a GPU's scatter keeps any one write
            key = (offer.astype(np.uint64) << np.uint64(32)) | at.astype(np.uint64)
            scatter_min(xp, best, nbr, key)
            win = best[nbr] == key
            best[nbr] = NO_PARENT
        else:
            if spread:
                order = xp.argsort(-offer)                 # the smallest offer writes last and wins
                nbr, offer, src = nbr[order], offer[order], src[order]
            scratch[nbr] = at
            win = scratch[nbr] == at
        n_win = int(np.count_nonzero(win)) if host else int(win.sum())
        if n_win < n_better:
            reached, offer, src = compact_together(xp, (nbr, offer, src), win, n_win)
        else:
            reached = nbr
        newly = newly + (dist[reached] < 0).sum()
        dist[reached] = offer
        parent[reached] = active[src].astype(parent.dtype)
        touched += n_win
        active = reached
    return rounds, edges, touched, newly


def host_rows(graph: DynamicGraph):
    """``rows(vertices) -> (counts, columns)`` over NumPy: the out-rows of ``vertices``.

    A structure that stores its edges as one CSR (:class:`~structures.csr.CSRGraph`, whose
    ``adjacency()`` is a view) is read directly: one repeat, one arange and one gather per
    edge; any other structure answers ``adjacency(vertices)``.
    """
    if isinstance(graph, CSRGraph):
        full = graph.adjacency()
        offsets, cols = full.offsets, full.cols
        rows = int(offsets.shape[0]) - 1

        def read(vertices):
            if int(vertices.max()) >= rows:                 # a slot past the structure's rows: none
                adj = graph.adjacency(vertices.astype(np.int32))
                return np.diff(adj.offsets), adj.cols
            starts = offsets[vertices]
            counts = offsets[vertices + 1] - starts
            return counts, cols[segment_positions(np, starts, counts)]
        return read

    def read(vertices):
        adj = graph.adjacency(vertices.astype(np.int32))
        return np.diff(adj.offsets), adj.cols
    return read


def relax_rounds_host(dist, parent, seeds, rows, scratch):
    """:func:`relax_rounds` on NumPy with fewer passes over a round's edges.

    The offers are the frontier's labels repeated by its degrees (no per-edge owner array),
    and only the improving edges learn their owner, by a binary search over the running
    degree sum.  ``rows``: :func:`host_rows`.  Same rounds, same result, same counts.
    """
    active = distinct_by_scatter(np, seeds.astype(np.int64), scratch)
    rounds = edges = touched = newly = 0
    while active.shape[0]:
        counts, nbr = rows(active)
        rounds += 1
        edges += int(nbr.shape[0])
        if nbr.shape[0] == 0:
            break
        offer = np.repeat(dist[active] + 1, counts)
        better = np.flatnonzero(dist[nbr].view(np.uint32) > offer.view(np.uint32))   # -1: unreached
        n_better = int(better.shape[0])
        if n_better == 0:
            break
        nbr, offer = nbr[better], offer[better]
        if offer.min() != offer.max():
            order = np.argsort(-offer)                     # the smallest offer writes last and wins
            nbr, offer, better = nbr[order], offer[order], better[order]
        at = np.arange(n_better)
        scratch[nbr] = at
        win = np.flatnonzero(scratch[nbr] == at)
        if win.shape[0] < n_better:
            nbr, offer, better = nbr[win], offer[win], better[win]
        newly += int(np.count_nonzero(dist[nbr] < 0))
        dist[nbr] = offer
        src = np.searchsorted(np.cumsum(counts), better, side="right")
        parent[nbr] = active[src]
        touched += int(nbr.shape[0])
        active = nbr
    return rounds, edges, touched, newly


UNREACHED = np.uint32(0xFFFFFFFF)     # -1 read as unsigned: farther than any level


def lowest_offers(du, scratch, nbr, offer, levels=None):
    """Settle offers that each beat their vertex's label: the smallest per distinct vertex of ``nbr`` is
    written into ``du`` (the labels as uint32).  Returns ``(win, vertices)``: the positions of one entry
    per vertex carrying its smallest offer (``None``: every entry, the vertices being distinct) and those
    vertices.

    A scatter keeps the last write: a few offers are sorted largest first (a sort of a few dozen costs
    less than a test of their range); many offers on one level need no order; many spread ones go
    through a scatter-min (NumPy's sorts are slow on many keys of a few values: 4 ms for 50,000) and
    keep the entries equal to the minimum.  ``scratch``: int64 over the slots (contents ignored);
    ``levels``: a smaller array whose range holds the offers' (the labels they came from), read instead
    of the offers to tell whether they differ.
    """
    n = int(nbr.shape[0])
    ou = offer.view(np.uint32)
    keep = None                       # the entries in the scatter, in order (None: all, as they come)
    written = False
    if n > 64:
        spread = ou if levels is None else levels
        if spread.min() != spread.max():
            np.minimum.at(du, nbr, ou)
            keep = (du.take(nbr) == ou).nonzero()[0]
            written = True
    elif n > 1:
        keep = ou.argsort()[::-1]                      # the smallest offer writes last and wins
    # (gathers by take: the kind of call the rest of the repair makes)
    sub = nbr if keep is None else nbr.take(keep)
    at = np.arange(sub.shape[0])
    scratch[sub] = at
    win = (scratch.take(sub) == at).nonzero()[0]
    if keep is None and win.shape[0] == n:
        du[nbr] = ou
        return None, nbr
    sub = sub.take(win)
    win = win if keep is None else keep.take(win)
    if not written:
        du[sub] = ou.take(win)
    return win, sub


def _host_rows(off, ends, vertices):
    """The host's read of the CSR rows of ``vertices`` (non-empty): ``(counts, their running sums, the
    positions of the entries)``, by one segmented arange (no owner array: a caller repeats what it needs by
    ``counts``, or finds an entry's row by a search of the running sums)."""
    starts = off.take(vertices)
    counts = ends.take(vertices) - starts
    seg = np.add.accumulate(counts)
    pos = range_positions(starts, counts, seg, int(seg[-1]))
    return counts, seg, pos


def _projected(edges: int, total: int, last: int, before: int) -> float:
    """The edges a relaxation stopped at its budget would have read in all: ``edges`` read so far, the last
    step ``total`` of them, the two steps before ``last`` and ``before``.  The steps are taken to keep
    shrinking by the ratio of the last two steps to the two before (smoothed: a hub's step is not a trend),
    a geometric tail; infinite where the wave was not shrinking."""
    ratio = (total + last) / (last + before) if last + before else math.inf
    return edges + total * ratio / (1 - ratio) if ratio < 1 else math.inf


def relax_buckets_host(dist, parent, seeds, off, ends, cols, track=True, budget=None):
    """Lower distances outward from ``seeds`` in level order (a bucket queue over the levels): the
    incremental repair's relaxation on NumPy over a CSR's arrays.

    ``seeds``: distinct vertices whose labels were just lowered (written in ``dist``), at any levels.
    Level ``L`` expands the vertices labelled ``L`` this batch: the seeds of that label that kept it and
    the vertices the level before lowered to ``L``.  By then no label below ``L`` can change (every
    lower label has been expanded), so each vertex is expanded once, at its final distance (the
    label-correcting rounds of :func:`relax_rounds` may lower and expand a vertex several times), and
    every offer of a level is the same ``L + 1``: one compare with a scalar per edge, no minimum per
    vertex.  An improved neighbour takes any frontier vertex offering it as its parent (the last write
    wins) and the entry whose source is that parent is its one entry in the next frontier (rows are
    sets: no dedupe).  Levels without work are skipped.  Gathers go through ``take`` with native
    indices (a fancy index by int32 converts the indices first: 2-3x slower on large gathers).

    ``budget``: stop once the edges read pass it (``None``: no limit); the labels are then part-way
    (upper bounds, not exact: the caller recomputes).

    Returns (levels expanded, edges read, vertices lowered, vertices reached anew: counted only with
    ``track``, the edges projected in all: the edges read, or where it stopped at the budget,
    :func:`_projected`).
    """
    du = dist.view(np.uint32)
    seeds = seeds.astype(np.intp, copy=False)
    lab = dist.take(seeds)
    if seeds.shape[0] > 1 and lab.min() != lab.max():
        order = lab.argsort(kind="stable")
        seeds, lab = seeds.take(order), lab.take(order)
        # bucket bounds: the first seed of each label (labels ascending)
        starts = np.flatnonzero(np.concatenate(([True], lab[1:] != lab[:-1])))
        labels = lab.take(starts).tolist()
        bounds = [*starts.tolist(), int(seeds.shape[0])]
    else:
        labels, bounds = [int(lab[0])], [0, int(seeds.shape[0])]
    levels = edges = touched = newly = last = before = 0
    b = 0                                     # the next bucket of seeds
    frontier = seeds[:0]
    level = labels[0]
    while True:
        if b < len(labels) and labels[b] == level:
            bucket = seeds[bounds[b]:bounds[b + 1]]
            b += 1
            if levels:                        # a seed lowered further since has left its bucket
                bucket = bucket[du.take(bucket) == level]
            frontier = np.concatenate((frontier, bucket)) if frontier.shape[0] else bucket
        if frontier.shape[0] == 0:
            if b == len(labels):
                break
            level = labels[b]                 # nothing to expand until the next seeds
            continue
        starts = off.take(frontier)
        counts = ends.take(frontier) - starts
        seg = np.add.accumulate(counts)
        total = int(seg[-1])
        levels += 1
        edges += total
        level += 1
        if budget is not None and edges > budget:
            return levels, edges, touched, newly, _projected(edges, total, last, before)
        before, last = last, total
        if total == 0:
            frontier = frontier[:0]
            continue
        pos = range_positions(starts, counts, seg, total)
        nbr = cols.take(pos).astype(np.intp)
        dn = du.take(nbr)
        better = (dn > level).nonzero()[0]               # -1 (unreached) is the largest
        if better.shape[0] == 0:
            frontier = frontier[:0]
            continue
        nbr = nbr.take(better)
        src = frontier.take(seg.searchsorted(better, side="right"))
        du[nbr] = level
        parent[nbr] = src
        one = (parent.take(nbr) == src).nonzero()[0]     # the entry each lowered vertex took its parent from
        if one.shape[0] < nbr.shape[0]:
            nbr = nbr.take(one)
            if track:
                newly += int(np.count_nonzero(dn.take(better.take(one)) == UNREACHED))
        elif track:
            newly += int(np.count_nonzero(dn.take(better) == UNREACHED))
        touched += int(nbr.shape[0])
        frontier = nbr
    return levels, edges, touched, newly, edges


def relax_rounds_csr(dist, parent, seeds, off, ends, cols, scratch, track=True, budget=None):
    """:func:`relax_rounds` over a CSR's arrays on NumPy for a few seeds (:func:`relax_buckets_host`'s
    contract and returns): each round expands every vertex lowered in the last one, whatever its level,
    so seeds at distant levels repair their regions in the same rounds (the rounds number the longest
    chain of improvements, where the level order walks every level of every region in turn), at the risk
    of lowering a vertex twice where regions overlap: the few-seed case.  Offers differ within a round,
    so each vertex takes the smallest.  ``scratch``: int64 over the slots.

    A round is some thirty NumPy calls on a few dozen entries, so it is written for their number: the rows
    read inline (one segmented arange), the offers carried from the round before (the labels just
    written, plus one) instead of gathered again, and up to :data:`FEW_OFFERS` improving offers settled
    in place: sorted largest first, labels and parents scattered (the last write, the smallest offer,
    wins both), and one entry per vertex kept where the parent it holds came from (rows are sets, so a
    vertex has one entry per parent).  More offers go through :func:`lowest_offers` (a scatter-min where
    they spread: a sort of many keys of a few values is slow)."""
    du = dist.view(np.uint32)
    active = seeds.astype(np.intp, copy=False)
    rounds = edges = touched = newly = last = before = 0
    if active.shape[0] == 0:
        return rounds, edges, touched, newly, edges
    offers = du.take(active) + np.uint32(1)                   # what each active vertex offers its rows
    while True:
        starts = off.take(active)
        counts = ends.take(active) - starts
        seg = np.add.accumulate(counts)
        total = int(seg[-1])
        rounds += 1
        edges += total
        if total == 0:
            break
        if budget is not None and edges > budget:
            return rounds, edges, touched, newly, _projected(edges, total, last, before)
        before, last = last, total
        pos = range_positions(starts, counts, seg, total)
        nbr = cols.take(pos)
        offer = offers.repeat(counts)
        dn = du.take(nbr)
        better = (dn > offer).nonzero()[0]                     # -1 (unreached) is the largest
        n = int(better.shape[0])
        if n == 0:
            break
        offer = offer.take(better)
        if n > FEW_OFFERS:
            nbr = nbr.take(better).astype(np.intp)             # indices from here on: native ints
            win, nbr = lowest_offers(du, scratch, nbr, offer, offers)
            if win is not None:
                better, offer = better.take(win), offer.take(win)
            src = active.take(seg.searchsorted(better, side="right"))
            parent[nbr] = src
        else:
            if n > 1:
                order = offer.argsort()[::-1]                  # the smallest offer writes last and wins
                better, offer = better.take(order), offer.take(order)
            nbr = nbr.take(better).astype(np.intp)
            src = active.take(seg.searchsorted(better, side="right"))
            du[nbr] = offer
            parent[nbr] = src
            if n > 1:
                one = (parent.take(nbr) == src).nonzero()[0]   # the entry each vertex took its parent from
                if one.shape[0] < n:
                    nbr, offer, better = nbr.take(one), offer.take(one), better.take(one)
        if track:
            newly += int(np.count_nonzero(dn.take(better) == UNREACHED))
        touched += int(nbr.shape[0])
        active = nbr
        offers = offer + np.uint32(1)
    return rounds, edges, touched, newly, edges


def repair_host(dist, parent, csr, index_of, scratch, del_s, del_d, ins_s, ins_d, all_reached=False,
                budget=None) -> dict:
    """The incremental repair (module docstring, steps 1-4) on NumPy for a batch that adds and removes
    no vertex, over a CSR structure's arrays, in as few operations as the steps allow.

    Same result as the array program (exact distances, a parent one level closer along an edge), with
    these shortcuts, each exact on its own:

    * a cut vertex is rescued by any in-neighbour one level closer (the last writer wins), even one
      that is itself cut: a walk that invalidates that parent reaches the rescued vertex through its
      new tree edge (the array program excludes cut parents; both are right);
    * the lost roots lose their parent before the walk, so the walk (one test ``parent[w] == owner``
      per edge) never comes back to a root and every invalidated vertex is found once: no flags, no
      dedupe;
    * the boundary of the lost roots comes from the in-rows the rescue read; only the descendants'
      in-rows are read again;
    * boundary and inserted-edge seeds are one list of offers, settled like a relaxation round (the
      smallest offer per vertex writes last);
    * when every live vertex had a distance before the batch (``all_reached``), the vertices reached
      anew are the invalidated ones that have a distance again: one count at the end instead of one
      per round.

    The relaxation goes in level order (:func:`relax_buckets_host`: each vertex expanded once, at its
    final distance) from more than :data:`FEW_SEEDS` seeds, by label-correcting rounds
    (:func:`relax_rounds_csr`: fewer steps where the regions are apart) from fewer.

    ``index_of()`` returns the up-to-date :class:`~algorithms.in_edge_log.InEdgeLog` (read only when a
    tree edge is cut); ``scratch``: int64 over the slots.  ``dist``/``parent`` change in place.
    ``budget``: the edges the repair may read: its traversal (walk and relaxation) and the in-rows it reads
    (the in-edge index's ``work`` after ``index_of()`` returned it; the fold of the queued batches that
    ``index_of()`` does is left out: maintenance that a recompute defers rather than saves, and spent
    before anything tells whether to go on) (``None``: no limit); past it the repair stops with
    ``"aborted": True`` and ``dist``/``parent`` part-way (the caller recomputes).  ``"projected"``: the
    same edges read in all, or where it stopped, projected (:func:`_projected`).
    Returns the counts :meth:`BFS.update` reports.
    """
    off, cols = csr.offsets, csr.cols
    ends = off[1:]
    rows = int(off.shape[0]) - 1                  # every vertex id is below (the structure's capacity)
    du = dist.view(np.uint32)
    # vertex ids that index arrays are native ints (NumPy converts an int32 index on every use: about 1 us a
    # gather or a scatter on these sizes)
    del_d = del_d.astype(np.intp, copy=False)
    ins_s = ins_s.astype(np.intp, copy=False)
    ins_d = ins_d.astype(np.intp, copy=False)
    walk_levels = walk_edges = n_inv = 0
    inv = index = None
    folded = 0                                   # the index's work when index_of() returned it: the fold
    cand_v, cand_l, cand_p = [], [], []
    # 1. cut tree edges: rescued by a surviving in-neighbour one level closer, or lost with their subtree
    # (gathers by take and labels compared as uint32 throughout, as the relaxation does: a cold update pays
    # for every kind of NumPy operation it uses the first time, a few microseconds each)
    cut = del_d.take((parent.take(del_d) == del_s).nonzero()[0]) if del_d.shape[0] else del_d   # one parent each
    if cut.shape[0]:
        index = index_of()
        folded = index.work
        owner, u, live = index.rows_host(cut, rows)
        ok = du.take(u) + np.uint32(1) == du.take(cut).take(owner)     # (an unreached u offers 0: no match)
        if live is not None:
            ok &= live
        at = ok.nonzero()[0]
        saved = owner.take(at)
        parent[cut.take(saved)] = u.take(at)
        has = np.zeros(cut.shape[0], dtype=bool)
        has[saved] = True
        lost = cut.take((~has).nonzero()[0])
        if lost.shape[0]:
            parent[lost] = -1
            parts, level = [lost], lost
            while True:                                   # down the tree edges, one level per step
                counts, _, pos = _host_rows(off, ends, level)
                walk_levels += 1
                walk_edges += pos.shape[0]
                if pos.shape[0] == 0:
                    break
                w = cols.take(pos).astype(np.intp)
                level = w.take((parent.take(w) == level.repeat(counts)).nonzero()[0])
                if level.shape[0] == 0:
                    break
                parts.append(level)
            inv = np.concatenate(parts) if len(parts) > 1 else lost
            n_inv = int(inv.shape[0])
            if budget is not None and walk_edges + index.work - folded > budget:
                return {"aborted": True, "iterations": walk_levels, "edges": walk_edges, "vertices": n_inv,
                        "invalidated": n_inv, "seeds": 0, "reached_change": 0, "projected": math.inf}
            dist[inv] = -1
            parent[inv] = -1
            # 2. the boundary: in-neighbours with a distance (the roots' rows were read by the rescue)
            mine = ~has.take(owner)
            if live is not None:
                mine &= live
            mine = mine.nonzero()[0]
            bu, bv = u.take(mine), cut.take(owner.take(mine))
            if n_inv > lost.shape[0]:
                below = inv[lost.shape[0]:]
                o2, u2, live2 = index.rows_host(below, rows)
                if live2 is not None:
                    o2, u2 = o2[live2], u2[live2]
                bu, bv = np.concatenate((bu, u2)), np.concatenate((bv, below.take(o2)))
            label = du.take(bu) + np.uint32(1)          # (uint32: no distance, -1, offers 0)
            ok = label.nonzero()[0]
            cand_v.append(bv.take(ok))
            cand_l.append(label.take(ok))
            cand_p.append(bu.take(ok))
    # 3. inserted edges that shorten a path
    if ins_s.shape[0]:
        label = du.take(ins_s) + np.uint32(1)           # (uint32: an unreached source offers 0, left out)
        ok = ((du.take(ins_d) > label) & (label != 0)).nonzero()[0]
        cand_v.append(ins_d.take(ok))
        cand_l.append(label.take(ok))
        cand_p.append(ins_s.take(ok))
    # 4. settle the offers (the smallest per vertex), then relax outward in level order
    track = not all_reached
    newly = rounds = edges = touched = n_cand = 0
    active = cand_v[0][:0] if cand_v else del_d[:0]
    if cand_v:
        if len(cand_v) > 1:
            v, label, src = np.concatenate(cand_v), np.concatenate(cand_l), np.concatenate(cand_p)
        else:
            v, label, src = cand_v[0], cand_l[0], cand_p[0]
        n_cand = int(v.shape[0])
        if n_cand:
            if track:
                old = du.take(v)
            win, v = lowest_offers(du, scratch, v, label)
            if win is not None:
                src = src.take(win)
            if track:
                newly += np.count_nonzero((old if win is None else old.take(win)) == UNREACHED)
            parent[v] = src
            active = v
    n_seeds = int(active.shape[0])
    if n_seeds:
        spent = walk_edges + (index.work - folded if index is not None else 0)
        rest = None if budget is None else budget - spent
        if n_seeds > FEW_SEEDS:
            rounds, edges, touched, more, projected = relax_buckets_host(dist, parent, active, off, ends, cols,
                                                                         track, rest)
        else:
            rounds, edges, touched, more, projected = relax_rounds_csr(dist, parent, active, off, ends, cols,
                                                                       scratch, track, rest)
        newly += more
        if projected != edges:
            return {"aborted": True, "iterations": walk_levels + rounds, "edges": walk_edges + edges,
                    "vertices": n_inv + n_cand + touched, "invalidated": n_inv, "seeds": n_seeds,
                    "reached_change": 0, "projected": spent + projected}
    if not track:
        newly = np.count_nonzero(dist[inv] >= 0) if inv is not None else 0
    return {"reached_change": int(newly) - n_inv, "iterations": walk_levels + rounds,
            "edges": walk_edges + edges, "vertices": n_inv + n_cand + touched, "invalidated": n_inv,
            "seeds": n_seeds, "aborted": False,
            "projected": walk_edges + edges + (index.work - folded if index is not None else 0)}


def csr_expander(xp, csr, column_at=None):
    """``expand`` for :func:`relax_levels` over a full CSR; ``column_at(positions)`` decodes columns."""
    if column_at is None:
        return lambda frontier: expand_rows(xp, csr, frontier)

    def expand(frontier):
        v = frontier.astype(np.int64)
        starts = csr.offsets[v]
        owner, pos = segmented_arange(xp, starts, csr.offsets[v + 1] - starts)
        return owner, column_at(pos)
    return expand


def graph_expander(xp, graph: DynamicGraph):
    """``expand`` that asks the structure for just the frontier's rows."""
    def expand(frontier):
        adj = graph.adjacency(frontier.astype(np.int32))
        if host_shortcuts(xp, frontier):                            # one repeat of the row numbers
            return np.repeat(np.arange(frontier.shape[0]), np.diff(adj.offsets)), adj.cols
        return adj.row_ids().astype(np.int64), adj.cols             # the edge total is known: no read-back
    return expand


@functools.cache
def _parent_ids_kernel(xp):
    return xp.ElementwiseKernel("P p, raw E external_of", "int64 ext, bool has",
                                "has = p >= 0; ext = has ? (long long)external_of[p] : 0", "vinestream_parent_ids")


def parent_ids(xp, parent, external_of):
    """The parents' external ids (int64, 0 where none) and whether each slot has a parent, over the slots of
    ``parent`` (every slot gathers a mapped id, slot 0's where it has no parent, masked out: no read of how many
    are live).  On CuPy one elementwise launch, where the array program takes five: a snapshot of the outputs
    takes the column every batch, and on a small graph each launch is host time."""
    if xp is np:
        has = parent >= 0
        return np.where(has, external_of[np.where(has, parent, 0)], 0).astype(np.int64, copy=False), has
    return _parent_ids_kernel(xp)(parent, external_of)


def bfs_arrays(xp, capacity: int, sources, expand):
    """Static top-down BFS: (dist, parent, levels, edges scanned) from internal ``sources`` (-1 ignored)."""
    dist = xp.full(capacity, -1, dtype=DIST)
    parent = xp.full(capacity, -1, dtype=np.int32)
    sources = xp.asarray(sources, dtype=np.int64)
    sources = sources[sources >= 0]
    dist[sources] = 0
    levels, edges, _, _ = relax_levels(xp, dist, parent, sources, expand)
    return dist, parent, levels, edges


def _padded_offsets(xp, offsets, capacity: int):
    rows = offsets.shape[0] - 1
    if rows < capacity:
        return xp.concatenate([offsets, xp.full(capacity - rows, offsets[-1], dtype=offsets.dtype)])
    return offsets[: capacity + 1]


def bfs_direction_optimizing(xp, out_csr, in_csr, capacity: int, sources, *, alpha: float = 1.0,
                             stages: int = 4):
    """Static BFS switching between top-down and bottom-up levels (see the module docstring).

    ``in_csr`` is the transpose of ``out_csr`` with sorted rows.  A level runs
    bottom-up when the frontier's out-edges exceed ``alpha`` times the in-edges of
    the unreached vertices.  Returns (dist, parent, levels, edges scanned, bottom-up levels).
    """
    out_off = _padded_offsets(xp, out_csr.offsets, capacity)
    in_off = _padded_offsets(xp, in_csr.offsets, capacity)
    out_deg = xp.diff(out_off)
    in_deg = xp.diff(in_off)
    dist = xp.full(capacity, -1, dtype=DIST)
    parent = xp.full(capacity, -1, dtype=np.int32)
    scratch = xp.empty(capacity, dtype=np.int64)
    sources = xp.asarray(sources, dtype=np.int64)
    frontier = distinct_by_scatter(xp, sources[sources >= 0], scratch)
    dist[frontier] = 0
    unreached_in = int(in_csr.num_edges) - int(in_deg[frontier].sum())
    in_frontier = None
    unreached = None
    level = levels = edges = bottom_up = 0
    while frontier.shape[0]:
        frontier_out = int(out_deg[frontier].sum())
        if frontier_out > alpha * unreached_in:
            # -- bottom-up: unreached vertices look for a parent among their in-neighbours
            if in_frontier is None:
                in_frontier = xp.zeros(capacity, dtype=bool)
                unreached = xp.nonzero((dist < 0) & (in_deg > 0))[0]
            else:
                unreached = unreached[dist[unreached] < 0]
            in_frontier[frontier] = True
            cand, starts, cnt = unreached, in_off[unreached], in_deg[unreached]
            found_v, found_p = [], []
            for j in range(stages):
                if cand.shape[0] == 0:
                    break
                u = in_csr.cols[starts + j]
                edges += int(u.shape[0])
                hit = in_frontier[u]
                found_v.append(cand[hit])
                found_p.append(u[hit])
                keep = ~hit & (cnt > j + 1)
                cand, starts, cnt = cand[keep], starts[keep], cnt[keep]
            if cand.shape[0]:
                rest = cnt - stages
                pos = segment_positions(xp, starts + stages, rest)
                u = in_csr.cols[pos]
                edges += int(u.shape[0])
                hit_at = xp.nonzero(in_frontier[u])[0]
                owner = owners_of(xp, rest, hit_at)
                first = xp.ones(owner.shape[0], dtype=bool)
                first[1:] = owner[1:] != owner[:-1]
                found_v.append(cand[owner[first]])
                found_p.append(u[hit_at[first]])
            in_frontier[frontier] = False
            reached = xp.concatenate(found_v).astype(np.int64) if found_v else frontier[:0]
            par = xp.concatenate(found_p) if found_p else frontier[:0]
            bottom_up += 1
        else:
            # -- top-down: the frontier's out-rows, new vertices claimed by one scatter
            cnt = out_deg[frontier]
            pos = segment_positions(xp, out_off[frontier], cnt)
            nbr = out_csr.cols[pos]
            edges += int(nbr.shape[0])
            fresh_at = xp.nonzero(dist[nbr] < 0)[0]
            nbr = nbr[fresh_at].astype(np.int64)
            if xp is np and fresh_at.shape[0] * 8 > pos.shape[0]:
                src = np.repeat(frontier, cnt)[fresh_at]        # one pass beats many binary searches
            else:
                src = frontier[owners_of(xp, cnt, fresh_at)]
            win = _claim(xp, scratch, nbr)
            reached, par = nbr[win], src[win]
        levels += 1
        if reached.shape[0]:
            dist[reached] = level + 1
            parent[reached] = par.astype(np.int32)
            unreached_in -= int(in_deg[reached].sum())
        level += 1
        frontier = reached
    return dist, parent, levels, edges, bottom_up


def levels_from_order(order, pred, capacity: int):
    """(dist, parent, levels) over ``capacity`` slots from a FIFO BFS's visit ``order`` and predecessors.

    A FIFO queue appends the children of each vertex in the order it dequeues the
    vertices, so level ``k + 1`` is the run of ``order`` after level ``k`` whose parents
    are already labelled: with the levels up to ``k`` written into ``dist``, one binary
    search over the rest of ``order`` (a few scalar probes) finds where level ``k + 1``
    ends.  No pass besides writing each vertex's level once and turning the library's
    "no predecessor" marks into -1.  ``order[0]`` is the one source; ``pred`` is negative
    for the source and the unreached (it becomes ``parent``, in place).  NumPy only (the host library path).
    """
    dist = np.full(capacity, -1, dtype=DIST)
    parent = np.maximum(pred, -1, out=pred)[:capacity].astype(np.int32, copy=False)   # in place: pred is spent
    order = order.astype(np.intp)              # NumPy scatters with native indices ~3x faster
    reach = int(order.shape[0])
    lo, hi, level = 0, min(reach, 1), 0
    while lo < reach:
        dist[order[lo:hi]] = level
        # the first position at or after ``hi`` whose parent has no level yet ends level + 1
        left, right = hi, reach
        while left < right:
            mid = (left + right) // 2
            if dist[parent[order[mid]]] >= 0:
                left = mid + 1
            else:
                right = mid
        lo, hi, level = hi, left, level + 1
    return dist, parent, level


def _has_scipy() -> bool:
    try:
        import scipy.sparse.csgraph  # noqa: F401
    except ImportError:
        return False
    return True


def bfs_scipy(csr, capacity: int, sources):
    """Static BFS by ``scipy.sparse.csgraph.breadth_first_order`` (a compiled FIFO traversal) on the
    out-CSR as it is: (dist, parent, levels, edges scanned, reached), or None where scipy is missing.

    Several sources are one traversal from a virtual vertex (row ``capacity``) whose
    out-edges are the sources: its row is appended to the CSR (a copy of the columns).
    """
    try:
        import scipy.sparse as sp
        from scipy.sparse.csgraph import breadth_first_order
    except ImportError:
        return None
    offsets = np.asarray(_padded_offsets(np, csr.offsets, capacity))
    cols = np.asarray(csr.cols)
    sources = np.asarray(sources, dtype=np.int64)
    sources = sources[(sources >= 0) & (sources < capacity)]
    if sources.shape[0] == 0:
        return (np.full(capacity, -1, dtype=DIST), np.full(capacity, -1, dtype=np.int32), 0, 0, 0)
    many = sources.shape[0] > 1
    size = capacity + 1 if many else capacity
    if many:
        offsets = np.concatenate([offsets, [offsets[-1] + sources.shape[0]]])
        cols = np.concatenate([cols, sources.astype(cols.dtype)])
    ones = np.broadcast_to(np.float64(1.0), (cols.shape[0],))     # scipy reads no weights: no array
    if offsets[-1] < 2**31:                   # scipy's own index type: no check of the contents
        offsets, cols = offsets.astype(np.int32), cols.astype(np.int32, copy=False)
    a = sp.csr_matrix((ones, cols, offsets), shape=(size, size))
    start = capacity if many else int(sources[0])
    order, pred = breadth_first_order(a, start, directed=True, return_predecessors=True)
    dist, parent, levels = levels_from_order(order, pred, size)
    # edges scanned: the out-rows of the reached vertices (gathers for a few, else one masked pass)
    if order.shape[0] * 8 < capacity:
        scanned = int(offsets[order + 1].sum(dtype=np.int64) - offsets[order].sum(dtype=np.int64))
        scanned -= int(sources.shape[0]) if many else 0         # the virtual vertex's row
    else:
        scanned = int(np.diff(offsets[: capacity + 1]).sum(where=dist[:capacity] >= 0, dtype=np.int64))
    if many:                                  # drop the virtual vertex: its children are the sources
        dist, parent = dist[:capacity] - (dist[:capacity] > 0), parent[:capacity]
        dist[sources] = 0
        parent[parent == capacity] = -1
        levels -= 1
    return dist, parent, levels, scanned, int(order.shape[0]) - many


class BFS(Job):
    name = "bfs"

    def __init__(self, xp=np, *, sources=(), fallback_fraction: float | None = None, direction_optimizing: bool = True,
                 library_transpose: bool = True, library_bfs: bool = True, fused: bool | None = None,
                 launch=None, host_repair: bool = True, fused_transpose: bool | None = None,
                 transpose_launch=None, **params):
        super().__init__(xp, **params)
        # the fused kernels (static: bfs_kernels.bfs_direction_optimizing; incremental: bfs_kernels.bfs_repair):
        # on by default on a GPU; ``launch`` replaces their launcher (the tests' host emulation)
        self.fused = (xp is not np) if fused is None else bool(fused)
        self.launch = launch
        self._repair = None
        if isinstance(sources, (int, np.integer)):
            sources = [sources]
        self.sources = np.asarray(list(sources), dtype=np.int64)     # external ids
        self.direction_optimizing = bool(direction_optimizing)
        self.library_transpose = bool(library_transpose)
        # the in-edges by the counting-sort kernels (algorithms.transpose_kernels): on with the fused kernels on a
        # GPU; ``transpose_launch``: a (launch, launch_blocks) pair replacing their launchers (the host emulation)
        self.fused_transpose = (self.fused and xp is not np) if fused_transpose is None else bool(fused_transpose)
        self.transpose_launch = transpose_launch
        self.library_bfs = bool(library_bfs) and xp is np and _has_scipy()
        # NumPy over a CSR structure: a batch without vertex events repairs by repair_host
        self.host_repair = bool(host_repair) and xp is np
        # a compiled static traversal is worth more incremental work
        self.cold_fraction = LIBRARY_FALLBACK if self.library_bfs else ARRAY_FALLBACK
        self.adaptive = fallback_fraction is None
        if fallback_fraction is None:
            fallback_fraction = max(MAX_REPAIR_FRACTION, self.cold_fraction)
        self.fallback_fraction = float(fallback_fraction)
        self._rates: list[float] = []          # traversal edges per changed edge, the last REPAIR_WINDOW repairs
        # the host repair's measured costs (_update_host): the last static runs' seconds, a repair's seconds
        # per edge, the last tries as [changes, edges read or projected, skips to wait, skips since] (_skips)
        self._static_seconds: list[float] = []
        self._edge_seconds: list[float] = []
        self._tries: list[list] = []
        self.dist = xp.zeros(0, dtype=DIST)
        self.parent = xp.zeros(0, dtype=np.int32)
        self.source_slots = xp.zeros(0, dtype=np.int64)              # resolved, -1 where unknown
        self.in_edges: InEdgeLog | None = None                       # in-edges: (dst, src)
        self._backlog: list = []          # per batch (deleted keys, inserted keys) not yet in in_edges
        self._backlog_keys = 0
        self._reached = 0                                            # running count (device scalar)
        self._scratch_for(0)
        self._ready = False
        self._slots_final = False       # every source has a slot (so an update adding vertices keeps them)

    def _scratch_for(self, capacity: int) -> None:
        """Scratch arrays over the slots, kept between batches; only touched ids are set and reset."""
        xp = self.xp
        have = int(self._flag.shape[0]) if getattr(self, "_flag", None) is not None else -1
        if have >= capacity:
            return
        capacity = max(int(capacity), 2 * have, 0)
        self._flag = xp.zeros(capacity, dtype=bool)
        self._ids = xp.empty(capacity + 1, dtype=np.int64)
        self._best = xp.full(capacity, NO_PARENT, dtype=np.uint64)

    def _remember_live(self, graph: DynamicGraph):
        """The live mask as a copy of a CSR structure's own (no list of live ids: it is built only if an
        output asks for it); other structures as :meth:`Job._remember_live`."""
        live = getattr(graph, "_live", None) if isinstance(graph, CSRGraph) else None
        if live is None or int(live.shape[0]) != int(graph.vertex_capacity):
            return super()._remember_live(graph)
        self._live_mask, self._live_ids = live.copy(), None
        return None, self._live_mask

    def _resolve(self, vertex_map):
        if self.sources.shape[0] == 0:
            return self.xp.zeros(0, dtype=np.int64)
        return self.xp.asarray(vertex_map.lookup(self.xp.asarray(self.sources)), dtype=np.int64)

    def run_static(self, graph: DynamicGraph, vertex_map) -> None:
        self._recompute(graph, vertex_map, keep_index=False)

    def _recompute(self, graph: DynamicGraph, vertex_map, keep_index: bool, live_mask=None, slots=None) -> None:
        """The static form; ``keep_index``: an update recomputes, keeping its in-edge index (and the
        queue of changes for it; the direction-optimizing form's transpose replaces both);
        ``live_mask``: the live set the update already followed from the delta;
        ``slots``: the sources' slots the update already has (else they are looked up)."""
        xp = self.xp
        t0 = time.perf_counter()
        if live_mask is None:
            live_mask = self._remember_live(graph)[1]
        cap = int(live_mask.shape[0])
        csr = graph.adjacency()
        if slots is None:
            slots = self._resolve(vertex_map)
            # whether every source has a slot: an update that adds vertices and removes none keeps them
            self._slots_final = bool((slots >= 0).all()) if slots.shape[0] else True
        self.source_slots = slots
        if not keep_index:
            self._drop_index()                  # built from the graph when an update first reads it
        bottom_up, index_work, found, reached = 0, 0, None, None
        if self.library_bfs:
            found = bfs_scipy(csr, cap, self.source_slots)
        if found is not None:
            self.dist, self.parent, levels, edges, reached = found
        elif self.direction_optimizing:
            in_csr = self._transpose(csr, cap)
            index_work = int(csr.num_edges)                                # the transpose
            if self.in_edges is not None:
                # the transpose is the whole index as it now is: it replaces a kept one, whose queued
                # changes it has (no fold of them later); what the kept one did before is counted
                index_work += self.in_edges.take_work()
            self.in_edges = InEdgeLog(xp, in_csr, launch=self._index_launch)     # its edges: counted above
            self.in_edges.take_work()
            self._backlog, self._backlog_keys = [], 0
            if self.fused:
                # the kernels count no reads: the traversal is charged the CSR's size
                out = CSR(offsets=_padded_offsets(xp, csr.offsets, cap), cols=csr.cols, weights=None)
                self.dist, self.parent, levels, info = bk.bfs_direction_optimizing(
                    xp, out, in_csr, self.source_slots, cap, parents=True, sorted_rows=True, launch=self.launch)
                edges, bottom_up, reached = int(csr.num_edges), info["bottom_up_levels"], info["reached"]
            else:
                self.dist, self.parent, levels, edges, bottom_up = bfs_direction_optimizing(
                    xp, csr, in_csr, cap, self.source_slots)
        else:
            self.dist, self.parent, levels, edges = bfs_arrays(xp, cap, self.source_slots,
                                                               csr_expander(xp, csr))
        self._reached = (self.dist >= 0).sum() if reached is None else reached
        self._ready = True                      # scratch arrays: allocated by the first update
        if xp is np:                            # what a repair may spend instead (_repair_budget)
            self._static_seconds = [*self._static_seconds, time.perf_counter() - t0][-3:]
        if self.in_edges is not None:
            index_work += self.in_edges.take_work()     # built here, or kept up to date by the update
        self.work = {"mode": "static", "iterations": levels, "bottom_up_levels": bottom_up,
                     "edges_touched": edges + index_work, "traversal_edges": edges,
                     "index_edges": index_work, "vertices_touched": cap}

    def _in_edge_index(self, graph: DynamicGraph) -> InEdgeLog:
        """The in-edge index, up to date: built from the graph's current edges the first time an
        update reads it (its cost lands in that update's work), else the batches queued since it was
        last read folded in (:meth:`_flush_backlog`)."""
        if self.in_edges is None:
            xp = self.xp
            csr = graph.adjacency()
            in_csr = self._transpose(csr, int(self._live_mask.shape[0]))
            self.in_edges = InEdgeLog(xp, in_csr, launch=self._index_launch)   # its work: the transpose's edges
            self._backlog, self._backlog_keys = [], 0
        self._flush_backlog(int(graph.vertex_capacity))
        return self.in_edges

    def _transpose(self, csr, rows: int):
        """The in-CSR (rows sorted) of the out-CSR ``csr`` over ``rows`` rows: the counting-sort kernels where
        ``fused_transpose`` (and a GPU or the tests' emulated launchers), else the library's or the array program's."""
        launch, blocks = self.transpose_launch or (None, None)      # transpose() itself falls back on the host
        return transpose(self.xp, csr, rows, self.library_transpose, fused=self.fused_transpose, launch=launch,
                         launch_blocks=blocks)

    @property
    def _index_launch(self):
        """The in-edge index's kernel launcher: the fused jobs fold batches into it by kernels too."""
        return (self.launch or bk.launcher) if self.fused else None

    def _drop_index(self) -> None:
        self.in_edges = None
        self._backlog, self._backlog_keys = [], 0

    def _queue_for_index(self, del_s, del_d, ins_s, ins_d) -> None:
        """Queue a batch's edge changes for the in-edge index; they are folded in when it is next read.

        A batch that never reads the index (a recompute, or a repair that cuts no tree edge) costs
        O(k) here instead of the index maintenance.  Once the log and the queue together outgrow a
        rebuild (:meth:`InEdgeLog.outgrown`), the index is dropped and rebuilt when next read.
        """
        if self.in_edges is None:
            return
        xp = self.xp
        k = int(del_s.shape[0]) + int(ins_s.shape[0])
        if k == 0:
            return
        if self._index_launch is not None:
            # the fused jobs: the batch's keys by one kernel, deleted then inserted in one array (a batch
            # folded alone is folded from it as it is)
            keys = bk.batch_keys(xp, del_s, del_d, ins_s, ins_d, launch=self._index_launch)
            nd = int(del_s.shape[0])
            self._backlog.append((keys[:nd], keys[nd:], keys))
        elif host_shortcuts(xp, del_s):
            # the host folds one batch from its edges (fold_edges)
            self._backlog.append((del_s, del_d, ins_s, ins_d))
        else:
            self._backlog.append((edge_keys(xp, del_d, del_s), edge_keys(xp, ins_d, ins_s)))
        self._backlog_keys += k
        if self.in_edges.outgrown(k, self._backlog_keys):
            self._drop_index()

    def _flush_backlog(self, bound: int | None = None) -> None:
        """Fold the queued batches into the index in one step (the newest change of each key decides);
        ``bound``: the structure's vertex capacity, when known."""
        if not self._backlog:
            return
        backlog = self._backlog
        self._backlog, self._backlog_keys = [], 0
        if len(backlog[0]) == 4:                  # the host's batches, one at a time, in their order (each a
            for batch in backlog:                 # BatchDelta's: no sort for the newest change of each edge)
                self.in_edges.fold_edges(*batch, bound=bound)
            return
        if len(backlog) <= FUSED_FOLDS and len(backlog[0]) == 3:
            # the fused jobs' batches (their keys as the kernel wrote them), each by the fused fold in order
            for gone, _new, keys in backlog:
                self.in_edges.fold_keys(keys, int(gone.shape[0]))
            return
        self.in_edges.fold([b[0] for b in backlog], [b[1] for b in backlog])

    def update(self, graph: DynamicGraph, delta: BatchDelta, vertex_map) -> None:
        xp = self.xp
        if not self._ready:
            return self.run_static(graph, vertex_map)
        if (self.host_repair and not self.fused and isinstance(graph, CSRGraph) and host_shortcuts(xp, self.dist)
                and delta.vertices_removed.shape[0] == 0 and delta.vertices_added.shape[0] == 0):
            return self._update_host(graph, delta, vertex_map)
        n_removed = int(delta.vertices_removed.shape[0])
        old = self.source_slots
        same_vertices = n_removed == 0 and int(delta.vertices_added.shape[0]) == 0
        self._scratch_for(max(int(self._live_mask.shape[0]), int(graph.vertex_capacity), 1))
        if same_vertices or (n_removed == 0 and self._slots_final):
            # no vertex went, and none came or every source has its slot (a vertex that comes takes a free
            # slot, so it cannot be a resolved source): the slots stand, no lookup and no read
            slots, restart = old, False
        else:
            removed = xp.asarray(delta.vertices_removed, dtype=np.int64)
            slots = self._resolve(vertex_map)
            restart = False
            if old.shape[0]:
                # A source that vanished or moved to another slot: its whole tree is gone; start over.
                flag = self._flag
                fill_at(xp, flag, removed, True)
                lost = (old >= 0) & ((slots != old) | flag[xp.maximum(old, 0)])
                fill_at(xp, flag, removed, False)
                restart, self._slots_final = (bool(x) for x in to_numpy(xp.stack([lost.any(),
                                                                                   (slots >= 0).all()])))
            else:
                self._slots_final = True
        if self.fused:
            # the kernels take the delta's int32 ids as they are (no copies)
            del_s, del_d, ins_s, ins_d = delta.deleted_src, delta.deleted_dst, delta.inserted_src, delta.inserted_dst
        else:
            ins_s, ins_d = delta.inserted_src.astype(np.int64), delta.inserted_dst.astype(np.int64)
            del_s, del_d = delta.deleted_src.astype(np.int64), delta.deleted_dst.astype(np.int64)
        # The index (if any) is kept through recomputes too, so that a later small batch does not
        # pay for a rebuild; the changes wait in a queue until a read needs them.
        self._queue_for_index(del_s, del_d, ins_s, ins_d)
        live_mask = self._follow_live(graph, delta)
        if restart or self._recomputes(int(delta.num_changed_edges), max(int(graph.num_edges), 1),
                                       cuts=bool(delta.deleted_src.shape[0])):
            return self._recompute(graph, vertex_map, keep_index=True, live_mask=live_mask, slots=slots)
        cap = int(live_mask.shape[0])
        if self.fused and self._fused_repair_takes(graph, delta, old, slots):
            return self._update_fused(graph, delta, cap, del_s, del_d, ins_s, ins_d)
        if self.fused:                            # the array program below takes int64 ids
            ins_s, ins_d = ins_s.astype(np.int64), ins_d.astype(np.int64)
            del_s, del_d = del_s.astype(np.int64), del_d.astype(np.int64)
        removed = xp.asarray(delta.vertices_removed, dtype=np.int64)
        added = xp.asarray(delta.vertices_added, dtype=np.int64)
        self._scratch_for(cap)
        flag, ids, best = self._flag, self._ids, self._best
        dist = grow(xp, self.dist, cap, -1)
        parent = grow(xp, self.parent, cap, -1)
        edges = levels = 0

        # 1. Cut tree edges: a vertex whose tree edge was deleted keeps its distance when another
        #    in-neighbour one level closer survives (it becomes the parent); the others lose it with
        #    their whole subtrees (walked down tree edges, one level per step).
        fresh_or_gone = distinct_by_scatter(xp, xp.concatenate([removed, added]), ids)
        flag[fresh_or_gone] = True                # neither a surviving parent nor a root to walk from
        cut_mask = (parent[del_d] == del_s) & (dist[del_d] > 0) & ~flag[del_d]
        n_cut = int(cut_mask.sum())
        cut = compact(xp, del_d, cut_mask, n_cut)   # distinct: one parent each
        invalid = [fresh_or_gone]
        level = cut[:0]
        if n_cut:
            flag[cut] = True                      # a cut vertex is no safe parent for another one
            level, kept = self._rescue(self._in_edge_index(graph), cut, dist, parent, flag, ids, cap)
            flag[kept] = False                    # rescued: their new parent is their tree edge now,
            flag[level] = True                    # so a walk that reaches that parent takes them too
        invalid.append(level)
        rows = host_rows(graph) if host_shortcuts(xp, dist) else None
        while level.shape[0]:
            if rows is not None:                  # the row's vertex repeated: no owner array
                counts, w = rows(level)
                up = np.repeat(level.astype(parent.dtype), counts)
            else:
                adj = graph.adjacency(level.astype(np.int32))
                w = adj.cols
                up = level[adj.row_ids().astype(np.int64)].astype(parent.dtype)
            edges += int(w.shape[0])
            child = (parent[w] == up) & ~flag[w] & (dist[w] > 0)
            level = compact(xp, w, child, int(child.sum()))   # distinct: one parent each
            flag[level] = True
            invalid.append(level)
            levels += 1
        inv = distinct_by_scatter(xp, xp.concatenate(invalid), ids)
        flag[inv] = False
        lost_reached = (dist[inv] >= 0).sum()
        dist[inv] = -1
        parent[inv] = -1
        vertices = int(inv.shape[0])

        # 2./3. Seeds: boundary of the invalidated region, inserted edges, newly resolved sources.
        cand_v, cand_key = [], []
        if inv.shape[0] > int(fresh_or_gone.shape[0]):   # in-neighbours of the invalidated with a distance
            owner, u = self._in_edge_index(graph).neighbours(inv)
            u = u.astype(np.int64)
            ok = dist[u] >= 0
            cand_v.append(inv[owner[ok]])
            cand_key.append(((dist[u[ok]].astype(np.int64) + 1) << 32) | u[ok])
        if ins_s.shape[0]:
            du = dist[ins_s]
            ok = (du >= 0) & ((dist[ins_d] < 0) | (dist[ins_d] > du + 1))
            cand_v.append(ins_d[ok])
            cand_key.append(((du[ok].astype(np.int64) + 1) << 32) | ins_s[ok])
        if same_vertices and old.shape[0]:        # same slots: no source appeared
            new_sources = slots[:0]
        else:
            new_sources = slots[(slots >= 0) & (old < 0)] if old.shape[0] else slots[slots >= 0]
            new_sources = new_sources[dist[new_sources] != 0] if new_sources.shape[0] else new_sources
        if new_sources.shape[0]:
            cand_v.append(new_sources)
            cand_key.append(xp.zeros(new_sources.shape[0], dtype=np.int64))   # key 0: level 0, no parent
        seeds = xp.zeros(0, dtype=np.int64)
        newly = 0
        if cand_v:
            v = xp.concatenate(cand_v)
            key = xp.concatenate(cand_key)
            if v.shape[0]:
                vertices += int(v.shape[0])
                scatter_min(xp, best, v, key.astype(np.uint64))           # the best (level, parent) per seed
                seeds = distinct_by_scatter(xp, v, ids)
                bk = best[seeds].astype(np.int64)
                best[seeds] = NO_PARENT
                is_src = bk == 0
                label = xp.where(is_src, 0, bk >> 32).astype(DIST)
                par = xp.where(is_src, -1, bk & 0xFFFFFFFF).astype(np.int32)
                cur = dist[seeds]
                better = (cur < 0) | (label < cur)
                newly = (cur[better] < 0).sum()
                seeds = seeds[better]
                dist[seeds] = label[better]
                parent[seeds] = par[better]

        # 4. Relax outward from the seeds, reading only the rows whose distance changes.
        if rows is not None:
            more_levels, more_edges, relaxed, more_new = relax_rounds_host(dist, parent, seeds, rows, ids)
        else:
            more_levels, more_edges, relaxed, more_new = relax_rounds(xp, dist, parent, seeds,
                                                                      graph_expander(xp, graph), ids, best)
        self._reached = self._reached - lost_reached + newly + more_new
        self.dist, self.parent, self.source_slots = dist, parent, slots
        index_work = self.in_edges.take_work() if self.in_edges is not None else 0
        self.work = {"mode": "incremental", "iterations": levels + more_levels,
                     "edges_touched": edges + more_edges + index_work, "index_edges": index_work,
                     "vertices_touched": vertices + relaxed + int(delta.num_changed_edges),
                     "invalidated": int(inv.shape[0]), "seeds": int(seeds.shape[0])}
        self._learn_rate(int(delta.num_changed_edges))

    def _update_host(self, graph: CSRGraph, delta: BatchDelta, vertex_map) -> None:
        """A batch that adds and removes no vertex, on NumPy over a CSR structure: :func:`repair_host`
        (the sources keep their slots; the rest as :meth:`update`)."""
        # the ids that index arrays as native ints, once (NumPy converts an int32 index on every use)
        del_s, del_d = delta.deleted_src, delta.deleted_dst.astype(np.intp)
        ins_s, ins_d = delta.inserted_src.astype(np.intp), delta.inserted_dst.astype(np.intp)
        k = int(del_s.shape[0]) + int(ins_s.shape[0])
        if self.in_edges is not None and k:       # queued for the index (_queue_for_index)
            self._backlog.append((del_s, del_d, ins_s, ins_d))
            self._backlog_keys += k
            if self.in_edges.outgrown(k, self._backlog_keys):
                self._drop_index()
        live_mask = self._live_mask               # no vertex came or went: the live set stands
        if live_mask.shape[0] < graph.vertex_capacity:
            live_mask = self._follow_live(graph, delta)
        m = max(int(graph.num_edges), 1)
        budget = self._repair_budget(m) if self.adaptive else None
        if k > self.fallback_fraction * m or (budget is not None and self._skips(k, budget)):
            return self._recompute(graph, vertex_map, keep_index=True, live_mask=live_mask)
        cap = int(live_mask.shape[0])
        self._scratch_for(cap)
        dist = grow(np, self.dist, cap, -1)
        parent = grow(np, self.parent, cap, -1)
        all_reached = int(self._reached) == graph.num_vertices          # every live vertex has a distance
        build = [0]

        def index_of():                           # a build is no repair's cost: taken out of the budget
            fresh = self.in_edges is None
            index = self._in_edge_index(graph)
            if fresh:
                build[0] = index.take_work()
            return index
        t0 = time.perf_counter()
        info = repair_host(dist, parent, graph.adjacency(), index_of, self._ids,
                           del_s, del_d, ins_s, ins_d, all_reached, budget)
        seconds = time.perf_counter() - t0
        index_work = self.in_edges.take_work() if self.in_edges is not None else 0
        units = info["edges"] + index_work
        index_work += build[0]
        if not build[0] and units * LEARN_FROM >= m:     # large enough that edges, not calls, cost
            rate = seconds / units
            self._edge_seconds = [*self._edge_seconds, rate][-5:]
        if budget is not None and k:
            self._remember_try(k, info["projected"], budget)
        if info["aborted"]:                       # past the budget: the static form, the repair's reads counted
            self._recompute(graph, vertex_map, keep_index=True, live_mask=live_mask)
            w = self.work
            w["edges_touched"] += info["edges"] + index_work
            w["index_edges"] += index_work
            w["aborted_repair_edges"] = info["edges"]
            w["vertices_touched"] += info["vertices"] + k
            return None
        self._reached = self._reached + info["reached_change"]
        self.dist, self.parent = dist, parent
        self.work = {"mode": "incremental", "iterations": info["iterations"],
                     "edges_touched": info["edges"] + index_work, "index_edges": index_work,
                     "vertices_touched": info["vertices"] + k,
                     "invalidated": info["invalidated"], "seeds": info["seeds"]}
        self._learn_rate(k)

    def _repair_budget(self, m: int) -> float:
        """The edges a host repair may read (traversal and in-rows, repair_host): as many as take one static
        run's time, both measured (the median of the last three static runs' seconds over the least seconds
        per edge of the last five large repairs; before one, a repair edge is taken to cost PRIOR_EDGE_COST
        static edges)."""
        static = sorted(self._static_seconds)[len(self._static_seconds) // 2] if self._static_seconds else None
        if static is None:
            return PRIOR_BUDGET * m
        # the fastest of the last large repairs: a repair slowed by a busy machine does not shrink the budget
        # of the next ones (an abort still bounds a try)
        per_edge = min(self._edge_seconds) if self._edge_seconds else PRIOR_EDGE_COST * static / m
        return static / per_edge

    def _similar_try(self, k: int):
        """The last try within a factor SIMILAR_SIZE of ``k`` changes, or None."""
        for t in reversed(self._tries if k else ()):
            if t[0] * SIMILAR_SIZE >= k and t[0] <= k * SIMILAR_SIZE:
                return t
        return None

    def _skips(self, k: int, budget: float) -> bool:
        """Whether a batch of ``k`` changes recomputes without trying the repair: the last try of a
        similar size (within a factor SIMILAR_SIZE) read, or was projected to read where it stopped at the
        budget, more than HOPELESS x ``budget`` edges once scaled to ``k``.  The repair is tried again after
        that try's number of skips (the graph changes): RETRY_AFTER, doubled after every hopeless retry up
        to MAX_RETRY_AFTER, so that sizes that never fit cost about one abort in that many batches.  A try
        projected near the budget is tried again at once: an abort costs at most one budget, a repair that
        fits saves most of a static run."""
        t = self._similar_try(k)
        if t is None or t[1] * k / t[0] <= HOPELESS * budget or t[3] >= t[2]:
            return False
        t[3] += 1
        return True

    def _remember_try(self, k: int, projected: float, budget: float) -> None:
        """A try's changes and edges (read, or projected where it stopped), with the skips to wait after it
        where it is hopeless (_skips): twice the last similar try's when that one was hopeless too."""
        before = self._similar_try(k)
        wait = RETRY_AFTER
        if before is not None and before[1] * k / before[0] > HOPELESS * budget and projected > HOPELESS * budget:
            wait = min(2 * before[2], MAX_RETRY_AFTER)
        self._tries = [*self._tries, [k, projected, wait, 0]][-REPAIR_WINDOW:]

    def _recomputes(self, k: int, edges: int, cuts: bool = True) -> bool:
        """Whether a batch of ``k`` changes recomputes (module docstring, "When an update recomputes");
        ``cuts``: the batch deletes edges (else the repair reads no in-edge index: no index term)."""
        if k > self.fallback_fraction * edges:
            return True
        if not self.adaptive:
            return False
        if not self._rates:
            return k > self.cold_fraction * edges
        return (max(self._rates) + (math.log2(edges) if cuts else 0.0)) * k > REPAIR_BUDGET * edges

    def _learn_rate(self, k: int) -> None:
        """The repair's traversal edges (index maintenance left out) per changed edge."""
        if k:
            w = self.work
            rate = max(int(w["edges_touched"]) - int(w["index_edges"]), 0) / k
            self._rates = [*self._rates, rate][-REPAIR_WINDOW:]

    def _fused_repair_takes(self, graph, delta, old, slots) -> bool:
        """Whether the fused kernels repair this batch.  No vertex may have gone (the kernels have no
        step for a removed vertex's tree), and every source keeps its slot (none newly resolved: a new
        root is the array program's seed); vertices that came start unreached, as the kernels assume of
        any slot past the old distances.  The kernels read the out-rows from a CSR: a ``csr``
        structure's own, or another structure's :meth:`adjacency` - a pass over all edges, taken only
        when the graph has at most :data:`FUSED_ADJACENCY_PER_CHANGE` edges per changed edge (a batch
        of >= 0.4% of the edges, where that pass costs less than the array program's few hundred
        host operations, and never for the small batches an update must keep proportional)."""
        if delta.vertices_removed.shape[0]:
            return False
        if slots is not old and old.shape[0] and not bool((slots == old).all()):
            return False
        if isinstance(graph, CSRGraph):
            return True
        return int(graph.num_edges) <= FUSED_ADJACENCY_PER_CHANGE * max(int(delta.num_changed_edges), 1)

    def _update_fused(self, graph, delta, cap, del_s, del_d, ins_s, ins_d) -> None:
        """The repair by the fused kernels (:func:`algorithms.bfs_kernels.bfs_repair`): same steps and
        result as the array program below, one read of its counters per batch as a rule (when it is
        taken: :meth:`_fused_repair_takes`)."""
        xp = self.xp
        dist = grow(xp, self.dist, cap, -1)
        parent = grow(xp, self.parent, cap, -1)
        # only a deleted edge cuts the tree: a batch of insertions reads no in-edge (its changes stay queued
        # for the index, as the array program leaves them when it cuts nothing)
        index = self._in_edge_index(graph) if int(del_s.shape[0]) else None
        if self._repair is None or self._repair.capacity < cap:
            have = self._repair.capacity if self._repair is not None else 0
            self._repair = bk.RepairScratch(xp, max(cap, 2 * have))
        csr = graph.adjacency()
        # vertices that came may lie past the CSR's rows: their rows are empty
        out = csr if csr.offsets.shape[0] > cap else CSR(offsets=_padded_offsets(xp, csr.offsets, cap),
                                                         cols=csr.cols, weights=None)
        info = bk.bfs_repair(xp, out, index, dist, parent, self._repair, del_s, del_d, ins_s, ins_d,
                             launch=self.launch)
        self._reached = self._reached + info["reached_change"]
        self.dist, self.parent = dist, parent
        index_work = index.take_work() if index is not None else 0
        self.work = {"mode": "incremental", "fused": True,
                     "iterations": info["walk_levels"] + info["relax_rounds"],
                     "edges_touched": info["edges"] + index_work, "index_edges": index_work,
                     "vertices_touched": info["cut"] + info["invalidated"] + info["touched"]
                     + int(delta.num_changed_edges),
                     "invalidated": info["invalidated"], "seeds": info["touched"], "syncs": info["syncs"]}
        self._learn_rate(int(delta.num_changed_edges))

    def _rescue(self, index, cut, dist, parent, flag, ids, cap):
        """Split the cut vertices into (lost, kept): a kept one has an in-neighbour one level closer
        that is not flagged, and takes it as its parent (one read of the cut vertices' in-rows)."""
        xp = self.xp
        owner, u = index.neighbours(cut)
        u = u.astype(np.int64)
        m = int(cut.shape[0])
        alive = (dist[u] == dist[cut][owner] - 1) & ~flag[u]
        ids[xp.where(alive, cut[owner], cap)] = u            # one surviving parent each (last writer)
        has = xp.zeros(m + 1, dtype=bool)
        has[xp.where(alive, owner, m)] = True
        has = has[:m]
        n_kept = int(has.sum())
        kept = compact(xp, cut, has, n_kept)
        parent[kept] = ids[kept].astype(parent.dtype)
        return compact(xp, cut, ~has, m - n_kept), kept

    # -- results ---------------------------------------------------------------------------
    def columns(self, vertex_map) -> dict:
        # its own: the parents' external ids gathered for the live rows only, with any vertex map (slot_columns
        # gathers them for every slot the pipeline's vertex map has)
        xp = self.xp
        live = self._live
        dist = self.dist[live]
        par = self.parent[live]
        has = par >= 0
        # every row gathers a live id (its parent's, or its own, masked out): no read of how many have a parent
        ext = xp.where(has, xp.asarray(vertex_map.external(xp.where(has, par, live)), dtype=np.int64), 0)
        return {"vertex": self._vertex_column(vertex_map), "distance": (dist.astype(np.int64), None),
                "parent": (ext, has)}

    def slot_columns(self, vertex_map):
        n = min(int(self.parent.shape[0]), int(vertex_map.external_of.shape[0]))
        ext, has = parent_ids(self.xp, self.parent[:n], vertex_map.external_of)
        return self._live_mask, {"distance": (self.dist, None, np.int64), "parent": (ext, has, np.int64)}

    def reached(self) -> int:
        """Live vertices with a distance (a running count: no pass over the vertices)."""
        return int(self._reached)

    def summary(self) -> dict:
        return {"bfs_reached": self.reached(), "bfs_levels": int(self.work.get("iterations", 0)),
                "bfs_edges_touched": int(self.work.get("edges_touched", 0))}

    def state(self) -> dict:
        if self.in_edges is not None:
            self._flush_backlog()
        return {**self._host(dist=self.dist, parent=self.parent, source_slots=self.source_slots,
                             in_edge_keys=self.in_edges.keys if self.in_edges is not None
                             else self.xp.zeros(0, dtype=np.int64), live=self._live),
                "in_edge_index": self.in_edges is not None, "sources": self.sources.copy()}

    def load_state(self, state: dict) -> None:
        self.dist = self._device(state["dist"], DIST)
        self.parent = self._device(state["parent"], np.int32)
        self.source_slots = self._device(state["source_slots"], np.int64)
        self._slots_final = False                   # found out by the next update that adds vertices
        self.in_edges = (InEdgeLog.from_keys(self.xp, self._device(state["in_edge_keys"], np.int64),
                                             int(state["dist"].shape[0]), launch=self._index_launch)
                         if bool(state.get("in_edge_index", True)) else None)
        if self.in_edges is not None:
            self.in_edges.take_work()
        self._backlog, self._backlog_keys = [], 0
        self._set_live(self._device(state["live"], np.int64), int(self.dist.shape[0]))
        cap = int(self._live_mask.shape[0])
        self.dist = grow(self.xp, self.dist, cap, -1)
        self.parent = grow(self.xp, self.parent, cap, -1)
        self._reached = (self.dist[self._live] >= 0).sum()
        self._scratch_for(cap)
        self.sources = np.asarray(state["sources"], dtype=np.int64)
        self._ready = True
