"""What a batch really changed: the contract between the pipeline and the incremental algorithms."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .csr_types import CSRBatch


@dataclass
class BatchDelta:
    """Changes applied by one batch, in internal ids on the structure's backend.

    Apply order when replaying it: ``vertices_removed`` (with every edge in
    ``edges_deleted`` that touched them), then ``vertices_added`` (an id in both
    lists is a slot reused in this batch by a different external vertex), then
    ``edges_inserted`` / ``edges_deleted`` / ``weights_updated`` (disjoint).

    ``edges_deleted`` holds every edge that existed before the batch and not
    after it: explicit deletions and edges removed with their vertex.
    """
    epoch: int
    vertices_added: object                      # int32 internal ids
    vertices_removed: object                    # int32 internal ids (the old slots)
    inserted_src: object                        # int32; edges that did not exist before
    inserted_dst: object
    inserted_weight: object                     # float32
    deleted_src: object                         # int32; edges that existed before and not after
    deleted_dst: object
    updated_src: object                         # int32; edges that existed and were added again: their weight
    #                                             set anew, to another value or the same one
    updated_dst: object
    updated_weight: object                      # float32
    stats: dict = field(default_factory=dict)

    @property
    def num_inserted(self) -> int:
        return int(self.inserted_src.shape[0])

    @property
    def num_deleted(self) -> int:
        return int(self.deleted_src.shape[0])

    @property
    def num_updated(self) -> int:
        return int(self.updated_src.shape[0])

    @property
    def num_changed_edges(self) -> int:
        return self.num_inserted + self.num_deleted

    @property
    def is_empty(self) -> bool:
        return (self.num_inserted == 0 and self.num_deleted == 0 and self.num_updated == 0
                and int(self.vertices_added.shape[0]) == 0 and int(self.vertices_removed.shape[0]) == 0)

    @staticmethod
    def empty(xp=np, epoch: int = 0) -> BatchDelta:
        i = lambda: xp.zeros(0, dtype=np.int32)
        f = lambda: xp.zeros(0, dtype=np.float32)
        return BatchDelta(epoch, i(), i(), i(), i(), f(), i(), i(), i(), i(), f())


def apply_delta(graph, delta: BatchDelta) -> None:
    """Replay ``delta`` on any structure, in the delta's apply order (benchmarks and test harnesses).

    Edges first leave (those of removed vertices refer to their old slots), then the
    removed slots, then the added vertices, then the inserted and re-weighted edges.
    """
    xp = graph.xp
    graph.delete_edges(CSRBatch.from_edges(xp, delta.deleted_src, delta.deleted_dst))
    graph.delete_vertices(xp.asarray(delta.vertices_removed, dtype=np.int32))
    graph.insert_vertices(xp.asarray(delta.vertices_added, dtype=np.int32))
    src = xp.concatenate([xp.asarray(delta.inserted_src), xp.asarray(delta.updated_src)])
    dst = xp.concatenate([xp.asarray(delta.inserted_dst), xp.asarray(delta.updated_dst)])
    weights = xp.concatenate([xp.asarray(delta.inserted_weight, dtype=np.float32),
                              xp.asarray(delta.updated_weight, dtype=np.float32)])
    graph.insert_edges(CSRBatch.from_edges(xp, src, dst, weights))

