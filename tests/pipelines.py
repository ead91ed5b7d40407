"""The real Pipeline, with the views the worker tests compare against the oracle."""
from __future__ import annotations

import json
import os
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


class RecordingPipeline(ObservedPipeline):
    """Records the source vertex of every event it applies (``applied``; a test gives each event a source of its
    own).  With ``path``, each applied batch's sources are also appended to that file as one JSON list, flushed
    and fsynced before ``apply`` returns: the record of a worker process, which outlives it."""

    def __init__(self, path=None, **kw):
        super().__init__(**kw)
        self.applied: list = []
        self.file = open(path, "a") if path is not None else None

    def apply(self, events, next_events=None):
        result = super().apply(events, next_events=next_events)
        sources = events.column("src").to_pylist()
        self.applied += sources
        if self.file is not None:
            self.file.write(json.dumps(sources) + "\n")
            self.file.flush()
            os.fsync(self.file.fileno())
        return result
