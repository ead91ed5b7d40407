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

import importlib as _importlib  # noqa: E402
import sys as _sys  # noqa: E402
import types as _types  # noqa: E402


class _Package(_types.ModuleType):
    """This package's module type.  Loading the subpackage ``vinestream.structures`` binds it as an attribute of
    the package (the import system's ``setattr``), which would hide the public function of that name; that one
    binding is dropped (the subpackage stays importable by name: ``sys.modules`` holds it).  So the package imports
    nothing of its own at import time: NumPy alone took a quarter of a second, in which a Ctrl-C of the command
    line was a traceback (``vinestream.__main__``)."""

    def __setattr__(self, name, value):
        if name == "structures" and isinstance(value, _types.ModuleType):
            return
        super().__setattr__(name, value)


_sys.modules[__name__].__class__ = _Package

#: public name -> (module, attribute), imported at first use (PEP 562): ``vinestream run`` imports this package
#: before any of its own code runs, and importing pyarrow, pandas and the pipeline here took a second in which a
#: SIGTERM ended the worker without its graceful stop (its start-up handler comes with the command)
_PUBLIC = {
    "DEAD_LETTER_SCHEMA": ("vinestream.stream.events.schema", "DEAD_LETTER_SCHEMA"),
    "EVENT_SCHEMA": ("vinestream.stream.events.schema", "EVENT_SCHEMA"),
    "Op": ("vinestream.stream.events.schema", "Op"),
    "BackendError": ("vinestream.structures", "BackendError"),
    "BatchDelta": ("vinestream.structures.delta", "BatchDelta"),
    "BatchResult": ("vinestream.stream.pipeline", "BatchResult"),
    "DynamicGraph": ("vinestream.structures", "DynamicGraph"),
    "Pipeline": ("vinestream.stream.pipeline", "Pipeline"),
    "RunReport": ("vinestream.stream.app.application", "RunReport"),
    "UsageError": ("vinestream.stream.errors", "UsageError"),
    "build_pipeline": ("vinestream.stream.pipeline", "build_pipeline"),
    "events": ("vinestream.stream.events.validate", "events"),
    "read_results": ("vinestream.connectors.parquet", "read_results"),
    "register": ("vinestream.structures", "register"),
    "replay": ("vinestream.stream.app.replay", "replay"),
    "validate": ("vinestream.stream.events.validate", "validate"),
}


def __getattr__(name: str):
    if name in _PUBLIC:
        module, attribute = _PUBLIC[name]
        value = getattr(_importlib.import_module(module), attribute)
        globals()[name] = value                      # imported once
        return value
    raise AttributeError(f"module 'vinestream' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_PUBLIC})


def structures() -> list[str]:
    """Names of the structures that import on this installation (``build_pipeline(structure=...)``)."""
    from vinestream.structures.registry import available
    return available()


def jobs() -> list[str]:
    """Names of the analytics jobs (``build_pipeline(jobs=...)``)."""
    from vinestream.algorithms import JOBS
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
