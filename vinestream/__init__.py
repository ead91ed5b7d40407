"""vinestream: streaming graph analytics on dynamic graph structures, NumPy on a CPU and CuPy on a GPU.

Edge and vertex events (Arrow tables, Parquet logs, Kafka topics) are applied in
batches to a dynamic graph structure of your choice (``structures()`` lists
them); incremental PageRank, BFS and triangle counting follow every batch.

The public API:

- :func:`build_pipeline` -> :class:`Pipeline`: ``apply(events)`` one batch at a
  time, ``edges()``, ``vertices()`` and ``results()`` as Arrow tables (external ids);
- :func:`events` builds a validated event batch from Python lists, :func:`validate`
  splits any Arrow table into valid events and dead letters;
- :func:`replay` plays Parquet event logs through the application loop (results
  directory, checkpoints and resume); the Kafka worker is ``vinestream run``;
- :func:`read_results` reads a results directory back as Arrow tables (summary, dead
  letters, and each job's outputs with an ``epoch`` column).

Examples
--------
>>> import vinestream
>>> pipeline = vinestream.build_pipeline(structure="graphvine", backend="cpu", jobs=["pagerank"])
>>> _ = pipeline.apply(vinestream.events(op=["add"] * 3, src=[1, 2, 3], dst=[2, 3, 1]))
>>> pipeline.edges().num_rows
3
"""
from __future__ import annotations

from pathlib import Path as _Path

# The subpackages live at the repository's top level (stream/, structures/, algorithms/,
# connectors/) and pyproject's package-dir installs them as vinestream.<name>.  In a source
# checkout (tests run from the repository root) this folder shadows the installed package,
# so the checkout's top level joins the package path: vinestream.stream is ./stream there.
_checkout = _Path(__file__).resolve().parent.parent
if (_checkout / "pyproject.toml").is_file() and (_checkout / "structures" / "registry.py").is_file():
    __path__.append(str(_checkout))

from vinestream.algorithms import JOBS  # noqa: E402
from vinestream.connectors.parquet import read_results  # noqa: E402
from vinestream.stream.app.application import RunReport  # noqa: E402
from vinestream.stream.app.replay import replay  # noqa: E402
from vinestream.stream.errors import UsageError  # noqa: E402
from vinestream.stream.events.schema import DEAD_LETTER_SCHEMA, EVENT_SCHEMA, Op  # noqa: E402
from vinestream.stream.events.validate import events, validate  # noqa: E402
from vinestream.stream.pipeline import BatchResult, Pipeline, build_pipeline  # noqa: E402
from vinestream.structures import BackendError, DynamicGraph, register  # noqa: E402
from vinestream.structures.delta import BatchDelta  # noqa: E402
from vinestream.structures.registry import available as structures  # noqa: E402


def jobs() -> list[str]:
    """Names of the analytics jobs (``build_pipeline(jobs=...)``)."""
    return sorted(JOBS)


__all__ = [
    "DEAD_LETTER_SCHEMA",
    "EVENT_SCHEMA",
    "BackendError",
    "BatchDelta",
    "BatchResult",
    "DynamicGraph",
    "Op",
    "Pipeline",
    "RunReport",
    "UsageError",
    "build_pipeline",
    "events",
    "jobs",
    "read_results",
    "register",
    "replay",
    "structures",
    "validate",
]
