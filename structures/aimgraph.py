"""aimGraph (gpu-dynamic-graph-thesis.txt, chapter 3): faimGraph's predecessor, without memory reuse.

The same single pool as :mod:`structures.faimgraph` - vertex records growing
from the bottom, fixed-size edge pages (64 B by default, "edge blocks" in
chapter 3) growing from the top, each adjacency a linked list of pages with
the next page's index in a page's last word - but:

* **no page queue**: pages only ever come from the memory manager's bump
  counter (``next_free_block_index``, 3.2.2).  Edge deletion compacts the
  adjacency but "we do not return empty blocks to the memory manager, but
  simply reuse them when edges are inserted for the same node again" (3.2.5):
  a vertex's capacity never shrinks;
* **static vertex data** (3.2.1.1): vertex slot = internal id, no vertex
  queue.  Deleting a vertex (which aimGraph itself does not support; the
  interface requires it) removes its edges, and its pages stay with the id
  for when the id is inserted again.

So the pool holds the maximal allocation state ever reached, the behaviour
the thesis measures against faimGraph (Tables 4.1 / 4.2, *Sweep*).
"""
from __future__ import annotations

from .faimgraph import FaimGraph
from .registry import register


@register
class AimGraph(FaimGraph):
    """faimGraph's layout with a bump-only page allocator and static (id-indexed) vertex slots."""

    name = "aimgraph"
    reuse_pages = False
    reuse_slots = False
