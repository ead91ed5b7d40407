"""BFS's in-edge index: a CSR snapshot of the in-edges with an alive bit per edge, plus a sorted log of
the edges inserted since that the snapshot never had.

Incremental BFS reads in-neighbours (a cut vertex looking for another parent one
level closer, the boundary of an invalidated subtree), and a structure answers
out-adjacency only, so the job keeps its own in-edges.  A sorted array of all
``(dst << 32) | src`` keys (:class:`~algorithms.edge_index.SortedEdgeIndex`)
answers a row by two binary searches over all |E| keys and takes every change by
binary searches over them too: on coAuthorsDBLP that was about 20 searches of
2M keys, 0.9 ms of a 1.7 ms 196-change update.  Here:

* the snapshot: the transpose of the out-CSR at the last rebuild (``offsets``,
  ``cols``; a row is read by its offsets, no search; on a GPU also its sorted
  keys, ``snapshot_keys``) and ``alive``, one flag per snapshot edge;
* ``extra``: sorted keys inserted since that are not snapshot edges;

so the live in-edges are the alive snapshot edges plus ``extra`` (disjoint).

**A batch** of ``k`` changes is folded in by finding its keys in the snapshot
(a bisection of each key's row on the host, a binary search of the snapshot's keys
on a GPU): a snapshot edge flips its alive bit (O(1)), and
only the others touch ``extra`` (a sort of them, binary searches, a pass over
``extra``).  Once the changes since the snapshot outgrow
``max(min_pending, min(4 sqrt(|E| k), |E| / 16))`` the owner drops the index and
rebuilds it from the graph when next read (one transpose, ``O(|E|)``): the
amortised cost of the passes over ``extra`` and of a rebuild balance there.

On the host the flags of deleted snapshot edges are deferred: their keys wait in
a small sorted ``recent_dead`` array (a pass over it per batch) and are found in
the snapshot together once it passes :data:`RECENT_DEAD` keys, so a batch costs
a few operations on small arrays instead of a search per key in the snapshot.
BFS's host repair folds its batches by :meth:`InEdgeLog.fold_edges` instead, in
about fifteen operations on small arrays and no read of the snapshot: a deleted
edge joins ``gone`` (sorted keys of deletions not yet taken out, masked by the
reads), an inserted one leaves ``gone`` if it is there and otherwise joins
``fresh`` (sorted, a few thousand keys, merged into ``extra`` past
:data:`FRESH_KEYS`); a flag per row (``has_extra``) tells a read whether to look
in the logs.  Past :data:`GONE_KEYS` keys, ``gone`` is taken out all at once
(:meth:`InEdgeLog._settle_gone`: one scan of their rows, long rows bisected
together, :meth:`InEdgeLog._locate`; the keys leave ``extra`` and ``fresh`` too).
A search of a batch's rows in the snapshot had cost a 196-change update on
coAuthorsDBLP a fifth to a third of its time: one cache miss or more per row
for every deletion, where the rows a repair reads are those of the few cut
vertices (bench-results/2026-11-26-cpu-bfsinc).

**Reading** rows ``V``: the snapshot's rows by their offsets, less the edges
whose alive bit is off (a gather) and those in ``recent_dead`` or ``gone``
(binary searches in them); plus the ranges of ``extra`` and ``fresh`` for ``V``
(two binary searches each).

``work`` counts the keys read or written since the caller last took it
(:meth:`take_work`), a binary search as ``ceil(log2(size + 1))`` keys.  Array
programs over ``xp``; the fused GPU repair (:mod:`algorithms.bfs_kernels`) reads
the same arrays inside its kernels.
"""
from __future__ import annotations

import math

import numpy as np

from vinestream.algorithms.edge_index import insert_sorted
from vinestream.structures.array_ops import LOW32, compact, member, range_positions, segmented_arange
from vinestream.structures.csr_types import CSR, VERTEX_DTYPE
from vinestream.structures.raw_kernels import i64

#: deferred deletions (host) kept before their alive flags are set: reads search them (a small array)
RECENT_DEAD = 4096
#: the host's newest extra keys wait in an unsorted array of at most this many (InEdgeLog.fresh)
FRESH_KEYS = 2048
#: the host's deleted keys wait, sorted, in InEdgeLog.gone until there are more than this many (fold_edges)
GONE_KEYS = 4096
#: a rows_host read of more entries than this takes its rows' gone keys out of the snapshot first
#: (InEdgeLog._settle_rows) instead of searching gone for every entry
GONE_SCAN = 4096
#: the host finds changed edges in the snapshot by a scan of their rows (:meth:`InEdgeLog._locate`) while the
#: scan reads at most SCAN_BUDGET entries; past that, rows longer than SCAN_ROW (SCAN_ROW_MANY for more than
#: MANY_KEYS edges) are bisected instead
SCAN_BUDGET = 16384
SCAN_ROW = 256
SCAN_ROW_MANY = 32
MANY_KEYS = 4096


def _search_cost(queries: int, size: int) -> int:
    return int(queries) * max(1, math.ceil(math.log2(int(size) + 1))) if size else 0


def newest_changes(xp, gone, new):
    """(deleted, inserted): the distinct keys of one or more batches by their newest change.

    ``gone`` / ``new``: lists of key arrays in arrival order, each batch's deletions before its
    insertions (``gone[i]`` then ``new[i]``).  One stable sort by key; the last entry of each key
    decides.  Both outputs sorted and disjoint.
    """
    parts, adds = [], []
    for g, n in zip(gone, new):
        parts += [g, n]
        adds += [xp.zeros(g.shape[0], dtype=bool), xp.ones(n.shape[0], dtype=bool)]
    keys = xp.concatenate(parts) if len(parts) > 1 else parts[0]
    is_add = xp.concatenate(adds)
    if keys.shape[0] == 0:
        return keys, keys
    # equal keys keep their arrival order (CuPy's sorts are always stable and take no ``kind``)
    order = xp.argsort(keys, kind="stable") if xp is np else xp.argsort(keys)
    keys, is_add = keys[order], is_add[order]
    last = xp.empty(keys.shape[0], dtype=bool)
    last[-1] = True
    xp.not_equal(keys[1:], keys[:-1], out=last[:-1])
    keys, is_add = keys[last], is_add[last]
    return keys[~is_add], keys[is_add]


def _merge_distinct(xp, a, b):
    """Sorted ``a`` with the keys of sorted distinct ``b`` not already in it, still sorted."""
    nb = int(b.shape[0])
    if nb == 0:
        return a
    if int(a.shape[0]) == 0:
        return b
    at = xp.searchsorted(a, b)
    hit = a[xp.minimum(at, a.shape[0] - 1)] == b
    if bool(hit.any()):
        b = b[~hit]
    return insert_sorted(xp, a, b)


def _merge(xp, a, b):
    """Sorted ``a`` and sorted ``b`` as one sorted array (equal keys allowed: ``a``'s first)."""
    na, nb = int(a.shape[0]), int(b.shape[0])
    if nb == 0:
        return a
    if na == 0:
        return b
    out = xp.empty(na + nb, dtype=a.dtype)
    at_b = xp.searchsorted(a, b, side="right") + xp.arange(nb, dtype=np.int64)
    if xp is np:                          # b's places by nb searches, a around them by one mask
        is_b = np.zeros(na + nb, dtype=bool)
        is_b[at_b] = True
        out[at_b] = b
        out[~is_b] = a
        return out
    at_a = xp.searchsorted(b, a, side="left") + xp.arange(na, dtype=np.int64)   # a rank merge: no sync
    out[at_a] = a
    out[at_b] = b
    return out


def _without(xp, a, b):
    """Sorted ``a`` less the keys of sorted ``b`` (absent ones ignored)."""
    if int(a.shape[0]) == 0 or int(b.shape[0]) == 0:
        return a
    pos = xp.minimum(xp.searchsorted(a, b), a.shape[0] - 1)
    hit = a[pos] == b
    keep = xp.ones(a.shape[0], dtype=bool)
    keep[pos[hit]] = False
    return a[keep]


class InEdgeLog:
    """In-edges as a CSR snapshot with an ``alive`` mask plus a sorted ``extra`` key log (see the module
    docstring)."""

    def __init__(self, xp, snapshot: CSR, *, min_pending: int = 4096, launch=None):
        self.xp = xp
        #: a kernel launcher (``algorithms.bfs_kernels.launcher`` or a test's host emulation): a batch is
        #: folded in by the fused kernels (:meth:`_fold_fused`); None: the array program
        self.launch = launch
        self.offsets = snapshot.offsets.astype(np.int64, copy=False)
        self.ends = self.offsets[1:]                 # row ends: a view (a row's end without an add per read)
        self.cols = snapshot.cols.astype(VERTEX_DTYPE, copy=False)
        self.rows = int(self.offsets.shape[0]) - 1
        self.snapshot_edges = int(self.cols.shape[0])
        # A GPU finds a key in the snapshot by one binary search over its keys (one launch); the host
        # bisects the key's row instead (a few steps of the batch's size, each row a few cache lines),
        # since k searches over all |E| keys miss the cache ~log2|E| times each (0.35 ms for 196 keys
        # on coAuthorsDBLP).
        # (built when first searched: the fused fold bisects rows instead and never needs them)
        self.snapshot_keys = None
        self._keyed = xp is not np
        self.alive = xp.ones(self.snapshot_edges + 1, dtype=bool)     # a spare last flag: see fold
        # the host defers the alive flags of deleted snapshot edges: their keys wait, sorted, in
        # ``recent_dead`` and are found in the snapshot all at once past RECENT_DEAD keys (a GPU
        # flips the flags at once: one binary search, one launch)
        self.recent_dead = xp.empty(0, dtype=np.int64)          # (empty: no fill to launch)
        self.extra = xp.empty(0, dtype=np.int64)
        # the host's newest extra keys (fold_edges): a small sorted array (a batch's keys sorted into it: a
        # merge of two runs), merged into ``extra`` past FRESH_KEYS, so that a batch moves a few thousand keys
        # rather than all of ``extra``; rows_host searches it as it searches ``extra`` (the same code, no
        # pass over it); every other reader merges it first (_merge_fresh): the rest of the class (and the
        # GPU) see one sorted array
        self.fresh = xp.empty(0, dtype=np.int64)
        # host: a flag per row that may hold keys of extra or fresh (set when a key joins them, never cleared
        # before a rebuild), so that rows_host searches the logs only when a row it reads has one
        self.has_extra = np.zeros(self.rows + 1, dtype=bool) if xp is np else None
        # host (fold_edges): the keys of deleted edges not yet taken out of the snapshot, ``extra`` or ``fresh``,
        # sorted; a read masks them (rows_host), and past GONE_KEYS they are taken out all at once
        # (_settle_gone): a batch's deletions cost an append here instead of a search of their rows, whose
        # cache misses were most of a small batch's fold (a fifth to a third of a 196-change update)
        self.gone = np.empty(0, dtype=np.int64) if xp is np else None
        self.deleted_since = 0              # snapshot deletions folded in (an upper bound on the dead ones)
        # a deferred fold may leave a key both in ``extra`` and dead in the snapshot (see _fold_deferred and
        # fold_edges): the eager folds handle that (every changed key leaves ``extra`` first)
        self.mixed = False
        self.min_pending = int(min_pending)
        self.work = int(self.snapshot_edges) * (1 if xp is np else 2)   # read every edge (and wrote its key)

    def _all_snapshot_keys(self):
        """The snapshot's keys, sorted (rows in order, each row's columns sorted)."""
        xp = self.xp
        rows = xp.repeat(xp.arange(self.rows, dtype=np.int64), xp.diff(self.offsets)) if xp is np else \
            segmented_arange(xp, self.offsets[:-1], xp.diff(self.offsets))[0]
        return (rows << 32) | self.cols.astype(np.int64)

    def _find(self, keys):
        """(position, found) of each key among the snapshot's edges.  A GPU searches the snapshot's keys; the
        host scans or bisects the keys' rows (:meth:`_locate`, which counts its reads in ``work``)."""
        xp = self.xp
        e = self.snapshot_edges
        if self._keyed and self.snapshot_keys is None:
            self.snapshot_keys = self._all_snapshot_keys()
            self.work += e
        if self.snapshot_keys is not None:
            pos = xp.minimum(xp.searchsorted(self.snapshot_keys, keys), e - 1)
            return pos, self.snapshot_keys[pos] == keys
        v = keys >> 32
        u = (keys & LOW32).astype(VERTEX_DTYPE)
        inside = (v < self.rows).nonzero()[0]
        if inside.shape[0] < v.shape[0]:         # rows past the snapshot hold none of its edges
            key_at, at = self._locate(v[inside], u[inside])
            key_at = inside[key_at]
        else:
            key_at, at = self._locate(v, u)
        pos = np.zeros(v.shape[0], dtype=np.int64)
        pos[key_at] = at
        found = np.zeros(v.shape[0], dtype=bool)
        found[key_at] = True
        return pos, found

    def _locate(self, dst, src):
        """The host's search for edges ``src -> dst`` (``dst`` within the snapshot's rows) among the snapshot's
        edges: ``(which, position)``, the indices of the edges found and their positions.

        A row is scanned (all of them in one gather and one compare) unless the scan would read more than
        :data:`SCAN_BUDGET` entries: then the rows past :data:`SCAN_ROW` entries (:data:`SCAN_ROW_MANY` for
        a batch of more than :data:`MANY_KEYS` edges, where a step costs its elements rather than its
        call) are bisected, all together, in ``log2`` of the longest steps.  ``work``: the entries scanned
        plus the bisection steps.
        """
        k = int(dst.shape[0])
        if k == 0:
            return dst[:0].astype(np.int64), dst[:0].astype(np.int64)
        starts = self.offsets[dst]
        counts = self.ends[dst] - starts
        seg = np.add.accumulate(counts)
        total = int(seg[-1])
        long = None
        if total > SCAN_BUDGET:
            long = (counts > (SCAN_ROW if k <= MANY_KEYS else SCAN_ROW_MANY)).nonzero()[0]
            if long.shape[0]:
                lo = starts[long]
                n = counts[long]
                u = src[long]
                end = lo + n
                steps = int(n.max()).bit_length()
                for _ in range(steps):            # bisect the long rows together: the last column below u
                    half = n >> 1                 # (a row of one entry stays put)
                    mid = lo + half
                    lo = np.where(self.cols[mid] < u, mid, lo)
                    n -= half
                lo += self.cols[lo] < u           # the first column at or past u
                found_l = (lo < end).nonzero()[0]
                found_l = found_l[self.cols[lo[found_l]] == u[found_l]]
                self.work += int(long.shape[0]) * (steps + 2)
                counts[long] = 0
                seg = np.add.accumulate(counts)
                total = int(seg[-1])
            else:
                long = None
        pos = range_positions(starts, counts, seg, total)
        hit = (self.cols[pos] == src.repeat(counts)).nonzero()[0]   # at most one per edge: rows are sets
        at = pos[hit]
        which = seg.searchsorted(hit, side="right")                     # the edge each hit is
        self.work += total + k
        if long is not None:
            which = np.concatenate((which, long[found_l]))
            at = np.concatenate((at, lo[found_l]))
        return which, at

    @property
    def pending(self) -> int:
        """Changes since the snapshot: deletions folded in plus the keys of ``extra``."""
        return int(self.deleted_since + self.extra.shape[0] + self.fresh.shape[0])

    def take_work(self) -> int:
        work, self.work = self.work, 0
        return work

    def _merge_fresh(self) -> None:
        """Move ``fresh`` into ``extra`` (the keys of both are distinct)."""
        if self.fresh.shape[0]:
            self.extra = _merge(self.xp, self.extra, self.fresh)            # (fresh is sorted)
            self.work += int(self.extra.shape[0]) + int(self.fresh.shape[0])
            self.fresh = self.fresh[:0]

    def outgrown(self, batch: int, queued: int = 0) -> bool:
        """Whether the log plus ``queued`` keys not yet folded in have outgrown a rebuild, for batches
        of ``batch`` changes: past ``4 sqrt(|E| batch)`` a batch's pass over ``extra`` costs more than
        its share of a rebuild, and past ``|E| / 16`` the log is worth a rebuild for any batch."""
        e = max(self.snapshot_edges, 1)
        limit = max(self.min_pending, min(4 * math.isqrt(e * max(int(batch), 1)), e // 16))
        return self.pending + int(queued) > limit

    # -- updating -----------------------------------------------------------------------
    def _settle(self) -> None:
        """Turn the deferred deletions into alive flags (one search of all of them in the snapshot), and
        merge ``fresh`` into ``extra``, and take the host's ``gone`` keys out (_settle_gone): what every reader of
        the arrays but the host's rows_host expects."""
        self._settle_gone()
        self._merge_fresh()
        if self.recent_dead.shape[0] == 0:
            return
        xp, e = self.xp, self.snapshot_edges
        pos, hit = self._find(self.recent_dead)
        self.alive[xp.where(hit, pos, e)] = False
        if self.snapshot_keys is not None:       # (the host's search counts its own reads)
            self.work += _search_cost(self.recent_dead.shape[0], e)
        self.recent_dead = xp.zeros(0, dtype=np.int64)

    def _fold_deferred(self, deleted, inserted) -> None:
        """One net batch on the host: a deleted key leaves ``extra`` if it is there, else (a live
        snapshot edge) joins ``recent_dead``; an inserted key leaves ``recent_dead`` if it is there
        (the snapshot edge is live again), else joins ``extra`` (a deleted snapshot edge whose flag
        is already off may then be in both: the snapshot's copy is not read)."""
        xp = self.xp
        self._merge_fresh()
        g, n = np.sort(deleted), np.sort(inserted)
        sizes = int(self.extra.shape[0]) + int(self.recent_dead.shape[0])
        if self.extra.shape[0] and g.shape[0]:
            in_x = member(xp, self.extra, g)
            self.work += _search_cost(g.shape[0], self.extra.shape[0])
            if in_x.any():
                self.extra = _without(xp, self.extra, g[in_x])
                g = g[~in_x]
        self.recent_dead = _merge(xp, self.recent_dead, g)
        if self.recent_dead.shape[0] and n.shape[0]:
            back = member(xp, self.recent_dead, n)
            self.work += _search_cost(n.shape[0], self.recent_dead.shape[0])
            if back.any():
                self.recent_dead = _without(xp, self.recent_dead, n[back])
                n = n[~back]
        self.extra = _merge(xp, self.extra, n)
        self._flag_rows(n)
        self.mixed = True
        self.deleted_since += int(deleted.shape[0])
        self.work += int(deleted.shape[0] + inserted.shape[0]) + sizes + int(self.extra.shape[0]) \
            + int(self.recent_dead.shape[0])
        if self.recent_dead.shape[0] > RECENT_DEAD:
            self._settle()

    def fold(self, gone, new) -> None:
        """Apply batches of deleted / inserted keys (lists of key arrays, see :func:`newest_changes`).

        Every key is searched in the snapshot's keys once: a snapshot edge just flips its ``alive``
        bit; only keys the snapshot never had go to (or leave) ``extra``.  One batch (a
        :class:`~structures.delta.BatchDelta`: its deletions were live edges, its insertions were
        not) needs no dedupe; several batches (queued through recomputes) go by their newest change
        per key.  A GPU reads back the two counts of non-snapshot keys (one transfer).
        """
        xp = self.xp
        k = sum(int(g.shape[0]) + int(n.shape[0]) for g, n in zip(gone, new))
        if k == 0:
            return
        self._settle_gone()                       # (the deferred fold below keeps no ``gone`` keys)
        single = len(gone) == 1
        if single and self.launch is not None:
            return self._fold_fused(gone[0], new[0])
        if single and xp is np:
            return self._fold_deferred(gone[0], new[0])
        self._fold_eager(gone, new, k)

    def _fold_eager(self, gone, new, k: int) -> None:
        """:meth:`fold` with every key found in the snapshot now (no deferred deletions)."""
        xp = self.xp
        single = len(gone) == 1
        self._settle()
        deleted, inserted = (gone[0], new[0]) if single else newest_changes(xp, gone, new)
        nd = int(deleted.shape[0])
        keys = xp.concatenate([deleted, inserted])
        e = self.snapshot_edges
        if e:
            pos, hit = self._find(keys)
            # one scatter, no compaction: keys the snapshot lacks write the spare flag at e
            is_new = xp.arange(keys.shape[0]) >= nd
            self.alive[xp.where(hit, pos, e)] = is_new
            off = ~hit
        else:
            off = xp.ones(keys.shape[0], dtype=bool)
        self.work += k + (_search_cost(k, e) if self.snapshot_keys is not None else 0)
        self.deleted_since += nd
        if xp is np:
            n_gone, n_new = int(np.count_nonzero(off[:nd])), int(np.count_nonzero(off[nd:]))
        else:
            n_gone, n_new = (int(x) for x in xp.stack([off[:nd].sum(), off[nd:].sum()]).tolist())
        before = int(self.extra.shape[0])
        if (xp is np or not single) and before:
            # after deferred folds ``extra`` may hold a key whose snapshot copy is dead: every key
            # changed here leaves ``extra`` (the inserted ones that are not snapshot edges come back
            # below), so that ``extra`` never holds a key whose snapshot copy is alive
            self.extra = _without(xp, self.extra, xp.sort(keys))
            self.work += _search_cost(k, before) + before
        elif n_gone and before:               # a GPU's own batches keep the two apart
            self.extra = _without(xp, self.extra, xp.sort(compact(xp, deleted, off[:nd], n_gone)))
        if n_new:
            add = xp.sort(compact(xp, inserted, off[nd:], n_new))
            self.extra = _merge(xp, self.extra, add) if single else _merge_distinct(xp, self.extra, add)
            self._flag_rows(add)
        if n_gone or n_new:
            self.work += _search_cost(n_gone + n_new, before) + before + int(self.extra.shape[0])

    def fold_keys(self, keys, nd: int) -> None:
        """One batch as :meth:`fold` takes it (``gone = [keys[:nd]]``, ``new = [keys[nd:]]``), its keys given
        joined: the fused fold reads them as they are (no concatenation)."""
        if int(keys.shape[0]) == 0:
            return
        if self.launch is not None:
            return self._fold_fused(keys[:nd], keys[nd:], keys)
        self.fold([keys[:nd]], [keys[nd:]])

    def _fold_fused(self, deleted, inserted, keys=None) -> None:
        """One batch (deleted keys live, inserted ones not, all distinct) by the ``bfsl_*`` kernels of
        :mod:`algorithms.bfs_kernels` and one read of two counts: each key bisects its snapshot row; a
        snapshot edge sets its alive flag; the others are counted and listed, and, when there are any,
        the new ``extra`` is merged by rank from the old one less the deleted keys plus the inserted
        ones (each key's place by binary searches: no scan, no compaction).  Same state as the array
        program of :meth:`fold`; about 5 device operations where that takes some 35."""
        xp = self.xp
        self._settle()
        nd = int(deleted.shape[0])
        k = nd + int(inserted.shape[0])
        if keys is None:                                   # (``keys``: the two joined, when the caller has them)
            keys = xp.concatenate([deleted, inserted]).astype(np.int64, copy=False)
        lists = xp.zeros(2 * k + 3, dtype=np.int64)        # gone | add | their counts, the keys read
        gone, add, counts = lists[:k], lists[k:2 * k], lists[2 * k:].view(np.uint64)
        self.launch(xp, "bfsl_fold_find", k, (keys, i64(nd), i64(k), self.offsets, self.cols, i64(self.rows),
                                              self.alive, gone, add, counts))
        n_gone, n_new, reads = (int(c) for c in counts.tolist())    # the one read
        self.deleted_since += nd
        self.work += k + reads
        if n_gone or n_new:
            before = int(self.extra.shape[0])
            g = xp.sort(gone[:n_gone]) if n_gone else gone[:0]     # (a batch of insertions: one sort)
            a = xp.sort(add[:n_new]) if n_new else add[:0]
            out = xp.empty(before - n_gone + n_new, dtype=np.int64)
            self.launch(xp, "bfsl_fold_merge", before + n_new,
                        (self.extra, i64(before), g, i64(n_gone), a, i64(n_new), out))
            self.extra = out
            self._flag_rows(a)
            self.work += 2 * _search_cost(n_gone + n_new, before) + before + int(out.shape[0])

    def fold_edges(self, del_s, del_d, ins_s, ins_d, bound: int | None = None) -> None:
        """One batch of a :class:`~structures.delta.BatchDelta` on the host (its deletions were live edges,
        its insertions were not; deletions first), in about fifteen operations on small arrays and no
        search of the snapshot.

        A deleted edge is live: an alive snapshot edge or a key of ``extra`` / ``fresh``, and not in
        ``gone``.  It joins ``gone`` (sorted: one stable sort of ``gone`` and the batch, a merge of two
        runs), where reads mask it (:meth:`rows_host`), until ``gone`` passes :data:`GONE_KEYS` and its keys
        are taken out of the snapshot and the logs all at once (:meth:`_settle_gone`: one scan of their rows,
        as many cache misses per key as a per-batch search but a few calls for forty batches).  An inserted
        edge is absent: either a key of ``gone`` (deleted since the last settle: its copy in the snapshot or
        the logs was never taken out, so leaving ``gone`` makes it live again) or an edge in none of them
        but perhaps a dead snapshot edge, which joins ``fresh`` like any new edge (its snapshot copy stays
        dead: one live copy; the settle takes a key out of the logs as well as the snapshot, so such a key
        deleted again leaves both).  So every live edge has one live copy, and nothing reads the snapshot's
        rows here.  A batch that reaches past the snapshot's rows takes :meth:`fold`'s eager path.
        ``work``: the keys, the keys of ``gone`` that the sort moves, the binary searches of the inserted
        keys in ``gone``, and the keys ``fresh`` moves.
        ``bound``: an upper bound on the vertex ids when the caller knows one (no test of the batch).
        """
        nd, ni = int(del_d.shape[0]), int(ins_d.shape[0])
        k = nd + ni
        if k == 0:
            return
        if self.recent_dead.shape[0]:             # a deferred fold's deletions (fold()): flags first
            self._settle()
        gone_keys = (del_d.astype(np.int64) << 32) | del_s
        new_keys = (ins_d.astype(np.int64) << 32) | ins_s
        if not self.snapshot_edges or (
                (bound is None or bound > self.rows)
                and max(int(del_d.max()) if nd else -1, int(ins_d.max()) if ni else -1) >= self.rows):
            return self._fold_eager([gone_keys], [new_keys], k)      # (settles ``gone`` first)
        if nd:
            # a stable sort (timsort) of a sorted run and a short one: a merge, O(|gone| + nd log nd)
            gone = np.concatenate((self.gone, gone_keys))
            gone.sort(kind="stable")                    # (in place: the copy is the concatenation's)
            self.gone = gone
            self.deleted_since += nd
        size = int(self.gone.shape[0])
        self.work += k + size
        if ni and size:
            # inserted keys deleted since the last settle: out of ``gone`` (clip: a key past the last one
            # compares with the last, which differs)
            at = self.gone.searchsorted(new_keys)
            back = self.gone.take(at, mode="clip") == new_keys
            self.work += _search_cost(ni, size)
            if np.count_nonzero(back):           # (count_nonzero: a kind of call the update makes anyway)
                keep = np.ones(size, dtype=bool)
                keep[at[back]] = False
                self.gone = self.gone[keep]
                new = (~back).nonzero()[0]
                new_keys, ins_d = new_keys.take(new), ins_d.take(new)
        if new_keys.shape[0]:
            self._add_fresh(new_keys, ins_d)
        if self.gone.shape[0] > GONE_KEYS:
            self._settle_gone()

    def _settle_gone(self) -> None:
        """Take the host's ``gone`` keys out of the arrays: their alive flags off where they are snapshot edges
        (one scan or bisection of their rows, :meth:`_locate`), and out of ``extra`` and ``fresh`` (a key
        re-inserted after its snapshot copy died lives there; one pass over ``extra``)."""
        g = self.gone
        if g is None or g.shape[0] == 0:
            return
        self.gone = g[:0]
        _, at = self._locate((g >> 32).astype(np.intp), (g & LOW32).astype(VERTEX_DTYPE))
        self.alive[at] = False
        self._merge_fresh()
        before = int(self.extra.shape[0])
        if before:
            self.extra = _without(np, self.extra, g)
            self.work += _search_cost(g.shape[0], before) + before

    def _flag_rows(self, keys) -> None:
        """The host's has_extra flags of the rows of ``keys`` (rows past the snapshot: the spare last flag)."""
        if self.has_extra is not None and keys.shape[0]:
            self.has_extra[np.minimum(keys >> 32, self.rows)] = True

    def _add_fresh(self, keys, rows) -> None:
        """New keys (absent from the log; ``rows``: their rows) sorted into ``fresh`` (a stable sort of the
        sorted ``fresh`` and the batch: a merge), and ``fresh`` into ``extra`` past FRESH_KEYS."""
        fresh = np.concatenate((self.fresh, keys))
        fresh.sort(kind="stable")
        self.fresh = fresh
        self.has_extra[rows] = True
        self.work += int(self.fresh.shape[0])
        if self.fresh.shape[0] > FRESH_KEYS:
            self._merge_fresh()

    # -- reading ------------------------------------------------------------------------
    def rows_host(self, vertices, bound: int | None = None):
        """The in-edges of ``vertices`` on the host, unfiltered: ``(owner, col, live)`` with ``owner``
        indexing ``vertices``, ``col`` native ints, and ``live`` the mask of the live ones (``None`` when all
        are), so that a caller folds it into its own test.  :meth:`neighbours` for rows past the snapshot or
        deferred deletions of :meth:`fold` (its result is all live).  The keys of ``gone`` (deleted, not yet
        taken out: fold_edges) are masked by one binary search of every entry read in it (a few thousand
        keys: a few cache lines).  ``bound``: an upper bound on the ids, when known."""
        v = vertices
        m = int(v.shape[0])
        if m == 0 or self.recent_dead.shape[0] or (
                (bound is None or bound > self.rows) and int(v.max()) >= self.rows):
            owner, cols = self.neighbours(v)
            return owner, cols, None
        starts = self.offsets.take(v)                               # (take, as the repair reads its rows)
        counts = self.ends.take(v) - starts
        ends = np.add.accumulate(counts)
        total = int(ends[-1])
        index = np.arange(m)
        owner = index.repeat(counts)
        pos = range_positions(starts, counts, ends, total)
        # a long read (a hub's row) takes its rows' ``gone`` keys out of the snapshot first (a search of those
        # few keys in their rows) rather than search ``gone`` for each of its entries; the logs' entries are
        # still searched below (few), for ``gone`` keys that are not snapshot edges
        clean = total if total > GONE_SCAN and self.gone.shape[0] else 0
        if clean:
            self._settle_rows(v)
        cols = self.cols.take(pos).astype(np.intp)                  # indices for the caller: native ints
        live = self.alive.take(pos) if self.deleted_since else None
        self.work += 2 * total + 2 * m                              # columns and their alive bits
        if (self.extra.shape[0] or self.fresh.shape[0]) and np.count_nonzero(self.has_extra.take(v)):
            # the rows' ranges of the two sorted logs (two binary searches per row each), one concatenation
            key = v.astype(np.int64, copy=False) << 32
            o_parts, c_parts, added = [owner], [cols], 0
            for log in (self.extra, self.fresh):
                size = int(log.shape[0])
                if size == 0:
                    continue
                lo = log.searchsorted(key)
                more = log.searchsorted(key + (1 << 32)) - lo
                self.work += 2 * _search_cost(m, size)
                if np.count_nonzero(more):
                    more_ends = np.add.accumulate(more)
                    n_more = int(more_ends[-1])
                    p2 = range_positions(lo, more, more_ends, n_more)
                    o_parts.append(index.repeat(more))
                    c_parts.append(log.take(p2) & LOW32)
                    added += n_more
            if added:
                self.work += added
                owner, cols = np.concatenate(o_parts), np.concatenate(c_parts)
                if live is not None:
                    live = np.concatenate((live, np.ones(added, dtype=bool)))
        size = int(self.gone.shape[0])
        if size and owner.shape[0] > clean:
            keys = (v.take(owner[clean:]).astype(np.int64, copy=False) << 32) | cols[clean:]
            dead = self.gone.take(self.gone.searchsorted(keys), mode="clip") == keys
            self.work += _search_cost(keys.shape[0], size)
            if np.count_nonzero(dead):
                if clean:
                    dead = np.concatenate((np.zeros(clean, dtype=bool), dead))
                live = ~dead if live is None else live & ~dead
        return owner, cols, live

    def _settle_rows(self, v) -> None:
        """Take the ``gone`` keys of rows ``v`` (within the snapshot) whose live copy is a snapshot edge out now:
        their alive flags off (:meth:`_locate`: a scan or bisection of those rows for those keys), and they leave
        ``gone``; keys whose live copy is in ``extra`` / ``fresh`` stay (rows_host masks the logs' entries)."""
        g = self.gone
        size = int(g.shape[0])
        key = v.astype(np.int64, copy=False) << 32
        lo = g.searchsorted(key)
        cnt = g.searchsorted(key + (1 << 32)) - lo
        self.work += 2 * _search_cost(v.shape[0], size)
        if not np.count_nonzero(cnt):
            return
        ends = np.add.accumulate(cnt)
        n = int(ends[-1])
        p = range_positions(lo, cnt, ends, n)
        gk = g.take(p)
        which, at = self._locate((gk >> 32).astype(np.intp), (gk & LOW32).astype(VERTEX_DTYPE))
        self.work += n
        # only a snapshot copy still alive is the key's live copy: where it died before (the key was deleted,
        # settled, inserted again into ``fresh``), the live copy is in the logs and the key stays in ``gone``
        was = self.alive.take(at).nonzero()[0]
        if was.shape[0]:
            self.alive[at.take(was)] = False
            keep = np.ones(size, dtype=bool)
            keep[p.take(which.take(was))] = False
            self.gone = g[keep]

    def neighbours(self, vertices):
        """Every live in-edge of the given rows as ``(owner, col)``: owner indexes ``vertices``."""
        xp = self.xp
        self._settle_gone()
        self._merge_fresh()
        v = xp.asarray(vertices).astype(np.int64)
        if xp is np and (v.shape[0] == 0 or int(v.max()) < self.rows):   # every row in the snapshot
            starts = self.offsets[v]
            counts = self.offsets[v + 1] - starts
        else:
            inside = v < self.rows
            vv = xp.where(inside, v, 0)
            starts = self.offsets[vv]
            counts = xp.where(inside, self.offsets[vv + 1] - starts, 0)
        owner, pos = segmented_arange(xp, starts, counts)
        self.work += 2 * int(pos.shape[0]) + int(v.shape[0])        # columns and their alive bits
        cols = self.cols[pos]
        if pos.shape[0] and (self.deleted_since or self.recent_dead.shape[0]):
            live = self.alive[pos]                    # (a GPU reads the count of live ones back)
            if self.recent_dead.shape[0]:
                live &= ~member(xp, self.recent_dead, (v[owner] << 32) | cols.astype(np.int64))
                self.work += _search_cost(cols.shape[0], self.recent_dead.shape[0])
            owner, cols = owner[live], cols[live]
        if self.extra.shape[0]:
            lo = xp.searchsorted(self.extra, v << 32)
            hi = xp.searchsorted(self.extra, (v + 1) << 32)
            if xp is np and not (hi > lo).any():     # no row has extra in-edges
                return owner, cols
            o2, p2 = segmented_arange(xp, lo, hi - lo)
            self.work += 2 * _search_cost(v.shape[0], self.extra.shape[0]) + int(p2.shape[0])
            if p2.shape[0]:
                owner = xp.concatenate([owner, o2])
                cols = xp.concatenate([cols, (self.extra[p2] & LOW32).astype(VERTEX_DTYPE)])
        return owner, cols

    @property
    def keys(self):
        """All live keys, sorted and distinct (a pass over the snapshot: checks and checkpoints only)."""
        self._settle()
        snap = self.snapshot_keys if self.snapshot_keys is not None else self._all_snapshot_keys()
        return _merge_distinct(self.xp, snap[self.alive[:-1]], self.extra)

    @classmethod
    def from_keys(cls, xp, keys, rows: int, **kwargs) -> InEdgeLog:
        """A log over sorted distinct keys ``(dst << 32) | src`` (a checkpoint), rows ``[0, rows)``."""
        keys = xp.asarray(keys, dtype=np.int64)
        rows = max(int(rows), int(keys[-1] >> 32) + 1 if keys.shape[0] else 0)
        offsets = xp.searchsorted(keys, xp.arange(rows + 1, dtype=np.int64) << 32)
        return cls(xp, CSR(offsets=offsets.astype(np.int64), cols=(keys & LOW32).astype(VERTEX_DTYPE),
                           weights=None), **kwargs)
