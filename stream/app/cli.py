"""The `vinestream` command: replay, run, produce, convert, bench, report.

Flag names given in the issues are a contract (``replay [LOG ...] --structure
--batch-size --out --backend``; ``run --bootstrap-servers --topic --group
--format --structure --jobs --metrics-port --out``; ``produce LOG --topic
--format --bootstrap-servers --rate``; ``--jobs --bfs-source --jobs-every``).
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import sys

from vinestream.stream.errors import NOT_UTF8, UsageError, undecodable_name
from vinestream.structures.backend import BACKENDS, BackendError

JOB_NAMES = ("pagerank", "bfs", "triangles")   # algorithms.JOBS, without importing it at start-up
#: structures that take a ``block_size`` option (--block-size)
BLOCK_SIZE_STRUCTURES = ("graphvine",)


class ArgumentParser(argparse.ArgumentParser):
    """argparse, but a bad argument is a :class:`UsageError` (one line from :func:`main`), not usage + exit."""

    def error(self, message):
        raise UsageError(f"{message} (see `{self.prog} --help`)")

    def parse_args(self, args=None, namespace=None):
        # arguments left over are the command's mistake: its help names its flags (the top level's only the commands)
        namespace, extras = self.parse_known_args(args, namespace)
        if extras:
            command = getattr(self, "commands", {}).get(getattr(namespace, "command", None), self)
            command.error(f"unrecognized arguments: {' '.join(extras)}")
        return namespace


# -- argument types: each names what would be valid --------------------------------------------
def _csv_list(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def _int_list(text: str) -> list[int]:
    try:
        return [int(x) for x in _csv_list(text)]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from None


def _id_list(text: str) -> list[int]:
    """Comma-separated external vertex ids (int64)."""
    from vinestream.stream.app.config import vertex_ids
    values = _int_list(text)
    problem = vertex_ids(values)
    if problem:
        raise argparse.ArgumentTypeError(f"expected {problem}")
    return values


def _check(value, check, text: str):
    """``value`` (parsed from ``text``) if config.py's ``check``, shared with the Python API's arguments, finds it
    valid."""
    problem = check(value)
    if problem:
        raise argparse.ArgumentTypeError(f"expected {problem}, got {text}")
    return value


def int_at_least(low: int):
    def parse(text: str) -> int:
        from vinestream.stream.app.config import integer_at_least
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer >= {low}, got {text!r}") from None
        return _check(value, integer_at_least(low), text)
    parse.__name__ = f"integer >= {low}"
    return parse


def utf8_path(text: str) -> str:
    """A path whose name is UTF-8 text (:func:`~vinestream.stream.errors.undecodable_name`): another one failed
    deep inside pyarrow with "'utf-8' codec can't encode character '\\udcff'", naming neither file nor flag; the
    message here is argparse's "argument FLAG: ...", with the name's undecodable bytes escaped."""
    shown = undecodable_name(text)
    if shown is not None:
        raise argparse.ArgumentTypeError(f"{shown}: {NOT_UTF8}")
    return text


def path_given(text: str) -> str:
    """A path that names something: "" ("$OUT" unset) was taken as no --out (the run wrote nothing, but its
    _run.json in the working directory), and report "" drew the working directory.  In UTF-8 (:func:`utf8_path`)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("expected a path, got an empty one")
    return utf8_path(text)


def positive_float(text: str) -> float:
    from vinestream.stream.app.config import positive
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number > 0, got {text!r}") from None
    return _check(value, positive, text)


def window_seconds(text: str) -> float:
    """--window: a positive number of seconds that a ``datetime.timedelta`` holds (1 us to 999,999,999 days): past it
    the replay failed with an internal OverflowError, and below a microsecond with "window must be positive"."""
    from vinestream.stream.app import config
    return _check(positive_float(text), config.window_seconds, text)


def nonnegative_float(text: str) -> float:
    from vinestream.stream.app.config import at_least
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number >= 0, got {text!r}") from None
    return _check(value, at_least(0), text)


def tcp_port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a TCP port 1..65535 (0 = any free port), got {text!r}") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"expected a TCP port 1..65535 (0 = any free port), got {value}")
    return value


def job_list(text: str) -> list[str]:
    """``pagerank,bfs`` or ``none``; unknown names are an error naming the valid ones."""
    names = _csv_list(text)
    if not names:           # `--jobs "$JOBS"` with the variable unset ran no job without a word
        raise argparse.ArgumentTypeError(f"no job named; choose from {', '.join(JOB_NAMES)}, or none for no job")
    if names == ["none"]:
        return []
    bad = [n for n in names if n not in JOB_NAMES]
    if bad:
        raise argparse.ArgumentTypeError(f"unknown job {bad[0]!r}; choose from {', '.join(JOB_NAMES)} (or none)")
    return names


def add_graph_arguments(p: argparse.ArgumentParser, *, default_jobs: str = "none") -> None:
    """Structure, backend, graph semantics, jobs and the sliding window (replay's; run has config.py's)."""
    from vinestream.structures.registry import _MODULES
    g = p.add_argument_group("graph")
    g.add_argument("--structure", default=None, choices=sorted(_MODULES),
                   help="dynamic graph structure (default csr)")
    g.add_argument("--backend", default=None, choices=BACKENDS,
                   help="array backend: auto (CuPy if a GPU answers), cpu or gpu "
                        "(default: $VINESTREAM_BACKEND or auto)")
    g.add_argument("--undirected", action="store_true", default=None,
                   help="mirror every edge event (undirected graph)")
    g.add_argument("--keep-self-loops", action="store_true", default=None,
                   help="keep self-loops instead of dropping and counting them")
    g.add_argument("--edge-ttl", type=positive_float, default=None, metavar="SECONDS",
                   help="sliding window: delete an edge once the event-time watermark (the largest ts seen) "
                        "is more than SECONDS past its last insert; a re-insert refreshes it")
    j = p.add_argument_group("jobs")
    j.add_argument("--jobs", type=job_list, default=None,
                   help=f"comma-separated jobs to run after batches: {','.join(JOB_NAMES)}, or none "
                        f"(default {default_jobs})")
    j.add_argument("--bfs-source", type=_id_list, default=None,
                   help="external vertex id(s) BFS starts from, comma-separated (replay default: the "
                        "source vertex of the logs' first event that puts a vertex in the graph)")
    j.add_argument("--jobs-every", type=int_at_least(1), default=None, help="run the jobs every N batches (default 1)")
    j.add_argument("--job-option", action="append", default=None, metavar="JOB.OPTION=VALUE",
                   help="job parameter, repeatable: pagerank.damping=0.85, pagerank.tol=1e-6, "
                        "pagerank.max_iter=1000, pagerank.weighted=false")


def _add_output_arguments(p: argparse.ArgumentParser) -> None:
    o = p.add_argument_group("results")
    o.add_argument("--out", type=path_given, default=None, metavar="DIR",
                   help="results directory: summary.parquet/, <job>/epoch=<n>/part-0.parquet, dead_letter.parquet")
    o.add_argument("--overwrite", action="store_true", help="replace the results already in --out "
                                                            "(and the checkpoints in --checkpoint-dir)")
    o.add_argument("--resume", action="store_true",
                   help="continue the run whose results are in --out from its latest checkpoint")
    o.add_argument("--keep-epochs", type=int_at_least(1), default=None, metavar="N",
                   help="keep only the job outputs of the newest N epochs (default: all)")
    o.add_argument("--output-every", type=int_at_least(1), default=1, metavar="N",
                   help="write job outputs at epochs that are multiples of N, and the last one (default 1)")


def _job_options(args) -> dict:
    """``--job-option`` flags -> validated ``{job: {option: value}}``."""
    from vinestream.stream.app.config import PAIR_FORMS, BadPart, key_value_pairs, parse_job_options
    raw = {}
    for item in args.job_option or ():
        try:
            raw.update(key_value_pairs(item))
        except BadPart as exc:
            raise UsageError(f"--job-option {str(exc)!r}: expected {PAIR_FORMS['job_options']}") from None
    return parse_job_options(raw, args.jobs)


# -- replay ----------------------------------------------------------------------------------
def _replay_parser(sub) -> None:
    p = sub.add_parser("replay", help="replay recorded event logs (Parquet) through the pipeline",
                       description="Replay event Parquet logs through the pipeline. With no LOG, replays "
                                   "the bundled sample (SNAP CollegeMsg, 59,835 timed edge events).")
    p.add_argument("logs", nargs="*", type=utf8_path, metavar="LOG", help="event Parquet files or directories")
    p.add_argument("--batch-size", type=int_at_least(1), default=None,
                   help="events per batch (default 100000; 5000 for the bundled sample)")
    p.add_argument("--window", type=window_seconds, default=None, metavar="SECONDS",
                   help="cut batches by event time instead: one batch per window of ts")
    p.add_argument("--speed", type=positive_float, default=None,
                   help="pace the replay against ts: 1 = real time, 60 = a minute per second")
    p.add_argument("--metrics-port", type=tcp_port, default=None,
                   help="serve Prometheus metrics on this port while replaying (off by default; 0 = any free port)")
    p.add_argument("--metrics-addr", default="127.0.0.1", metavar="ADDR",
                   help="address the metrics endpoint binds (default 127.0.0.1; 0.0.0.0 for every interface)")
    p.add_argument("--pushgateway", default=None, metavar="URL", help="push final metrics to a Pushgateway")
    p.add_argument("--block-size", type=int_at_least(1), default=None,
                   help="graphvine: one fixed edge block size for every vertex, 1 to 4096 (graphvine's "
                        "max_block_size); default: size classes (powers of two from 2 to 4096), each vertex's "
                        "blocks from the class of about a quarter of its degree (block_sizing='degree')")
    p.add_argument("--checkpoint-dir", type=path_given, default=None, metavar="DIR",
                   help="checkpoint here (and resume from the latest checkpoint found here)")
    p.add_argument("--checkpoint-every-batches", type=int_at_least(0), default=100, metavar="N",
                   help="checkpoint every N batches (default 100; 0 = only at the end)")
    p.add_argument("--checkpoint-every-seconds", type=nonnegative_float, default=60.0, metavar="T",
                   help="checkpoint every T seconds (default 60; 0 = never by time)")
    p.add_argument("--decoder", default="auto", choices=("auto", "pyarrow", "cudf"),
                   help="how logs are read: cudf (cudf.read_parquet into GPU memory; GPU backend, size "
                        "batches), pyarrow, or auto (cudf where installed on a GPU backend; the default)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--json", type=utf8_path, default=None, metavar="FILE",
                   help="also write the end summary as JSON")
    _add_output_arguments(p)
    add_graph_arguments(p, default_jobs="pagerank,bfs,triangles")
    p.set_defaults(func=cmd_replay)


def _check_replay(args):
    """Every flag and input checked before the replay starts; returns (files, jobs, bfs sources, options)."""
    from vinestream.connectors.sample import sample_log_path
    from vinestream.stream.app import preflight
    structure = args.structure or "csr"
    if args.block_size is not None and structure not in BLOCK_SIZE_STRUCTURES:
        raise UsageError(f"--block-size applies to --structure {' or '.join(BLOCK_SIZE_STRUCTURES)}, "
                         f"not {structure}")
    if args.block_size is not None:
        # the structure's own range (graphvine: up to its max_block_size), checked before any work so that the
        # message names the flag: a size past it overflowed (OverflowError) or reserved gigabytes for a few edges
        from vinestream.structures.registry import get
        graph_class = get(structure)
        try:
            graph_class.check_options({"block_size": args.block_size})
        except ValueError:
            top = graph_class.check_options({})["max_block_size"]
            raise UsageError(f"argument --block-size: expected an integer from 1 to {top} ({structure}'s "
                             f"max_block_size), got {args.block_size}") from None
    files = preflight.check_event_logs(args.logs) if args.logs else [str(sample_log_path())]
    preflight.check_event_times(files, {"--window": args.window, "--speed": args.speed,
                                        "--edge-ttl": args.edge_ttl})
    jobs = list(JOB_NAMES) if args.jobs is None else args.jobs
    sources = args.bfs_source or []
    if sources and "bfs" not in jobs:
        raise UsageError(f"--bfs-source is given but bfs is not in --jobs ({','.join(jobs) or 'none'})")
    if "bfs" in jobs:
        if sources:
            preflight.check_sources_present(files, sources)
        else:
            first = preflight.first_source(files, keep_self_loops=bool(args.keep_self_loops))
            if first is None and args.jobs is not None:
                raise UsageError(f"the bfs job needs a source vertex and no event of the log adds one "
                                 f"({preflight.SOURCE_EVENTS}): give --bfs-source")
            if first is None:
                # the default jobs: the others still run and every rejected row still reaches the dead letters
                # (refusing the whole replay left a log of bad rows unreported)
                jobs = [job for job in jobs if job != "bfs"]
                print(f"vinestream: warning: bfs not run: no event of the log adds a vertex to start from "
                      f"({preflight.SOURCE_EVENTS}); give --bfs-source to run it", file=sys.stderr)
            else:
                sources = [first]
    args.jobs = jobs
    options = _job_options(args)
    if args.window is not None and args.batch_size is not None:
        pass                    # a window further cut into batches of at most --batch-size
    if args.metrics_port is not None:
        preflight.check_port(args.metrics_port, addr=args.metrics_addr)
    if args.pushgateway:
        preflight.check_reachable(args.pushgateway, "--pushgateway")
    if args.json:
        preflight.check_writable_file(args.json, "--json")
    mode = "fresh"
    if args.checkpoint_dir:
        preflight.check_writable_dir(args.checkpoint_dir, "--checkpoint-dir")
    if args.out:
        mode = preflight.prepare_out_dir(args.out, overwrite=args.overwrite, resume=args.resume,
                                         checkpoint_dir=args.checkpoint_dir)
    elif args.overwrite or args.resume:
        raise UsageError(f"{'--overwrite' if args.overwrite else '--resume'} needs --out DIR")
    elif args.keep_epochs is not None or args.output_every != 1:
        # they bound the job outputs written under --out: without it they were taken and did nothing
        flag = "--keep-epochs" if args.keep_epochs is not None else "--output-every"
        raise UsageError(f"{flag} needs --out DIR: it bounds the job outputs written there")
    return files, jobs, sources, options, mode


def cmd_replay(args) -> int:
    # first thing: a SIGTERM in start-up is a stop request (exit 0, one line), as later in the replay, not a
    # silent kill (143)
    from vinestream.stream.app.signals import StartupSignals  # standard library only: in place at once
    with StartupSignals.current() as early:
        return _cmd_replay(args, early)


def _cmd_replay(args, early) -> int:
    from vinestream.structures.backend import defer_numpy_extras
    defer_numpy_extras()                          # before anything imports SciPy
    from vinestream.stream.app import preflight
    from vinestream.structures.backend import start_primary_context
    start_primary_context(args.backend)           # the GPU's context made while CuPy imports
    checked = _check_replay(args)
    metrics = None
    try:
        if early.requested:
            return _stopped_during_start_up(early, "nothing was replayed")
        metrics = _replay_metrics(args)
        return _replay_checked(args, *checked, metrics)
    finally:
        if metrics is not None:     # the endpoint ends with the replay (main() may run again in this process)
            metrics.close()
        if args.out:            # the locks _check_replay took (main() may run inside a longer process)
            preflight.unlock_run_dirs(args.out, args.checkpoint_dir)


def _replay_metrics(args):
    """The replay's metrics (None without --metrics-port or --pushgateway), served on --metrics-port."""
    if args.metrics_port is None and not args.pushgateway:
        return None
    from vinestream.stream.app.metrics import PipelineMetrics
    from vinestream.structures.backend import backend_name, get_backend
    backend = backend_name(get_backend(args.backend))       # "cpu" / "gpu", never "auto" in metrics
    metrics = PipelineMetrics(structure=args.structure or "csr", backend=backend)
    if args.metrics_port is not None:
        metrics.serve(args.metrics_port, args.metrics_addr)
    return metrics


def _replay_checked(args, files, jobs, sources, options, mode, metrics) -> int:
    from vinestream.stream.app import preflight
    from vinestream.stream.app.replay import replay
    options_s = {"block_size": args.block_size} if args.block_size else {}
    # replay writes OUT/_run.json (with the mode, "overwrite" included: the results were cleared above)
    report, _ = replay(files if args.logs else None, structure=args.structure or "csr", backend=args.backend,
                       batch_size=args.batch_size, window=dt.timedelta(seconds=args.window) if args.window else None,
                       speed=args.speed, out=args.out, undirected=bool(args.undirected),
                       keep_self_loops=bool(args.keep_self_loops), jobs=jobs, bfs_sources=sources,
                       jobs_every=args.jobs_every or 1, structure_options=options_s, job_options=options,
                       edge_ttl=args.edge_ttl, keep_epochs=args.keep_epochs, output_every=args.output_every,
                       # a --resume that found no checkpoint starts over (mode "fresh") over the results a run
                       # killed before its first checkpoint left: still a resume to the library's own check
                       resume=bool(args.resume) or mode == "resume", overwrite=mode == "overwrite",
                       checkpoint_dir=args.checkpoint_dir, checkpoint_every_batches=args.checkpoint_every_batches,
                       checkpoint_every_seconds=args.checkpoint_every_seconds,
                       metrics=metrics, progress=not args.no_progress and sys.stderr.isatty(), handle_signals=True,
                       decoder=args.decoder, out_prepared=mode if args.out else None, logs_checked=True)
    print(report.table())
    if args.json:
        preflight.write_json_file(args.json, report.__dict__)
    if metrics is not None and args.pushgateway:
        metrics.push(args.pushgateway, job="vinestream_replay")
    if report.stopped_by in ("SIGINT", "SIGTERM"):
        # the replay drained and checkpointed, but did not read its logs to the end: exit 0 said it had
        how = (f"rerun it with --resume to continue from its checkpoint in {args.checkpoint_dir}"
               if args.checkpoint_dir else "give --checkpoint-dir DIR to make a replay that can be resumed")
        print(f"vinestream: replay stopped by {report.stopped_by} after {report.events:,} events "
              f"({report.batches:,} batches); {how}", file=sys.stderr)
        # SIGTERM is how a service manager stops it, which exits 0 (as the worker); Ctrl-C exits 130, as a shell expects
        return 130 if report.stopped_by == "SIGINT" else 0
    return 0


# -- convert ---------------------------------------------------------------------------------
def _convert_parser(sub) -> None:
    from vinestream.connectors.files import FORMATS, TIME_UNITS
    p = sub.add_parser("convert", help="convert SNAP / CSV / JSON lines / Matrix Market / METIS graphs into an "
                                       "event log",
                       description="Convert an edge list into the event Parquet format replay reads. Prints what "
                                   "it detected and what each column means; rejected rows go to a file beside "
                                   "OUTPUT (X.dead_letter.parquet for X.parquet). An input with no rows, or whose "
                                   "every row is rejected, is an error and writes nothing.")
    p.add_argument("input", type=utf8_path,
                   help="input file (.txt, .csv, .tsv, .json[l], .mtx, .graph, .parquet; gzip, bzip2 or xz compressed "
                        "ones too)")
    p.add_argument("output", type=utf8_path, help="output event Parquet file")
    p.add_argument("--format", dest="fmt", default="auto", choices=("auto", *FORMATS),
                   help="input format (default auto: by extension, then content)")
    p.add_argument("--columns", default=None, metavar="NAMES",
                   help="meaning of each field: src,dst | src,dst,ts | src,dst,weight | src,dst,weight,ts "
                        "(_ skips a field); needed for headerless files with more than two fields")
    p.add_argument("--time-unit", default="s", choices=tuple(TIME_UNITS),
                   help="unit of numeric times (default s)")
    p.add_argument("--no-sort", action="store_true",
                   help="keep the file's order (default: stable sort by ts); says how many rows are out of time order")
    p.set_defaults(func=cmd_convert)


#: the names of text formats: an output named so would hold Parquet under a text name
TEXT_SUFFIXES = (".csv", ".tsv", ".txt", ".json", ".jsonl", ".mtx", ".graph", ".metis")


def cmd_convert(args) -> int:
    from vinestream.connectors.files import convert, parse_columns
    from vinestream.stream.app import preflight
    if not args.output.strip():
        raise UsageError("the output is empty: give a file name such as events.parquet")
    if os.path.isdir(args.output):
        raise UsageError(f"output {args.output} is a directory: give a file name such as "
                         f"{os.path.join(args.output, 'events.parquet')}")
    name = os.path.basename(args.output).lower().removesuffix(".gz").removesuffix(".bz2").removesuffix(".xz")
    if name.endswith(TEXT_SUFFIXES):
        # convert writes Parquet whatever the name: a .csv holding Parquet would mislead whoever opens it
        stem = os.path.basename(args.output).split(".")[0] or "events"
        raise UsageError(f"output {args.output}: convert writes an event Parquet log, not {name.rsplit('.', 1)[1]}: "
                         f"name it {os.path.join(os.path.dirname(args.output), stem + '.parquet')}")
    preflight.check_writable_dir(os.path.dirname(os.path.abspath(args.output)), "output directory")
    report = convert(args.input, args.output, fmt=args.fmt, columns=parse_columns(args.columns),
                     time_unit=args.time_unit, sort_by_time=not args.no_sort)
    for line in report.lines():
        print(line)
    if report.rejected:
        print(f"vinestream: warning: {report.rejected:,} of {report.rows + report.rejected:,} rows rejected; "
              f"see {report.dead_letter_path}", file=sys.stderr)
    return 0


# -- bench -----------------------------------------------------------------------------
def _bench_parser(sub) -> None:
    p = sub.add_parser("bench", help="benchmarks (JSON out, table printed)",
                       description="Time structures (insert / delete / query against the csr rebuild), "
                                   "the algorithms (incremental against static) and the Kafka path.")
    p.add_argument("what", nargs="*", default=["structures"],
                   help="structures, algorithms, pipeline, resolve-ahead, bfs, bfs-fused, bfs-incremental, kafka, "
                        "decode, slabhash-road, paper-graphvine and/or sorted (default structures)")
    p.add_argument("--backend", default=None, choices=BACKENDS)
    p.add_argument("--structures", type=_csv_list, default=None, help="structures to compare")
    p.add_argument("--batch-sizes", type=_positive_int_list, default=None, help="batch sizes (edges)")
    p.add_argument("--scales", type=_positive_int_list, default=None,
                   help="R-MAT scales (log2 vertices; default CPU 16, GPU 20 and 22)")
    p.add_argument("--edge-factor", type=int_at_least(1), default=None, help="R-MAT edge factor")
    p.add_argument("--real", default=None, metavar="PATH",
                   help="real graph edge list(s) to include, comma-separated (any format `vinestream convert` "
                        "reads without --columns; `structures` and `sorted` take one)")
    p.add_argument("--paper-scale", type=int_at_least(1), default=None,
                   help="log2 vertices of the generated graphs of `bench paper-graphvine`")
    p.add_argument("--bootstrap-servers", default=None, help="Kafka broker for `bench kafka`")
    p.add_argument("--json", type=utf8_path, default=None, metavar="FILE", help="write the results as JSON")
    p.set_defaults(func=cmd_bench)


def _positive_int_list(text: str) -> list[int]:
    values = _int_list(text)
    if not values or any(v < 1 for v in values):
        raise argparse.ArgumentTypeError(f"expected comma-separated integers >= 1, got {text!r}")
    return values


def _check_bench(args) -> dict:
    """The bench's arguments checked before it runs; the --real graphs read (for run_bench: read once)."""
    from vinestream.stream.app import preflight
    from vinestream.stream.bench.runner import check_bench
    from vinestream.structures.registry import available
    for name in args.structures or ():
        if name not in available():
            raise UsageError(f"--structures {name}: unknown structure; choose from {', '.join(sorted(available()))}")
    if args.json:
        preflight.check_writable_file(args.json, "--json")
    # the names in `what`, the flags they read, what needs a GPU, the --real files, every R-MAT graph's memory
    return check_bench(args)


def cmd_bench(args) -> int:
    from vinestream.stream.bench.runner import run_bench
    loaded = _check_bench(args)
    result, table = run_bench(args, loaded)
    print(table)
    if args.json:
        from vinestream.stream.app import preflight
        preflight.write_json_file(args.json, result)
    return 0


# -- run / produce (Kafka) ---------------------------------------------------------------
def _kafka_parsers(sub) -> None:
    from vinestream.stream.app.config import add_produce_arguments, add_run_arguments
    run = sub.add_parser("run", help="the long-lived Kafka worker",
                         description="Consume edge/vertex events from Kafka into the graph, run the jobs, "
                                     "export results and serve Prometheus metrics.")
    add_run_arguments(run)
    run.set_defaults(func=cmd_run)
    produce = sub.add_parser("produce", help="publish a recorded event log to a Kafka topic")
    add_produce_arguments(produce)
    produce.set_defaults(func=cmd_produce)


def check_run_config(cfg, *, dry_run: bool = False) -> str:
    """Everything of a worker's config that can be checked without a broker; what happens to --out."""
    from vinestream.connectors.kafka import check_consumer_options
    from vinestream.stream.app import preflight
    from vinestream.stream.app.config import where
    preflight.check_kafka_servers(cfg.bootstrap_servers)
    check_consumer_options(cfg.kafka_options, where(cfg, "kafka_options"))
    preflight.check_port(cfg.metrics_port, "--metrics-port", cfg.metrics_addr, bind=not dry_run)
    if cfg.pushgateway and not dry_run:
        preflight.check_reachable(cfg.pushgateway, "--pushgateway")
    if cfg.checkpoint_dir:
        preflight.check_writable_dir(cfg.checkpoint_dir, "--checkpoint-dir", create=not dry_run)
    mode = "fresh"
    if cfg.out:
        mode = preflight.prepare_out_dir(cfg.out, overwrite=cfg.overwrite, resume=cfg.resume,
                                         checkpoint_dir=cfg.checkpoint_dir, dry_run=dry_run)
    return mode


def _toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return json.dumps(str(value))


def print_effective_config(cfg) -> None:
    """The merged config as TOML (secrets masked), with where each key given came from."""
    from vinestream.stream.app.config import masked
    values = masked(cfg)
    sources = getattr(cfg, "sources", {})
    tables = {}
    for key, value in values.items():
        if isinstance(value, dict):
            tables[key] = value
            continue
        if value is None:
            continue
        origin = f"   # {sources[key]}" if key in sources else ""
        print(f"{key} = {_toml_value(value)}{origin}")
    for key, table in tables.items():
        if table:
            print(f"\n[{key}]" + (f"   # {sources[key]}" if key in sources else ""))
            for k, v in table.items():
                print(f"{json.dumps(k) if '.' in str(k) else k} = {_toml_value(v)}")


def cmd_run(args) -> int:
    # first thing: a SIGTERM in the seconds of start-up is a stop request (exit 0), not a silent kill (-15)
    from vinestream.stream.app.signals import StartupSignals  # standard library only: in place at once
    with StartupSignals.current() as early:
        return _cmd_run(args, early)


def _cmd_run(args, early) -> int:
    from vinestream.structures.backend import defer_numpy_extras
    defer_numpy_extras()                          # before anything imports SciPy
    from vinestream.stream.app.config import run_config
    from vinestream.structures.backend import start_primary_context
    cfg = run_config(args)
    start_primary_context(cfg.backend)            # the GPU's context made while CuPy imports
    mode = check_run_config(cfg, dry_run=args.check)
    try:
        return _run_checked(args, cfg, early, mode)
    finally:
        if cfg.out and not args.check:      # the locks check_run_config took
            from vinestream.stream.app import preflight
            preflight.unlock_run_dirs(cfg.out, cfg.checkpoint_dir)


def _run_checked(args, cfg, early, mode) -> int:
    from vinestream.stream.app.config import parse_job_options
    from vinestream.stream.app.run import decoder_for, main_run
    from vinestream.stream.pipeline import build_pipeline
    probe = build_pipeline(structure=cfg.structure, backend=cfg.backend, jobs=cfg.jobs, bfs_sources=cfg.bfs_source,
                           job_options=parse_job_options(cfg.job_options, cfg.jobs), edge_ttl=cfg.edge_ttl)
    decoder_for(cfg.decoder, gpu=probe.on_gpu)         # --decoder cudf where it cannot run: one line
    if early.requested and not args.check:
        return _stopped_during_start_up(early)
    if args.check:
        print_effective_config(cfg)
        outcome = {"fresh": "a new run", "resume": "resumes its checkpoint", "overwrite": "is replaced"}[mode]
        print(f"# ok: the config is valid; --out: {outcome if cfg.out else 'not set'}; Kafka was not contacted "
              "(--check is a dry run)", file=sys.stderr)
        return 0
    if cfg.out:
        from vinestream.stream.app import preflight
        # the backend that runs ("auto" resolved, as the metrics' build_info has it): the report's title names it
        preflight.write_run_info(cfg.out, {"command": "run", "topics": cfg.topics, "structure": cfg.structure,
                                           "backend": "gpu" if probe.on_gpu else "cpu", "jobs": cfg.jobs,
                                           "bfs_sources": cfg.bfs_source, "job_options": cfg.job_options,
                                           "edge_ttl": cfg.edge_ttl, "batch_size": cfg.batch_size, "mode": mode})
    return main_run(args, cfg)


def _stopped_during_start_up(early, what: str = "nothing was consumed") -> int:
    print(f"vinestream: stopped by {early.requested} during start-up; {what}", file=sys.stderr)
    return 0


def cmd_produce(args) -> int:
    from vinestream.stream.app import preflight
    from vinestream.stream.app.config import produce_config
    from vinestream.stream.app.run import main_produce
    cfg = produce_config(args)
    if not cfg.logs:        # `produce ""` ("$LOG" unset): the empty name is dropped as an empty list item is
        raise UsageError("produce: no log to publish (LOG is empty): give an event Parquet file or a directory of them")
    # publishing a log twice is a choice; a directory is its Parquet files, as replay reads it (the directory
    # itself went to the producer: "internal error: OSError: ... is a directory")
    cfg.logs = preflight.check_event_logs(cfg.logs, "produce log", once=False)
    preflight.check_publishable_logs(cfg.logs)
    preflight.check_kafka_servers(cfg.bootstrap_servers)
    return main_produce(args, cfg)


# -- report ----------------------------------------------------------------------------------
def _report_parser(sub) -> None:
    p = sub.add_parser("report", help="an HTML report with plots of a results directory",
                       description="Render one self-contained HTML page (plots inlined) from a results directory "
                                   "written by replay or run: throughput, graph size, per-phase latency, "
                                   "memory and the jobs' results. Needs the `report` extra (matplotlib).")
    p.add_argument("out", type=path_given, metavar="OUT", help="results directory (--out of replay or run)")
    p.add_argument("--html", type=path_given, default=None, metavar="FILE",
                   help="where to write the page (default OUT/report.html)")
    p.add_argument("--top", type=int_at_least(1), default=20, help="PageRank vertices listed (default 20)")
    p.set_defaults(func=cmd_report)


def cmd_report(args) -> int:
    from vinestream.stream.app.report import write_report
    path = write_report(args.out, args.html, top=args.top)
    print(f"wrote {path}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(prog="vinestream", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"vinestream {_version()}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _replay_parser(sub)
    _kafka_parsers(sub)
    _convert_parser(sub)
    _bench_parser(sub)
    _report_parser(sub)
    parser.commands = dict(sub.choices)        # name -> its parser (ArgumentParser.parse_args)
    return parser


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version
    try:
        return version("vinestream")
    except PackageNotFoundError:
        return "0+unknown"


# -- errors: the one place that turns exceptions into messages -------------------------------
#: modules of vinestream's declared dependencies (pyproject.toml) and the package that provides each: an
#: environment without one is the user's to fix, not a bug
REQUIRED_MODULES = {"kafka": "kafka-python", "crc32c": "crc32c", "pyarrow": "pyarrow", "numpy": "numpy",
                    "prometheus_client": "prometheus-client"}


def error_message(exc: BaseException) -> str | None:
    """The one-line message for an exception a user can cause; None for a bug (shown as one)."""
    import urllib.error

    import pyarrow as pa
    if isinstance(exc, (UsageError, BackendError)):
        return str(exc)
    if isinstance(exc, urllib.error.URLError):
        return f"cannot reach {getattr(exc, 'url', None) or 'the server'}: {exc.reason}"
    if isinstance(exc, FileNotFoundError):
        return f"no such file or directory: {exc.filename or exc}"
    if isinstance(exc, PermissionError):
        return f"permission denied: {exc.filename or exc}"
    if isinstance(exc, (IsADirectoryError, NotADirectoryError, FileExistsError)):
        return f"{exc.strerror}: {exc.filename}"
    if isinstance(exc, OSError) and exc.errno is not None:
        if exc.errno == 28:
            return f"no space left on device writing {exc.filename or 'the output'}"
        return f"{exc.strerror}" + (f": {exc.filename}" if exc.filename else "")
    if isinstance(exc, MemoryError):
        return ("out of memory: use smaller batches (--batch-size), a smaller graph or the other backend"
                + (f" ({exc})" if str(exc) else ""))
    if isinstance(exc, pa.ArrowInvalid):
        return f"unreadable input: {exc}"
    if isinstance(exc, ValueError):
        return str(exc)
    if isinstance(exc, ModuleNotFoundError) and exc.name and exc.name.split(".")[0] in REQUIRED_MODULES:
        top = exc.name.split(".")[0]
        return (f"the package {REQUIRED_MODULES[top]!r} (module {top!r}) is missing from this Python: "
                f"pip install {REQUIRED_MODULES[top]}, or reinstall vinestream with its dependencies")
    kafka_errors = sys.modules.get("kafka.errors")
    unreachable = tuple(getattr(kafka_errors, name) for name in ("NoBrokersAvailable", "KafkaTimeoutError")
                        if hasattr(kafka_errors, name))
    if unreachable and isinstance(exc, unreachable):
        from vinestream.connectors.base import error_text
        return f"cannot reach Kafka ({error_text(exc)}); check --bootstrap-servers"
    return None


def _quiet_stdout() -> None:
    """stdout's reader went away (``| head``): drop what is left instead of a second BrokenPipeError at exit."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def main(argv=None) -> int:
    """``vinestream ...``: every error a user can cause is one line ``vinestream: error: ...`` and exit 2."""
    try:
        args = build_parser().parse_args(argv)
        code = args.func(args)
        sys.stdout.flush()
        return code
    except BrokenPipeError:
        _quiet_stdout()
        return 141                      # 128 + SIGPIPE, what `cmd | head` users expect
    except KeyboardInterrupt:
        print("vinestream: interrupted", file=sys.stderr)      # Ctrl-C: one line, no traceback
        return 130
    except Exception as exc:
        message = error_message(exc)
        if message is None:
            if os.environ.get("VINESTREAM_DEBUG"):
                raise
            message = (f"internal error: {type(exc).__name__}: {exc} (a bug: please report it; "
                       "VINESTREAM_DEBUG=1 shows the traceback)")
            code = 1
        else:
            code = 2
        print(f"vinestream: error: {' '.join(message.split())}", file=sys.stderr)
        return code


if __name__ == "__main__":
    sys.exit(main())
