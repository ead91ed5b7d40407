"""The `vinestream` command: replay, run, produce, convert, bench.

Flag names given in the issues are a contract (``replay [LOG ...] --structure
--batch-size --out --backend``; ``run --bootstrap-servers --topic --group
--format --structure --jobs --metrics-port --out``; ``produce LOG --topic
--format --bootstrap-servers --rate``; ``--jobs --bfs-source --jobs-every``).
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import sys

from vinestream.stream.errors import UsageError
from vinestream.structures.backend import BACKENDS, BackendError

JOB_NAMES = ("pagerank", "bfs", "triangles")   # algorithms.JOBS, without importing it at start-up


def _csv_list(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def _int_list(text: str) -> list[int]:
    try:
        return [int(x) for x in _csv_list(text)]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from None


def add_graph_arguments(p: argparse.ArgumentParser) -> None:
    """Structure, backend, graph semantics and jobs: shared by replay and run."""
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
    j = p.add_argument_group("jobs")
    j.add_argument("--jobs", type=_csv_list, default=None,
                   help=f"comma-separated jobs to run after batches: {','.join(JOB_NAMES)}")
    j.add_argument("--bfs-source", type=_int_list, default=None,
                   help="external vertex id(s) BFS starts from, comma-separated")
    j.add_argument("--jobs-every", type=int, default=None, help="run the jobs every N batches (default 1)")


# -- replay ----------------------------------------------------------------------------
def _replay_parser(sub) -> None:
    p = sub.add_parser("replay", help="replay recorded event logs (Parquet) through the pipeline",
                       description="Replay event Parquet logs through the pipeline. With no LOG, replays "
                                   "the bundled sample (SNAP CollegeMsg, 59,835 timed edge events).")
    p.add_argument("logs", nargs="*", metavar="LOG", help="event Parquet files or directories")
    p.add_argument("--batch-size", type=int, default=None,
                   help="events per batch (default 100000; 5000 for the bundled sample)")
    p.add_argument("--window", type=float, default=None, metavar="SECONDS",
                   help="cut batches by event time instead: one batch per window of ts")
    p.add_argument("--speed", type=float, default=None,
                   help="pace the replay against ts: 1 = real time, 60 = a minute per second")
    p.add_argument("--out", default=None, metavar="DIR",
                   help="write summary.parquet, <job>/epoch=<n>.parquet and dead_letter.parquet here")
    p.add_argument("--metrics-port", type=int, default=None,
                   help="serve Prometheus metrics on this port while replaying (off by default)")
    p.add_argument("--metrics-addr", default="127.0.0.1", metavar="ADDR",
                   help="address the metrics endpoint binds (default 127.0.0.1; 0.0.0.0 for every interface)")
    p.add_argument("--pushgateway", default=None, metavar="URL", help="push final metrics to a Pushgateway")
    p.add_argument("--block-size", type=int, default=None, help="graphvine: edge block size (default: auto)")
    p.add_argument("--checkpoint-dir", default=None, metavar="DIR",
                   help="checkpoint here (and resume from the latest checkpoint found here)")
    p.add_argument("--checkpoint-every-batches", type=int, default=100, metavar="N",
                   help="checkpoint every N batches (default 100; 0 = only at the end)")
    p.add_argument("--checkpoint-every-seconds", type=float, default=60.0, metavar="T",
                   help="checkpoint every T seconds (default 60; 0 = never by time)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--json", default=None, metavar="FILE", help="also write the end summary as JSON")
    add_graph_arguments(p)
    p.set_defaults(func=cmd_replay)


def cmd_replay(args) -> int:
    from vinestream.stream.app.replay import replay
    metrics = None
    if args.metrics_port is not None or args.pushgateway:
        from vinestream.stream.app.metrics import PipelineMetrics
        metrics = PipelineMetrics(structure=args.structure or "csr", backend=args.backend or "auto")
        if args.metrics_port is not None:
            metrics.serve(args.metrics_port, args.metrics_addr)
    options = {"block_size": args.block_size} if args.block_size else {}
    report, _ = replay(args.logs, structure=args.structure or "csr", backend=args.backend,
                       batch_size=None if args.window else args.batch_size,
                       window=dt.timedelta(seconds=args.window) if args.window else None,
                       speed=args.speed, out=args.out, undirected=bool(args.undirected),
                       keep_self_loops=bool(args.keep_self_loops), jobs=args.jobs or (),
                       bfs_sources=args.bfs_source or (),
                       jobs_every=args.jobs_every or 1, structure_options=options,
                       checkpoint_dir=args.checkpoint_dir, checkpoint_every_batches=args.checkpoint_every_batches,
                       checkpoint_every_seconds=args.checkpoint_every_seconds,
                       metrics=metrics, progress=not args.no_progress and sys.stderr.isatty(), handle_signals=True)
    print(report.table())
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(report.__dict__, fh, indent=2, default=str)
    if metrics is not None and args.pushgateway:
        metrics.push(args.pushgateway, job="vinestream_replay")
    return 0


# -- convert ---------------------------------------------------------------------------
def _convert_parser(sub) -> None:
    p = sub.add_parser("convert", help="convert SNAP / Matrix Market / METIS / CSV graphs into an event log",
                       description="Convert an edge list into the event Parquet format replay reads.")
    p.add_argument("input", help="input file (.txt, .csv, .mtx, .graph; .gz accepted)")
    p.add_argument("output", help="output event Parquet file")
    p.add_argument("--format", dest="fmt", default="auto",
                   help="auto (by extension and content), snap, signed, mtx, metis or csv")
    p.set_defaults(func=cmd_convert)


def cmd_convert(args) -> int:
    from vinestream.connectors.files import convert
    info = convert(args.input, args.output, fmt=args.fmt)
    print(f"wrote {args.output}: {info}")
    return 0


# -- bench -----------------------------------------------------------------------------
def _bench_parser(sub) -> None:
    p = sub.add_parser("bench", help="benchmarks (JSON out, table printed)",
                       description="Time structures (insert / delete / query against the csr rebuild), "
                                   "the algorithms (incremental against static) and the Kafka path.")
    p.add_argument("what", nargs="*", default=["structures"],
                   help="structures, algorithms, bfs, kafka, slabhash-road, paper-graphvine and/or sorted "
                        "(default structures)")
    p.add_argument("--backend", default=None, choices=BACKENDS)
    p.add_argument("--structures", type=_csv_list, default=None, help="structures to compare")
    p.add_argument("--batch-sizes", type=_int_list, default=None, help="batch sizes (edges)")
    p.add_argument("--scales", type=_int_list, default=None, help="R-MAT scales")
    p.add_argument("--edge-factor", type=int, default=None, help="R-MAT edge factor")
    p.add_argument("--real", default=None, metavar="PATH", help="a real graph edge list to include")
    p.add_argument("--paper-scale", type=int, default=None,
                   help="log2 vertices of the generated graphs of `bench paper-graphvine`")
    p.add_argument("--bootstrap-servers", default=None, help="Kafka broker for `bench kafka`")
    p.add_argument("--json", default=None, metavar="FILE", help="write the results as JSON")
    p.set_defaults(func=cmd_bench)


def cmd_bench(args) -> int:
    from vinestream.stream.bench.runner import run_bench
    result, table = run_bench(args)
    print(table)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(result, fh, indent=2, default=str)
    return 0


# -- run / produce (Kafka) ---------------------------------------------------------------
def _kafka_parsers(sub) -> None:
    try:
        from vinestream.stream.app.config import add_produce_arguments, add_run_arguments
    except ImportError:       # the worker is optional until its module lands
        return
    run = sub.add_parser("run", help="the long-lived Kafka worker",
                         description="Consume edge/vertex events from Kafka into the graph, run the jobs, "
                                     "export results and serve Prometheus metrics.")
    add_run_arguments(run)
    run.set_defaults(func=cmd_run)
    produce = sub.add_parser("produce", help="publish a recorded event log to a Kafka topic")
    add_produce_arguments(produce)
    produce.set_defaults(func=cmd_produce)


def cmd_run(args) -> int:
    from vinestream.stream.app.run import main_run
    return main_run(args)


def cmd_produce(args) -> int:
    from vinestream.stream.app.run import main_produce
    return main_produce(args)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="vinestream", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"vinestream {_version()}")
    sub = parser.add_subparsers(dest="command", required=True)
    _replay_parser(sub)
    _kafka_parsers(sub)
    _convert_parser(sub)
    _bench_parser(sub)
    return parser


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version
    try:
        return version("vinestream")
    except PackageNotFoundError:
        return "0+unknown"


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (BackendError, UsageError) as exc:
        print(f"vinestream: error: {exc}", file=sys.stderr)
        return 2
    except FileNotFoundError as exc:
        print(f"vinestream: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
