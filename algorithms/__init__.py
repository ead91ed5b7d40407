"""Analytics jobs over the dynamic graph: PageRank, BFS and triangle counting (static and incremental).

``create_job(name, xp, **params)`` builds one by its ``--jobs`` name; every job
implements :class:`algorithms.base.Job`.
"""
from __future__ import annotations

import numpy as np

from .base import Job
from .bfs import BFS
from .pagerank import PageRank
from .triangles import Triangles

JOBS: dict[str, type[Job]] = {"pagerank": PageRank, "bfs": BFS, "triangles": Triangles}


def create_job(name: str, xp=np, **params) -> Job:
    """A new job ``name`` (pagerank, bfs, triangles) on backend ``xp``."""
    try:
        cls = JOBS[name]
    except KeyError:
        raise KeyError(f"unknown job {name!r}; choose from {', '.join(JOBS)}") from None
    return cls(xp, **params)


__all__ = ["BFS", "JOBS", "Job", "PageRank", "Triangles", "create_job"]
