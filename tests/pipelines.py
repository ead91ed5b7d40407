"""The real Pipeline, with the views the worker tests compare against the oracle."""
from __future__ import annotations

import time

from vinestream.stream.pipeline import Pipeline
from vinestream.structures import registry


class ObservedPipeline(Pipeline):
    """A real Pipeline on a real structure, plus ``edges()`` / ``vertex_set()`` in external ids.

    ``slow_seconds`` pauses inside ``apply`` so tests can catch the worker mid-batch.
    """

    def __init__(self, structure: str = "coo", *, slow_seconds: float = 0.0, **kwargs):
        super().__init__(registry.create(structure), **kwargs)
        self.slow_seconds = slow_seconds

    def apply(self, events, next_events=None):
        if self.slow_seconds:
            time.sleep(self.slow_seconds)
        return super().apply(events, next_events=next_events)

    def edges(self) -> dict:
        src, dst, w = self.edges_external()
        return {(int(u), int(v)): float(x) for u, v, x in zip(src.tolist(), dst.tolist(), w.tolist())}

    def vertex_set(self) -> set:
        return set(self.vertices_external().tolist())
