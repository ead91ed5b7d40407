"""Atomic checkpoints of a running pipeline (DESIGN.md "The worker and its guarantees").

A checkpoint is a directory ``DIR/ckpt-<epoch>``:

```
manifest.json          epoch, time, source offsets, scalar state, array names
structure_rows.arrow   live internal vertex ids (int32, ascending) and out-degree (int64)
structure_edges.arrow  every edge's column id (int32) and weight (float32), rows in that order (CSR)
state/<key>.arrow      every array of ``pipeline.state()`` (vertex map, job states...)
```

It is written into a temporary directory, fsynced, then renamed into place under a
name no other checkpoint has (``ckpt-<epoch>-<nanoseconds>``: the same epoch may be
checkpointed again, e.g. after batches of dead letters only), and ``DIR/LATEST``
(the name of the newest one) is replaced atomically afterwards; older ones are
pruned only then.  So a worker killed at any moment leaves either the old or the
new checkpoint, never half of one, and ``LATEST`` never names a missing one (should
it anyway, e.g. after a disk was restored by hand, :func:`latest` falls back to the
newest complete checkpoint).  Source positions are stored per partition: an offset
(or file row), and for Kafka also the events of that message already applied and the
partition's running maximum event time (the event-time merge's state).  Restoring
rebuilds the structure with ``insert_vertices`` and ``insert_edges`` of CSR batches
and hands the rest to ``pipeline.load_state``.
"""
from __future__ import annotations

import itertools
import json
import logging
import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
from pyarrow import feather

from vinestream.connectors.base import naming_file, pid_alive
from vinestream.stream.errors import UsageError
from vinestream.structures.backend import asarray, to_numpy
from vinestream.structures.csr_types import CSRBatch

log = logging.getLogger(__name__)

FORMAT_VERSION = 1
#: edges per insert_edges call when rebuilding (bounds device memory on restore)
RESTORE_CHUNK_EDGES = 1 << 24


@dataclass
class Checkpoint:
    path: Path
    epoch: int
    created: float
    offsets: dict                  # (topic, partition) -> next offset to read, or (offset, skip, max_ts)
    state: dict                    # nested dict: numpy arrays / pa.Tables and JSON scalars
    vertices: np.ndarray = field(repr=False)   # int32 live internal ids
    degrees: np.ndarray = field(repr=False)    # int64 out-degree per live vertex
    cols: np.ndarray = field(repr=False)       # int32
    weights: np.ndarray = field(repr=False)    # float32
    extra: dict = field(default_factory=dict)  # the application's counters (e.g. dead letters written)


# -- nested state <-> flat files ------------------------------------------------------------

def _flatten(state: dict, prefix: str = "") -> dict:
    out = {}
    for key, value in state.items():
        if "/" in str(key) or "." in str(key):
            raise ValueError(f"state keys may not contain '/' or '.': {key!r}")
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(_flatten(value, name + "."))
        else:
            out[name] = value
    return out


def _unflatten(flat: dict) -> dict:
    out: dict = {}
    for name, value in flat.items():
        node = out
        *parents, leaf = name.split(".")
        for p in parents:
            node = node.setdefault(p, {})
        node[leaf] = value
    return out


def _is_array(value) -> bool:
    return (isinstance(value, (np.ndarray, pa.Array, pa.ChunkedArray, pa.Table))
            or hasattr(value, "__cuda_array_interface__"))


def _to_table(value) -> pa.Table:
    if isinstance(value, pa.Table):
        return value
    if isinstance(value, (pa.Array, pa.ChunkedArray)):
        return pa.table({"values": value})
    return pa.table({"values": to_numpy(value)})


def _from_table(table: pa.Table):
    if table.column_names == ["values"]:
        # a writable copy: Arrow's zero-copy views are read-only, and jobs update their state in place
        return np.array(table.column("values").to_numpy(), copy=True)
    return table


def _json_scalar(value):
    if isinstance(value, np.generic):
        return value.item()
    return value


# -- writing ----------------------------------------------------------------------------------

def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_table(path: Path, table: pa.Table) -> None:
    with naming_file(path):
        feather.write_feather(table, str(path), compression="uncompressed")
    with open(path, "rb+") as f:
        os.fsync(f.fileno())


def _position_json(key, value) -> dict:
    topic, partition = _tp(key)
    entry = {"topic": topic, "partition": partition}
    if isinstance(value, tuple):            # a Kafka MergePosition: offset, skip, max_ts
        entry.update(offset=int(value[0]), skip=int(value[1]), max_ts=int(value[2]))
    else:
        entry["offset"] = int(value)
    return entry


def _position_value(entry: dict):
    if "skip" in entry:
        return (int(entry["offset"]), int(entry["skip"]), int(entry["max_ts"]))
    return entry["offset"]


def save(directory, pipeline, offsets: dict, *, keep: int = 2, extra: dict | None = None) -> Path:
    """Write a checkpoint of ``pipeline`` (structure, ``state()``, epoch) and the source ``offsets``.

    ``offsets``: ``{(topic, partition) or TopicPartition: next offset}``, the
    positions right after the last event the state includes.
    """
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    epoch = int(pipeline.epoch)
    structure = pipeline.structure
    vertices = structure.vertices()
    csr = structure.adjacency(vertices)
    tmp = directory / f".tmp-ckpt-{epoch:012d}-{os.getpid()}-{time.monotonic_ns()}"
    tmp.mkdir()
    try:
        degrees = np.diff(to_numpy(csr.offsets)).astype(np.int64)
        _write_table(tmp / "structure_rows.arrow",
                     pa.table({"vertex": to_numpy(vertices).astype(np.int32), "degree": degrees}))
        weights = to_numpy(csr.weights) if csr.weights is not None else np.ones(csr.num_edges, np.float32)
        _write_table(tmp / "structure_edges.arrow",
                     pa.table({"col": to_numpy(csr.cols).astype(np.int32), "weight": weights.astype(np.float32)}))
        flat = _flatten(pipeline.state() if hasattr(pipeline, "state") else {})
        arrays, scalars, array_rows = [], {}, {}
        (tmp / "state").mkdir()
        for name, value in flat.items():
            if _is_array(value):
                table = _to_table(value)
                _write_table(tmp / "state" / f"{name}.arrow", table)
                arrays.append(name)
                array_rows[name] = table.num_rows
            else:
                scalars[name] = _json_scalar(value)
        manifest = {
            "format_version": FORMAT_VERSION, "epoch": epoch, "created": time.time(),
            "structure": getattr(structure, "name", ""), "vertices": int(vertices.shape[0]),
            "edges": int(csr.num_edges),
            "offsets": [_position_json(k, v) for k, v in sorted(offsets.items(), key=lambda kv: _tp(kv[0]))],
            "arrays": arrays, "scalars": scalars, "extra": dict(extra or {}),
            # each state array's length: one cut short at a record boundary still reads (and its file may even keep
            # its size, Arrow pads buffers), so load() holds it against this and latest() takes an older checkpoint
            "array_rows": array_rows,
        }
        with open(tmp / "manifest.json", "w") as f:
            json.dump(manifest, f, indent=1)
            f.flush()
            os.fsync(f.fileno())
        _fsync_dir(tmp)
        final = directory / f"ckpt-{epoch:012d}-{time.time_ns():020d}"
        os.rename(tmp, final)                   # a new name: the one LATEST names is never touched
        latest_tmp = directory / f".LATEST.{os.getpid()}"
        latest_tmp.write_text(final.name)
        os.replace(latest_tmp, directory / "LATEST")
        _fsync_dir(directory)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    _prune(directory, keep)
    return final


def _tp(key) -> tuple:
    if hasattr(key, "topic"):
        return (key.topic, int(key.partition))
    return (key[0], int(key[1]))


def _complete(directory: Path) -> list:
    """Complete checkpoints (renamed into place: they have a manifest), oldest first."""
    return sorted(p for p in directory.glob("ckpt-*") if p.is_dir() and (p / "manifest.json").exists())


def _prune(directory: Path, keep: int) -> None:
    pointer = directory / "LATEST"
    current = pointer.read_text().strip() if pointer.exists() else None
    done = _complete(directory)
    for old in done[:-keep] if keep > 0 else []:
        if old.name != current:
            shutil.rmtree(old, ignore_errors=True)
    remove_stale_writes(directory)


def remove_stale_writes(directory) -> None:
    """Remove what killed writers left: ``.tmp-ckpt-<epoch>-<pid>-<ns>`` directories and ``.LATEST.<pid>``, and
    ``ckpt-*`` directories without a manifest: a checkpoint is renamed into place with its manifest, so one without
    is the rest of a prune killed half-way (its structure files, never pruned after: they are no checkpoint)."""
    directory = Path(directory)
    for partial in directory.glob("ckpt-*"):
        if partial.is_dir() and not (partial / "manifest.json").exists():
            shutil.rmtree(partial, ignore_errors=True)
    for tmp in list(directory.glob(".tmp-ckpt-*")) + list(directory.glob(".LATEST.*")):
        parts = tmp.name.split("-") if tmp.name.startswith(".tmp-ckpt-") else tmp.name.split(".")
        try:
            pid = int(parts[3] if tmp.name.startswith(".tmp-ckpt-") else parts[-1])
        except (ValueError, IndexError):
            continue
        if pid != os.getpid() and not pid_alive(pid):
            if tmp.is_dir():
                shutil.rmtree(tmp, ignore_errors=True)
            else:
                tmp.unlink(missing_ok=True)


def check_writable(directory) -> None:
    """Create ``directory`` and prove a file can be written there (fail at start, with a clear error)."""
    directory = Path(directory)
    try:
        directory.mkdir(parents=True, exist_ok=True)
        probe = directory / f".probe.{os.getpid()}"
        probe.write_text("ok")
        probe.unlink()
    except OSError as exc:
        raise UsageError(f"checkpoint directory {directory} is not writable: {exc.strerror or exc}") from None
    remove_stale_writes(directory)


BATCH_LIMIT = "batch_limit.json"


def save_batch_limit(directory, events: int) -> None:
    """Remember that batches above ``events`` did not fit in memory (read at the next start)."""
    path = Path(directory) / BATCH_LIMIT
    tmp = path.with_name(f".{BATCH_LIMIT}.{os.getpid()}")
    tmp.write_text(json.dumps({"max_batch_events": int(events), "time": time.time()}))
    os.replace(tmp, path)


def batch_limit(directory) -> int | None:
    path = Path(directory) / BATCH_LIMIT
    try:
        return int(json.loads(path.read_text())["max_batch_events"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


# -- reading and restoring ------------------------------------------------------------------

def latest(directory) -> Checkpoint | None:
    """The newest complete checkpoint under ``directory`` (None if there is none).

    ``LATEST`` names it; if that one is missing or unreadable the newest complete
    checkpoint is taken instead (with a warning), never an error.
    """
    directory = Path(directory)
    pointer = directory / "LATEST"
    if not pointer.exists():             # killed between renaming the first checkpoint and writing LATEST
        complete = _complete(directory) if directory.is_dir() else []
        return load(complete[-1]) if complete else None
    name = None
    try:
        # read inside the try: a LATEST of garbage bytes (a disk restored by hand) is as unusable as a missing
        # checkpoint, and falls back the same way (it was a UnicodeDecodeError that named no file)
        name = pointer.read_text().strip()
        return load(directory / name)
    except (OSError, ValueError, KeyError, pa.ArrowInvalid) as exc:
        named = f"checkpoint {name} named by LATEST" if name is not None else "LATEST"
        for candidate in reversed(_complete(directory)):
            if candidate.name == name:
                continue
            try:
                ck = load(candidate)
            except (OSError, ValueError, KeyError, pa.ArrowInvalid):
                continue
            # a run looks for its checkpoint several times (its checks, then its start): one warning is enough
            if (directory, name, candidate.name) not in _warned:
                _warned.add((directory, name, candidate.name))
                log.warning("%s is unusable (%s); using %s", named, exc, candidate.name)
            return ck
        where = directory / name if name is not None else directory / "LATEST"
        raise UsageError(f"checkpoint {where} is unusable ({exc}) and no other complete "
                         f"checkpoint is in {directory}") from None


#: (directory, the name LATEST held, the checkpoint used instead) already warned about in this process
_warned: set = set()


def load(path) -> Checkpoint:
    path = Path(path)
    manifest = json.loads((path / "manifest.json").read_text())
    rows = feather.read_table(str(path / "structure_rows.arrow"))
    edges = feather.read_table(str(path / "structure_edges.arrow"))
    degrees = rows.column("degree").to_numpy()
    # a file cut short at a record boundary still reads: held against the manifest, the checkpoint is unusable (and
    # latest() falls back to an older one) instead of failing the restore with "operands could not be broadcast"
    if (rows.num_rows, edges.num_rows, int(degrees.sum())) != (manifest["vertices"], manifest["edges"],
                                                               manifest["edges"]):
        raise ValueError(f"its structure files hold {rows.num_rows} vertices and {edges.num_rows} edges (degrees "
                         f"summing to {int(degrees.sum())}) where the manifest says {manifest['vertices']} and "
                         f"{manifest['edges']}")
    flat = dict(manifest["scalars"])
    expected = manifest.get("array_rows", {})          # (checkpoints of earlier versions hold none)
    for name in manifest["arrays"]:
        table = feather.read_table(str(path / "state" / f"{name}.arrow"))
        if name in expected and table.num_rows != expected[name]:
            raise ValueError(f"state/{name}.arrow holds {table.num_rows} rows where the manifest says {expected[name]}")
        flat[name] = _from_table(table)
    return Checkpoint(
        path=path, epoch=manifest["epoch"], created=manifest["created"],
        offsets={(o["topic"], o["partition"]): _position_value(o) for o in manifest["offsets"]},
        state=_unflatten(flat), extra=dict(manifest.get("extra", {})),
        vertices=rows.column("vertex").to_numpy(), degrees=degrees,
        cols=edges.column("col").to_numpy(), weights=edges.column("weight").to_numpy())


def restore_structure(structure, ckpt: Checkpoint, chunk_edges: int = RESTORE_CHUNK_EDGES) -> None:
    """Rebuild an empty structure: ``insert_vertices`` then ``insert_edges`` of CSR batches of rows."""
    xp = structure.xp
    structure.insert_vertices(asarray(xp, ckpt.vertices.astype(np.int32)))
    if ckpt.cols.shape[0] == 0:
        return
    offsets = np.zeros(ckpt.degrees.shape[0] + 1, dtype=np.int64)
    np.cumsum(ckpt.degrees, out=offsets[1:])
    # Row ranges of about chunk_edges edges each: a loop over chunks, not over vertices.
    cuts = np.unique(np.concatenate([[0], np.searchsorted(offsets, np.arange(chunk_edges, offsets[-1],
                                                                              chunk_edges)),
                                     [ckpt.degrees.shape[0]]]))
    for lo, hi in itertools.pairwise(cuts):
        e0, e1 = offsets[lo], offsets[hi]
        src = np.repeat(ckpt.vertices[lo:hi], ckpt.degrees[lo:hi])
        batch = CSRBatch.from_edges(xp, asarray(xp, src), asarray(xp, ckpt.cols[e0:e1]),
                                    asarray(xp, ckpt.weights[e0:e1]), assume_unique=True)
        structure.insert_edges(batch)


def restore(pipeline, ckpt: Checkpoint) -> None:
    """Load ``ckpt`` into a freshly built pipeline: structure, then ``pipeline.load_state(state)``."""
    restore_structure(pipeline.structure, ckpt)
    if hasattr(pipeline, "load_state"):
        pipeline.load_state(ckpt.state)
