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


#: what a user may set of each job (``--job-option JOB.OPTION=VALUE``, a worker's ``[job_options]`` table,
#: ``build_pipeline(job_options=...)``): option -> (type, what is valid, check of a value of that type).  The
#: jobs' other constructor parameters are tuning switches for the benches and tests.
JOB_OPTIONS: dict[str, dict[str, tuple]] = {
    "pagerank": {
        "damping": (float, "a number strictly between 0 and 1 (default 0.85)", lambda v: 0 < v < 1),
        "tol": (float, "a number > 0 (L1 tolerance, default 1e-6)", lambda v: v > 0),
        "max_iter": (int, "an integer >= 1 (default 1000)", lambda v: v >= 1),
        "weighted": (bool, "false: the pagerank job computes unweighted PageRank (networkx weight=None)",
                     lambda v: not v),
    },
    "bfs": {},
    "triangles": {},
}


def job_option_problem(job: str, option: str, value) -> str | None:
    """None when ``value`` (a Python value, not text) is valid for ``option`` of ``job``, else what is valid."""
    known = JOB_OPTIONS.get(job, {})
    if option not in known:
        return "one of " + (", ".join(f"{job}.{o}" for o in known) or f"none (the {job} job takes no options)")
    kind, valid, check = known[option]
    numeric = kind in (int, float) and not isinstance(value, bool) and isinstance(value, (int, float, np.number))
    typed = (kind is bool and isinstance(value, (bool, np.bool_))) or (
        numeric and (kind is float or float(value).is_integer()))
    return None if typed and check(kind(value)) else valid


def create_job(name: str, xp=np, **params) -> Job:
    """A new job ``name`` (pagerank, bfs, triangles) on backend ``xp``."""
    try:
        cls = JOBS[name]
    except KeyError:
        raise KeyError(f"unknown job {name!r}; choose from {', '.join(JOBS)}") from None
    return cls(xp, **params)


__all__ = ["BFS", "JOBS", "JOB_OPTIONS", "Job", "PageRank", "Triangles", "create_job", "job_option_problem"]
