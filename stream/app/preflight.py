"""Checks that run before any work starts: input files, the output directory, ports, endpoints.

Each check raises :class:`~vinestream.stream.errors.UsageError` (or ``InputError``) with one
line naming the flag or file and what would be valid, so that a mistake is reported in the
first second instead of after a long run (or never).
"""
from __future__ import annotations

import fcntl
import gzip
import json
import os
import shutil
import socket
import time
import urllib.parse
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from vinestream.connectors.base import special_file
from vinestream.connectors.parquet import RUN_INFO, clear_results, directory_logs, written_results
from vinestream.stream.app import checkpoint as ckpt_mod
from vinestream.stream.errors import NOT_UTF8, InputError, UsageError, undecodable_name
from vinestream.stream.events.schema import Op
from vinestream.stream.events.validate import OK, parse_id, validate_table

#: column names read as an edge's source / target by `vinestream convert` (and recognised here)
SOURCE_NAMES = ("src", "source", "from", "u", "node1", "from_node", "fromnodeid", "source_id", "src_id")
#: the columns of an event log, as the validation names them
EVENT_COLUMNS = ("op", "src", "dst", "weight", "ts")
TARGET_NAMES = ("dst", "target", "to", "v", "node2", "to_node", "tonodeid", "target_id", "dst_id")
_TEXT_SUFFIXES = (".txt", ".gz", ".csv", ".tsv", ".mtx", ".graph", ".metis", ".json", ".jsonl", ".ndjson",
                  ".edges", ".el")


def _convert_hint(path: str) -> str:
    stem = Path(path).name
    for suffix in (".gz", ".txt", ".csv", ".tsv", ".mtx", ".graph", ".json", ".jsonl", ".parquet"):
        stem = stem.removesuffix(suffix)
    return f"vinestream convert {path} {Path(path).with_name(stem + '.events.parquet')}"


def parquet_files(paths, what: str = "replay log", once: bool = True) -> list[str]:
    """The Parquet files behind replay's LOG arguments (files, or directories of them); ``once``: a file named
    twice is refused (a replay applies each log once and resumes by file)."""
    out: list[str] = []
    for text in paths:
        if str(text) == "":       # Path("") is Path("."): `replay ""` ("$LOG" unset) replayed the working directory
            raise InputError(f"{what} {str(text)!r}: an empty path; give an event Parquet file or a directory of them")
        if undecodable_name(text) is not None:         # produce's LOGs (replay's are refused by the CLI's type)
            raise InputError(f"{what} {undecodable_name(text)}: {NOT_UTF8}")
        p = Path(text)
        if p.is_dir():
            found = directory_logs(p)
            if not found:
                raise InputError(f"{what} directory {p} holds no .parquet files")
            bad = next((f for f in found if undecodable_name(f) is not None), None)
            if bad is not None:
                raise InputError(f"{what} directory {p} holds {undecodable_name(bad)}: {NOT_UTF8}")
            out += found
        elif p.exists():
            out.append(str(p))
        else:
            raise InputError(f"{what} {p}: no such file")
    seen: dict[str, str] = {}
    for f in out if once else ():       # a file named twice (itself and through its folder, say) would be applied twice
        key = os.path.realpath(f)
        if key in seen:
            names = "" if seen[key] == f else f" (as {seen[key]} and {f})"
            raise InputError(f"{what} {f} is given twice{names}, itself or through its folder: a log is replayed "
                             "once, so name it once")
        seen[key] = f
    return out


def check_event_log(path: str, what: str = "replay log") -> pa.Schema:
    """``path`` is a readable Parquet event log (``op`` and ``src`` columns at least); its schema.

    A text edge list, an edge table without ``op`` or a file with other columns gets the
    ``vinestream convert`` command that turns it into an event log.
    """
    p = Path(path)
    kind = special_file(p)
    if kind:                    # before it is opened: a FIFO blocks there, or reads as 0 bytes ("is empty")
        raise InputError(f"{what} {p}: is {kind}, not a regular file: an event log is a Parquet file")
    if not os.access(p, os.R_OK):
        raise InputError(f"{what} {p}: permission denied (not readable)")
    size = p.stat().st_size
    if size == 0:
        raise InputError(f"{what} {p} is empty (0 bytes): an event log is a Parquet file "
                         "(`vinestream convert` makes one from an edge list)")
    with open(p, "rb") as fh:
        head = fh.read(4)
        fh.seek(max(0, size - 4))
        tail = fh.read(4)
    if head[:2] == b"\x1f\x8b" and _gzip_head(p) == b"PAR1":
        # it was called "gzip-compressed text" with a convert to try; replay reads Parquet from its footer
        plain = p.name.removesuffix(".gz") if p.name.endswith(".gz") and p.name != ".gz" else None
        raise InputError(f"{what} {p} is a gzip-compressed Parquet file, which replay cannot read as it is: gunzip it "
                         + (f"first (`gunzip -k {p}`) and give {p.with_name(plain)}" if plain else
                            f"first (`gunzip -c {p} > {p.name}.parquet`) and give the file it unpacks"))
    if head != b"PAR1" or tail != b"PAR1":
        kind = "gzip-compressed text" if head[:2] == b"\x1f\x8b" else "not a Parquet file"
        raise InputError(f"{what} {p} is {kind}, so not an event log: convert it first with "
                         f"`{_convert_hint(str(p))}`")
    try:
        schema = pq.read_schema(p)
    except (pa.ArrowException, OSError) as exc:
        raise InputError(f"{what} {p}: unreadable Parquet ({exc})") from None
    # a log is read as one dataset, which cannot hold two columns of one name ("Can't unify schema with duplicate
    # field names", naming neither the file nor the column)
    twice = sorted({n for n in schema.names if schema.names.count(n) > 1})
    if twice:
        raise InputError(f"{what} {p}: the column{'s' if len(twice) > 1 else ''} {', '.join(twice)} "
                         f"appear{'' if len(twice) > 1 else 's'} twice; an event log names each column once (rename "
                         "or drop the copy)")
    # the validation reads these names as written: a column "SRC" or "Weight" would be no column at all (every
    # row a dead letter, or the weights silently 1)
    other_case = [n for n in schema.names if n.strip().lower() in EVENT_COLUMNS and n not in EVENT_COLUMNS]
    if other_case:
        raise InputError(f"{what} {p}: column{'s' if len(other_case) > 1 else ''} {', '.join(other_case)}: an event "
                         f"log's columns are {', '.join(EVENT_COLUMNS)}, in lower case; rename them, or convert the "
                         f"file with `{_convert_hint(str(p))}`")
    names = [n.lower() for n in schema.names]
    if "op" in names and "src" in names:
        return schema
    has_edges = any(n in SOURCE_NAMES for n in names) and any(n in TARGET_NAMES for n in names)
    if has_edges:
        raise InputError(f"{what} {p} is an edge table (columns {', '.join(schema.names)}), not an event log "
                         f"(no op column): convert it with `{_convert_hint(str(p))}`")
    raise InputError(f"{what} {p} has columns {', '.join(schema.names) or '(none)'}; an event log has "
                     f"op, src, dst, weight, ts (`{_convert_hint(str(p))} --columns ...` maps yours)")


def _gzip_head(path: Path) -> bytes:
    """The first 4 bytes that a gzip file unpacks to (b"" where it cannot be read)."""
    try:
        with gzip.open(path, "rb") as fh:
            return fh.read(4)
    except (OSError, EOFError):
        return b""


def check_event_logs(paths, what: str = "replay log", once: bool = True) -> list[str]:
    files = parquet_files(paths, what, once)
    for f in files:
        check_event_log(f, what)
    return files


#: what `produce` publishes as it is: it casts a log to EVENT_SCHEMA (the worker validates what arrives), where replay
#: validates every row; op names, float ids or text times failed inside that cast ("unreadable input: Failed to
#: parse string: 'delete' as a scalar of type int8")
_PUBLISHABLE = {"op": (pa.types.is_integer, "integer op codes"), "src": (pa.types.is_integer, "integer ids"),
                "dst": (pa.types.is_integer, "integer ids"),
                "weight": (lambda t: pa.types.is_floating(t) or pa.types.is_integer(t) or pa.types.is_null(t),
                           "numbers"),
                "ts": (lambda t: pa.types.is_timestamp(t) or pa.types.is_null(t), "timestamps")}


def check_publishable_logs(files, what: str = "produce log") -> None:
    """Each of ``files`` (event logs, :func:`check_event_logs`) has columns ``produce`` can publish as they are; one
    line naming the column and the ``vinestream convert`` that types it otherwise."""
    for f in files:
        schema = pq.read_schema(f)
        for name, (fits, words) in _PUBLISHABLE.items():
            if name in schema.names and not fits(schema.field(name).type):
                raise InputError(f"{what} {f}: column {name} is {schema.field(name).type}, not {words}: produce "
                                 f"publishes typed event logs (replay reads this one); type it with "
                                 f"`{_convert_hint(str(f))}`")


#: the events that put a vertex in the graph (a replay's default BFS source is the first one's: first_source)
SOURCE_EVENTS = "a valid add_edge that is not a dropped self-loop, or an add_vertex"


def first_source(files, keep_self_loops: bool = False) -> int | None:
    """The default BFS source of a replay: ``src`` of the first event of the logs that puts its vertex in the
    graph (a valid ``add_edge`` - not a self-loop, which is dropped unless ``keep_self_loops`` - or
    ``add_vertex``), read a thousand rows at a time through the validation the replay applies.  A first row that
    is a dead letter, a delete or a dropped self-loop names no vertex of the graph (every distance was -1)."""
    for f in files:
        pf = pq.ParquetFile(f)
        columns = [c for c in EVENT_COLUMNS if c in pf.schema_arrow.names]
        for batch in pf.iter_batches(batch_size=1024, columns=columns):
            events, _ = validate_table(pa.Table.from_batches([batch]), source=str(f))
            op, src = events.column("op"), events.column("src")
            adds = pc.equal(op, int(Op.ADD_EDGE))
            if not keep_self_loops:
                adds = pc.and_(adds, pc.not_equal(src, pc.fill_null(events.column("dst"), 0)))
            named = pc.or_(adds, pc.equal(op, int(Op.ADD_VERTEX))).to_numpy(zero_copy_only=False)
            if named.any():
                return int(src[int(np.argmax(named))].as_py())
    return None


def has_event_times(files) -> bool:
    """Whether any event of the logs has a ``ts`` (by the row groups' null counts where written, else a scan of
    the column that stops at the first time)."""
    for f in files:
        pf = pq.ParquetFile(f)
        if "ts" not in pf.schema_arrow.names:
            continue
        column = next(i for i in range(pf.metadata.num_columns) if pf.metadata.schema.column(i).path == "ts")
        for group in range(pf.metadata.num_row_groups):
            meta = pf.metadata.row_group(group)
            stats = meta.column(column).statistics
            if stats is not None and stats.has_null_count:
                if stats.null_count < meta.num_rows:
                    return True
            elif pf.read_row_group(group, columns=["ts"]).column(0).null_count < meta.num_rows:
                return True
    return False


def check_event_times(files, flags: dict) -> None:
    """The flags that work on event time (``{flag: value}``; None = not given) refused, in one line, for logs
    without one: they would otherwise do nothing (every batch by size, no pacing, no edge ever expiring)."""
    given = [flag for flag, value in flags.items() if value is not None]
    if given and not has_event_times(files):
        many = len(given) > 1
        raise UsageError(f"{' and '.join(given)} work{'' if many else 's'} on event time, and no event of the log(s) "
                         f"has a ts: leave {'them' if many else 'it'} out, or convert the log with its time column "
                         "(vinestream convert --columns src,dst,ts)")


def check_sources_present(files, sources, flag: str = "--bfs-source") -> None:
    """Every id in ``sources`` occurs as a src or dst of the logs (one columnar scan, stops early)."""
    wanted = pa.array(sorted({int(s) for s in sources}), pa.int64())
    if not len(wanted):
        return
    seen = set()
    for f in files:
        pf = pq.ParquetFile(f)
        cols = [c for c in ("src", "dst") if c in pf.schema_arrow.names]
        for batch in pf.iter_batches(batch_size=1 << 18, columns=cols):
            for col in batch.columns:
                # read as the replay reads ids (text, floats, ...): a cast of the whole column failed on one row that
                # is no id (a dead letter) and skipped every id beside it, refusing a source the log has
                ids, status = parse_id(col, len(col))
                hit = pc.filter(wanted, pc.is_in(wanted, value_set=pa.array(ids[status == OK], pa.int64())))
                seen.update(hit.to_pylist())
            if len(seen) == len(wanted):
                return
    missing = [v for v in wanted.to_pylist() if v not in seen]
    raise UsageError(f"{flag} {','.join(map(str, missing))}: no such vertex in the log(s); BFS would reach "
                     "nothing (give ids that occur as src or dst)")


def _nearest_existing(path: Path) -> Path:
    path = path.absolute()
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def check_writable_dir(path, flag: str, *, create: bool = True) -> Path:
    """``path`` is (or can become) a writable directory; created unless ``create`` is False (``run --check``),
    where what the run does first is done and undone instead - the first missing directory made and removed, or
    a file written and removed in the existing one: the permission bits alone say yes where the run then fails
    (``/proc/x``, a read-only mount, or anything as root)."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise UsageError(f"{flag} {path}: is a file, not a directory (give a directory)")
    base = _nearest_existing(path)
    if not base.is_dir():
        raise UsageError(f"{flag} {path}: {base} is a file, not a directory")
    if not os.access(base, os.W_OK | os.X_OK):
        raise UsageError(f"{flag} {path}: {base} is not writable (give a directory you can write)")
    try:
        if create:
            path.mkdir(parents=True, exist_ok=True)
        if path.exists():
            _write_probe(path)
        else:                                       # nothing is left behind by a dry run
            top = path.absolute()
            while top.parent != base:
                top = top.parent
            top.mkdir()
            top.rmdir()
    except OSError as exc:
        raise UsageError(f"{flag} {path}: not writable ({exc.strerror or exc})") from None
    return path


def check_writable_file(path, flag: str) -> Path:
    """``path`` can be written as a file once the run ends: not a directory, and its folder exists or can be made
    (as `convert` and `report --html` make theirs) by a user who may write there; writable itself if it exists.
    Nothing is created here: a run that fails leaves nothing behind, yet a mistake is reported before a long run,
    not after it with its results lost."""
    path = Path(path)
    if path.is_dir():
        raise UsageError(f"{flag} {path}: is a directory (give a file name)")
    base = _nearest_existing(path.absolute().parent)
    if not base.is_dir():
        raise UsageError(f"{flag} {path}: {base} is a file, not a directory")
    if not os.access(base, os.W_OK | os.X_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise UsageError(f"{flag} {path}: not writable (give a file you can write)")
    # the permission bits say yes where the write then fails (/proc, a read-only mount, anything as root): a file
    # written and removed beside it, as check_writable_dir probes (`bench --json /proc/x.json` failed after the bench)
    try:
        _write_probe(base)
    except OSError as exc:
        raise UsageError(f"{flag} {path}: not writable ({exc.strerror or exc})") from None
    return path


def _write_probe(directory: Path) -> None:
    """Write a file in ``directory`` and remove it (OSError where that fails): what a run does there first."""
    probe = directory / f".vinestream-write-test-{os.getpid()}"
    probe.write_bytes(b"")
    probe.unlink()


def write_json_file(path, value) -> None:
    """``value`` as indented JSON at ``path``, its folder made first (checked by :func:`check_writable_file`)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, indent=2, default=str))


#: a run holds an exclusive lock on this file in its --out and --checkpoint-dir for as long as it runs: two runs
#: on one directory at once wrote over each other's parts and checkpoints (one failed, the other's dead letters
#: came out doubled); a killed run's lock goes with its process
LOCK_FILE = ".vinestream.lock"
_locks: dict[str, list] = {}         # real path -> [the open lock file, holders in this process]


def lock_dir(path, flag: str) -> None:
    """Hold ``path`` (an existing directory) for this process: a second process that asks is refused in one line.
    Calls in one process nest (the command line checks, then the run it starts takes it again); each
    :func:`unlock_dir` undoes one."""
    key = os.path.realpath(path)
    if key in _locks:
        _locks[key][1] += 1
        return
    fh = open(Path(path) / LOCK_FILE, "a+")
    try:
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        fh.seek(0)
        holder = fh.read().strip()
        fh.close()
        raise UsageError(f"{flag} {path} is in use by another vinestream run"
                         f"{f' (pid {holder})' if holder.isdigit() else ''}: wait for it to end, or give "
                         f"another {flag}") from None
    fh.seek(0)
    fh.truncate()
    fh.write(str(os.getpid()))
    fh.flush()
    _locks[key] = [fh, 1]


def unlock_dir(path) -> None:
    """Undo one :func:`lock_dir` of ``path`` by this process (the last one lets other processes in)."""
    held = _locks.get(os.path.realpath(path))
    if held is None:
        return
    held[1] -= 1
    if held[1] == 0:
        del _locks[os.path.realpath(path)]
        held[0].close()


def clear_checkpoints(directory) -> int:
    """Remove the checkpoints vinestream wrote in ``directory`` (``ckpt-*``, ``LATEST``); how many."""
    d = Path(directory)
    if not d.is_dir():
        return 0
    n = 0
    for entry in list(d.glob("ckpt-*")) + list(d.glob(".tmp-ckpt-*")):
        shutil.rmtree(entry, ignore_errors=True)
        n += 1
    (d / "LATEST").unlink(missing_ok=True)
    return n


def prepare_out_dir(out, *, overwrite: bool = False, resume: bool = False, checkpoint_dir=None,
                    dry_run: bool = False) -> str:
    """Decide what a run does with ``--out``; returns "fresh", "resume" or "overwrite".

    - ``out`` holds no vinestream results: a fresh run (resuming from a checkpoint if one exists);
    - it does: refused, unless ``--overwrite`` (results and checkpoints removed first) or
      ``--resume`` with a ``--checkpoint-dir`` to continue from.  A run killed before its first
      checkpoint left results but no checkpoint: resuming it starts from the beginning, and the
      sinks rewrite its epochs (nothing was committed, so nothing is lost or counted twice).
    """
    if overwrite and resume:
        raise UsageError("--overwrite and --resume contradict each other: choose one")
    path = check_writable_dir(out, "--out", create=not dry_run)
    if dry_run:
        return _out_dir_mode(path, overwrite, resume, checkpoint_dir, dry_run)
    lock_dir(path, "--out")     # before anything is cleared or read: another run may be writing there now
    try:
        if checkpoint_dir:
            ckpt_mod.check_writable(checkpoint_dir)      # made, or one line saying why not
            lock_dir(checkpoint_dir, "--checkpoint-dir")
        return _out_dir_mode(path, overwrite, resume, checkpoint_dir, dry_run)
    except BaseException:
        unlock_run_dirs(path, checkpoint_dir)
        raise


def unlock_run_dirs(out, checkpoint_dir=None) -> None:
    """Undo what :func:`prepare_out_dir` locked (the end of a run in this process)."""
    for path in (out, checkpoint_dir):
        if path:
            unlock_dir(path)


def _out_dir_mode(path: Path, overwrite: bool, resume: bool, checkpoint_dir, dry_run: bool) -> str:
    existing = written_results(path)
    has_ckpt = bool(checkpoint_dir) and ckpt_mod.latest(checkpoint_dir) is not None
    if resume and not has_ckpt:
        if existing and not checkpoint_dir:
            raise UsageError("--resume: nothing to resume from (no --checkpoint-dir given); use --overwrite to "
                             "start over")
        return "fresh"
    if overwrite:
        if not dry_run:
            clear_results(path)
            if checkpoint_dir:
                clear_checkpoints(checkpoint_dir)
        return "overwrite"
    if existing and not has_ckpt and not resume:
        raise UsageError(f"--out {path} already holds results ({', '.join(existing[:4])}"
                         f"{', ...' if len(existing) > 4 else ''}): pass --overwrite to replace them, --resume "
                         "with the run's --checkpoint-dir to continue it, or choose another --out")
    if existing and has_ckpt and not resume:
        raise UsageError(f"--out {path} already holds results and --checkpoint-dir {checkpoint_dir} a checkpoint: "
                         "pass --resume to continue that run, or --overwrite to start over")
    return "resume" if has_ckpt else "fresh"


def write_run_info(out, info: dict) -> None:
    """``OUT/_run.json``: what wrote the directory (the report's title and settings come from it), and the
    version of vinestream that did."""
    try:
        info = {**info, "version": version("vinestream")}
    except PackageNotFoundError:
        info = {**info, "version": "0+unknown"}
    path = Path(out) / RUN_INFO
    info = {"written": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), **info}
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(info, indent=1, default=str))
    os.replace(tmp, path)


def check_port(port: int, flag: str = "--metrics-port", addr: str = "0.0.0.0", *, bind: bool = True,
               addr_flag: str = "--metrics-addr") -> None:
    """``addr`` names an address of this machine and ``port`` is a TCP port this process can listen on there now
    (0 = any free one; -1 or None = off, nothing to check).  ``bind=False`` (``run --check``) only resolves the
    address: a running worker may hold the port."""
    if port is None or port == -1:
        return
    if not 0 <= port <= 65535:
        raise UsageError(f"{flag} {port}: not a TCP port (1..65535; 0 = any free port)")
    try:
        family, kind, proto, _, where = socket.getaddrinfo(addr, port, type=socket.SOCK_STREAM)[0]
    except (socket.gaierror, UnicodeError) as exc:
        raise UsageError(f"{addr_flag} {addr}: not an address of this machine ({getattr(exc, 'strerror', exc)}); "
                         "give 127.0.0.1, 0.0.0.0 or a host name that resolves") from None
    if not bind:
        return
    with socket.socket(family, kind, proto) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(where)
        except OSError as exc:
            if port == 0:
                raise UsageError(f"{addr_flag} {addr}: cannot listen there ({exc.strerror}); give an address of "
                                 "this machine (127.0.0.1, 0.0.0.0)") from None
            raise UsageError(f"{flag} {port}: cannot listen on {addr}:{port} ({exc.strerror}); "
                             "choose a free port, or 0 for any") from None


def check_reachable(url: str, flag: str, timeout: float = 3.0) -> None:
    """An HTTP(S) endpoint's host answers on its port (a TCP connect; no request is sent)."""
    parsed = urllib.parse.urlparse(url if "://" in url else "http://" + url)
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        raise UsageError(f"{flag} {url}: expected an http(s)://HOST[:PORT] URL")
    try:
        port = parsed.port or (443 if parsed.scheme == "https" else 80)
    except ValueError:
        raise UsageError(f"{flag} {url}: the port is not a number 1..65535") from None
    try:
        with socket.create_connection((parsed.hostname, port), timeout=timeout):
            pass
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise UsageError(f"{flag} {url}: cannot connect to {parsed.hostname}:{port} ({reason}); "
                         "start it or drop the flag") from None


def check_kafka_servers(servers: str, flag: str = "--bootstrap-servers") -> list[tuple[str, int]]:
    """HOST:PORT[,HOST:PORT...] syntax (not reachability: the worker retries brokers with backoff)."""
    out = []
    for item in str(servers).split(","):
        host, sep, port_text = item.strip().rpartition(":")
        if not sep or not host or not port_text.isdigit() or not 1 <= int(port_text) <= 65535:
            raise UsageError(f"{flag} {servers!r}: expected HOST:PORT[,HOST:PORT...] (e.g. localhost:9092)")
        out.append((host.strip("[]"), int(port_text)))
    return out
