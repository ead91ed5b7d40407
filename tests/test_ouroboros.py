"""The Ouroboros allocator on its own: allocate / free sequences against a model, for every queue variant.

Checked after every step: no page is handed out twice, live pages never
overlap and lie inside the chunk region, every page ever created is either
live or in its class queue (queues never lose or duplicate a page), freed
pages are reused FIFO before any new chunk is taken, QueueChunks of the
virtualized queues are recycled, and growing the region keeps every handle and
every byte in place.
"""
from __future__ import annotations

import itertools
from collections import deque

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.backends import BACKENDS
from vinestream.structures.backend import to_numpy
from vinestream.structures.ouroboros import (
    KIND_QUEUE,
    QUEUE_VARIANTS,
    ArrayQueue,
    Ouroboros,
    VirtualArrayQueue,
    VirtualLinkedQueue,
)

H = to_numpy


class Model:
    """Per class: live handles, and the FIFO of free ones as the allocator must hold them."""

    def __init__(self):
        self.live: dict[int, int] = {}          # handle -> class
        self.free: dict[int, deque] = {}
        self.seen: set[int] = set()


def check(alloc: Ouroboros, model: Model) -> None:
    ncls = len(alloc.queues)
    for c in range(ncls):
        q = [int(x) for x in H(alloc.queues[c].contents())]
        assert q == list(model.free.get(c, ())), f"class {c} queue {q[:8]} != model"
        assert len(set(q)) == len(q), "a page twice in a queue"
        live_c = [h for h, k in model.live.items() if k == c]
        assert not set(q) & set(live_c), "a live page is also free"
        assert alloc.pages_created[c] == len(q) + len(live_c), "a page was lost"
        assert alloc.live_pages(c) == len(live_c)
    # live pages: disjoint word ranges inside the chunk region
    spans = sorted((alloc.words - h, alloc.words - h + alloc.page_words(c)) for h, c in model.live.items())
    lo = alloc.words - alloc.chunk_top * alloc.chunk_words
    for (_, b), (a2, _) in itertools.pairwise(spans):
        assert b <= a2, "two live pages overlap"
    for a, b in spans:
        assert lo <= a and b <= alloc.words
    assert lo >= alloc.linear_words


def allocate(alloc, model, classes):
    before = {c: list(model.free.get(c, ())) for c in set(classes)}
    got = [int(h) for h in H(alloc.allocate(np.asarray(classes, dtype=np.int64)))]
    assert len(set(got)) == len(got), "one page handed out twice in a batch"
    for c in set(classes):
        mine = [h for h, k in zip(got, classes) if k == c]
        reuse = before[c][:len(mine)]
        assert mine[:len(reuse)] == reuse, "freed pages are reused first, in FIFO order"
        for h in mine[len(reuse):]:
            assert h not in model.seen, "a new page must be new"
        q = model.free.setdefault(c, deque())
        for _ in range(len(reuse)):
            q.popleft()
    for h, c in zip(got, classes):
        assert h not in model.live
        model.live[h] = c
        model.seen.add(h)
    # pages of new chunks that were not handed out are now free in the queue, in handle order of creation
    for c in set(classes):
        q = model.free.setdefault(c, deque())
        tail = [int(x) for x in H(alloc.queues[c].contents())][len(q):]
        for h in tail:
            assert h not in model.seen
            model.seen.add(h)
        q.extend(tail)
    return got


def free(alloc, model, handles):
    classes = [model.live[h] for h in handles]
    alloc.free(np.asarray(handles, dtype=np.int64), np.asarray(classes, dtype=np.int64))
    order = sorted(range(len(handles)), key=lambda i: classes[i])   # stable by class, batch order within
    for i in order:
        model.free.setdefault(classes[i], deque()).append(handles[i])
        del model.live[handles[i]]


ops_st = st.lists(st.one_of(
    st.tuples(st.just("alloc"), st.lists(st.integers(0, 6), min_size=1, max_size=40)),
    st.tuples(st.just("free"), st.lists(st.integers(0, 10_000), min_size=1, max_size=30)),
    st.tuples(st.just("linear"), st.integers(0, 3000)),
), min_size=1, max_size=25)


@pytest.mark.parametrize("variant", QUEUE_VARIANTS)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=ops_st)
def test_allocate_free_sequences_against_the_model(variant, ops):
    # small chunks: 256 B = 64 words, so QueueChunks (60 slots) fill and retire quickly, and
    # classes 5 and 6 (512 B, 1 KiB pages) are multi-chunk runs
    alloc = Ouroboros(np, chunk_bytes=256, min_page_bytes=16, queue=variant)
    model = Model()
    for kind, arg in ops:
        if kind == "alloc":
            allocate(alloc, model, arg)
        elif kind == "free":
            live = sorted(model.live)
            pick = sorted({live[i % len(live)] for i in arg}) if live else []
            if pick:
                free(alloc, model, pick)
        else:
            alloc.reserve_linear(arg)
        check(alloc, model)


@pytest.mark.parametrize("xp", BACKENDS)
@pytest.mark.parametrize("variant", QUEUE_VARIANTS)
def test_growth_keeps_handles_and_contents(xp, variant):
    alloc = Ouroboros(xp, chunk_bytes=512, queue=variant)
    classes = np.repeat(np.arange(6), 30)
    handles = alloc.allocate(classes)
    words = [alloc.page_words(int(c)) for c in classes]
    for i, (h, w) in enumerate(zip(H(handles).tolist(), words)):   # a small test: stamp each page
        a = alloc.words - h
        alloc.memory[a:a + w] = i
    before = alloc.words
    alloc.reserve_linear(alloc.words)                               # forces a re-initialisation
    assert alloc.words > before and alloc.stats["grows"] >= 1
    for i, (h, w) in enumerate(zip(H(handles).tolist(), words)):
        a = alloc.words - h
        assert (H(alloc.memory[a:a + w]) == i).all()


@pytest.mark.parametrize("variant", ["va", "vl"])
def test_virtualized_queues_recycle_their_queue_chunks(variant):
    alloc = Ouroboros(np, chunk_bytes=256, queue=variant)          # 60 slots per QueueChunk
    q = alloc.make_queue()
    expected = deque()
    rng = np.random.default_rng(1)
    peak = 0
    for _ in range(60):
        n = int(rng.integers(1, 150))
        vals = rng.integers(0, 1 << 30, n).astype(np.int32)
        q.push(vals)
        expected.extend(vals.tolist())
        m = int(rng.integers(0, len(expected) + 1))
        out = q.pop(m).tolist()
        assert out == [expected.popleft() for _ in range(m)]
        assert q.contents().tolist() == list(expected)
        live_qc = int((alloc.chunk_kind[:alloc.chunk_top] == KIND_QUEUE).sum())
        peak = max(peak, live_qc)
        # QueueChunks in use cover exactly the live span (+ the pre-placed one)
        assert live_qc <= len(expected) // 60 + 3
    assert alloc.stats["chunks_reused"] > 0, "emptied QueueChunks were reused"
    assert alloc.chunk_top < peak + 5, "the queue did not keep taking new chunks"
    # headers: countA / countB of every live QueueChunk agree with the queue's span
    if variant == "va":
        assert isinstance(q, VirtualArrayQueue)
    else:
        assert isinstance(q, VirtualLinkedQueue)


def test_page_queues_hand_pages_back_before_new_chunks():
    alloc = Ouroboros(np, chunk_bytes=1024, queue="array")
    a = alloc.allocate(np.full(100, 2))                 # 64 B pages, 16 per chunk -> 7 chunks
    top = alloc.chunk_top
    leftover = alloc.queues[2].contents().tolist()      # the 12 unused pages of the last chunk
    assert top == 7 and len(leftover) == 12
    alloc.free(a[:50], np.full(50, 2))
    b = alloc.allocate(np.full(50, 2))
    assert alloc.chunk_top == top, "no new chunk while the queue held enough pages"
    assert b.tolist() == leftover + a[:38].tolist(), "FIFO: older free pages first"
    c = alloc.allocate(np.full(40, 2))
    assert c[:12].tolist() == a[38:50].tolist() and alloc.chunk_top == top + 2
    assert not set(c[12:].tolist()) & set(a.tolist())


def test_size_classes_and_multi_chunk_pages():
    alloc = Ouroboros(np, chunk_bytes=256, min_page_bytes=16)
    words = np.array([1, 4, 5, 8, 9, 64, 65, 200, 256, 257, 1000])
    cls = alloc.class_for_words(words)
    for w, c in zip(words.tolist(), cls.tolist()):
        assert alloc.page_words(c) >= w and (c == 0 or alloc.page_words(c - 1) < w)
    h = alloc.allocate(np.array([7, 7, 7]))                 # 2 KiB pages over 8 chunks each
    assert alloc.chunks_per_page(7) == 8 and alloc.chunk_top == 24
    spans = sorted((alloc.words - x, alloc.words - x + alloc.page_words(7)) for x in h.tolist())
    assert spans[0][1] <= spans[1][0] and spans[1][1] <= spans[2][0]


def test_array_queue_grows_and_keeps_fifo_order():
    q = ArrayQueue(np, capacity=4)
    q.push(np.arange(3))
    assert q.pop(2).tolist() == [0, 1]
    q.push(np.arange(10, 20))
    assert q.capacity >= 11 and q.contents().tolist() == [2, *range(10, 20)]
    with pytest.raises(IndexError):
        q.pop(100)
