"""Worker and producer configuration: TOML file, ``VINESTREAM_<KEY>`` environment, CLI flags.

Precedence, per key: command-line flag > environment variable > config file >
default.  Every key of :class:`WorkerConfig` has all three spellings: ``key`` in
the TOML file (top level, or inside any table such as ``[kafka]`` — tables are
flattened, except ``[formats]`` and ``[kafka_options]`` which are maps), the
environment variable ``VINESTREAM_KEY`` and the flag ``--key`` (underscores
become dashes).  An empty (or blank) environment variable counts as unset, as
compose and Kubernetes templates leave them; an empty flag value for a number
is an error.

```toml
bootstrap_servers = "broker-1:9092,broker-2:9092"
topics = ["edges"]
group = "vinestream"
format = "arrow"
structure = "graphvine"
jobs = ["pagerank", "triangles"]
metrics_port = 9464
out = "/data/out"
checkpoint_dir = "/data/ckpt"

[formats]            # per-topic payload format
edges-json = "json"

[kafka_options]      # any other kafka-python consumer option (checked against its list and types;
fetch_max_wait_ms = 100   # the ones the worker sets itself, such as enable_auto_commit, are refused)
```
"""
from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import difflib
import functools
import math
import os
import re
import tomllib
import typing
from collections.abc import Callable
from dataclasses import dataclass, field, fields

import numpy as np

from vinestream.algorithms import JOB_OPTIONS, JOBS, job_option_problem
from vinestream.connectors.base import special_file
from vinestream.stream.errors import UsageError
from vinestream.stream.events.schema import excerpt, is_vertex_id
from vinestream.structures.registry import available as available_structures

ENV_PREFIX = "VINESTREAM_"
FORMATS = ("json", "csv", "arrow")
#: config keys whose values --check prints masked (besides any key naming a password, secret or token)
SECRET_KEYS = ("sasl_plain_password", "ssl_password", "sasl_oauth_token")


def _help(text: str, flag: str | None = None, check: Callable | None = None, **kw) -> dict:
    """Field metadata: --help text, the flag (None: --field-name; "": no flag) and a value check.

    ``check(value)`` returns None when the value is valid, else what would be valid
    (e.g. ``"an integer >= 1"``); :func:`validate` names the flag, variable or key that gave it.
    """
    return {"help": text, "flag": flag, "check": check, **kw}


# -- value checks (field metadata "check"): None when fine, else what would be valid -----------
def at_least(low: float, *, allow_none: bool = True) -> Callable:
    def check(v):
        if v is None and allow_none:
            return None
        return None if isinstance(v, (int, float)) and not isinstance(v, bool) and v >= low \
            else f"a number >= {low:g}"
    return check


def integer_at_least(low: int, *, allow_none: bool = True) -> Callable:
    """An integer (not a bool) >= ``low``: what ``--batch-size`` and the other count flags take."""
    def check(v):
        if v is None and allow_none:
            return None
        return None if isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)) and v >= low \
            else f"an integer >= {low}"
    return check


def boolean(v) -> str | None:
    return None if isinstance(v, (bool, np.bool_)) else "True or False"


def window_seconds(v) -> str | None:
    """An event-time window: seconds > 0 that a ``datetime.timedelta`` holds (1 us to 999,999,999 days), or such a
    timedelta; past that range the replay failed with an OverflowError, below it with "window must be positive"."""
    if v is None:
        return None
    seconds = v.total_seconds() if isinstance(v, dt.timedelta) else v
    if positive(seconds) is None:
        try:
            if dt.timedelta(seconds=seconds) > dt.timedelta(0):
                return None
        except OverflowError:
            pass
    return f"a number of seconds from 0.000001 to {dt.timedelta.max.total_seconds():.0f}"


def positive(v) -> str | None:
    """A finite number > 0, as the flags take one (``inf`` is no number of seconds or events a second)."""
    if v is None:
        return None
    return None if isinstance(v, (int, float)) and not isinstance(v, bool) and 0 < v < math.inf else "a number > 0"


def not_empty(what: str) -> Callable:
    """Text that names something (``what``): an empty value, as ``--out "$OUT"`` with the variable unset gives, was
    taken - --out "" as no --out (the run wrote nothing), --group "" as a group no one meant, whose committed
    offsets a worker started with the intended id would not find."""
    def check(v):
        return None if v is None or str(v).strip() else f"{what} (it is empty)"
    return check


def port(v) -> str | None:
    """-1 (off), 0 (any free port) or 1..65535."""
    return None if v is None or (isinstance(v, int) and -1 <= v <= 65535) else \
        "a TCP port 1..65535 (0 = any free port, -1 = off)"


#: the session timeouts a broker takes with its default settings (group.min.session.timeout.ms,
#: group.max.session.timeout.ms): it refuses a member outside them (INVALID_SESSION_TIMEOUT), and kafka-python
#: refuses one at or below the heartbeat interval (at least 100 ms, see consumer_options) - either way the
#: worker would only retry, as if the broker were down
SESSION_TIMEOUT_MS = (6_000, 1_800_000)


def session_timeout(v) -> str | None:
    low, high = SESSION_TIMEOUT_MS
    return None if isinstance(v, int) and not isinstance(v, bool) and low <= v <= high else \
        (f"milliseconds from {low} to {high} (what brokers accept by default: group.min.session.timeout.ms and "
         "group.max.session.timeout.ms)")


def one_of(*choices) -> Callable:
    def check(v):
        return None if v is None or v in choices else "one of " + ", ".join(map(str, choices))
    return check


#: what kafka-python accepts for these (any other value fails only when the worker connects)
SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
SASL_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "GSSAPI", "OAUTHBEARER")
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


def log_level(v) -> str | None:
    return None if isinstance(v, str) and v.upper() in LOG_LEVELS else "one of " + ", ".join(LOG_LEVELS)


def readable_file(v) -> str | None:
    """None, or a file that exists and can be read (a certificate or key the TLS handshake would read later)."""
    if v is None:
        return None
    return None if isinstance(v, str) and os.path.isfile(v) and os.access(v, os.R_OK) else "a readable file"


def structure_name(v) -> str | None:
    return None if v in available_structures() else "one of " + ", ".join(sorted(available_structures()))


def vertex_ids(v) -> str | None:
    """External vertex ids: int64 (the events' id type; a larger one could never name a vertex)."""
    bad = [x for x in v or () if not is_vertex_id(x)]
    return None if not bad else f"int64 vertex ids (not {', '.join(map(str, bad[:3]))})"


def job_names(v) -> str | None:
    bad = [j for j in v or () if j not in JOBS]
    return None if not bad else f"jobs from {', '.join(sorted(JOBS))} (not {', '.join(bad)})"


#: what Kafka accepts as a topic's name (its own rule: 1-249 of these characters)
_TOPIC_NAME = re.compile(r"[A-Za-z0-9._-]{1,249}")


def topic_names(v) -> str | None:
    """A topic name, a list of them, or None: each must be a name Kafka accepts (an empty or mistyped one would
    otherwise reach the broker and be retried there, or create a topic nobody reads)."""
    names = [] if v is None else [v] if isinstance(v, str) else list(v)
    bad = [n for n in names if not isinstance(n, str) or not _TOPIC_NAME.fullmatch(n)]
    return None if not bad else "Kafka topic names: 1-249 letters, digits, '.', '_' or '-'"


def regular_expression(v) -> str | None:
    if v is None:
        return None
    try:
        re.compile(v)
    except (re.error, TypeError) as exc:
        return f"a regular expression ({exc})"
    return None


@dataclass
class WorkerConfig:
    """Everything ``vinestream run`` needs; each field's metadata holds its --help text."""
    # Kafka source
    bootstrap_servers: str = field(default="localhost:9092", metadata=_help(
        "Kafka bootstrap servers, HOST:PORT[,HOST:PORT...]"))
    topics: list[str] = field(default_factory=list, metadata=_help(
        "topic(s) to consume (repeat the flag or separate with commas)", flag="--topic", check=topic_names))
    topic_pattern: str | None = field(default=None, metadata=_help(
        "regex of topics to consume instead of --topic (not with it), matched from the start of a topic's name",
        check=regular_expression))
    group: str = field(default="vinestream", metadata=_help("consumer group id", flag="--group",
                                                            check=not_empty("a consumer group id")))
    format: str = field(default="arrow", metadata=_help(
        "payload format: json|csv|arrow (the default, as `vinestream produce` writes); per topic as "
        "TOPIC=FMT[,TOPIC=FMT]"))
    formats: dict = field(default_factory=dict, metadata=_help("per-topic formats (from --format T=F or [formats])",
                                                               flag=""))
    auto_offset_reset: str = field(default="earliest", metadata=_help(
        "where a group without committed offsets starts: earliest|latest", check=one_of("earliest", "latest")))
    # pipeline
    structure: str = field(default="graphvine", metadata=_help("dynamic graph structure (--structure NAME)",
                                                               check=structure_name))
    backend: str = field(default="auto", metadata=_help("array backend: auto|cpu|gpu",
                                                        check=one_of("auto", "cpu", "gpu")))
    decoder: str = field(default="auto", metadata=_help(
        "payload decoder: auto (cuDF on a GPU backend where installed, for large polls), pyarrow, or cudf",
        check=one_of("auto", "pyarrow", "cudf")))
    undirected: bool = field(default=False, metadata=_help("mirror every edge event"))
    keep_self_loops: bool = field(default=False, metadata=_help("keep src == dst edges instead of dropping them"))
    jobs: list[str] = field(default_factory=list, metadata=_help(
        "jobs to run on the changing graph: pagerank,bfs,triangles, or none (the default)", check=job_names))
    jobs_every: int = field(default=1, metadata=_help("run the jobs every N batches", check=at_least(1)))
    bfs_source: list[int] = field(default_factory=list, metadata=_help(
        "BFS source vertex id(s) (external ids); required by the bfs job of a worker", check=vertex_ids))
    job_options: dict = field(default_factory=dict, metadata=_help(
        "job parameters JOB.OPTION=VALUE: pagerank.damping, pagerank.tol, pagerank.max_iter, pagerank.weighted "
        "([job_options] table, or repeated flags)", flag="--job-option"))
    edge_ttl: float | None = field(default=None, metadata=_help(
        "sliding window: delete an edge once the event-time watermark is more than SECONDS past its last insert",
        check=positive))
    batch_size: int = field(default=200_000, metadata=_help(
        "events per batch, at most: polls are cut to fit and a message holding more events is split between "
        "batches (checkpoints record how much of it is done)", check=at_least(1)))
    batch_latency_ms: int = field(default=200, metadata=_help(
        "close a batch after this many ms even when it is not full", check=at_least(1)))
    max_poll_records: int = field(default=500, metadata=_help("Kafka messages per poll", check=at_least(1)))
    max_inflight_batches: int = field(default=2, metadata=_help(
        "batches decoded but not yet applied before the consumer pauses its partitions (backpressure)",
        check=at_least(1)))
    # sinks
    out: str | None = field(default=None, metadata=_help(
        "results directory (summary.parquet/, <job>/epoch=N/part-0.parquet, dead_letter.parquet)",
        check=not_empty("a directory path")))
    overwrite: bool = field(default=False, metadata=_help(
        "replace the results already in --out (and the checkpoints in --checkpoint-dir)"))
    resume: bool = field(default=False, metadata=_help(
        "continue the run whose results are in --out from the latest checkpoint in --checkpoint-dir"))
    keep_epochs: int | None = field(default=None, metadata=_help(
        "keep only the job outputs of the last N epochs written (default: all)", check=at_least(1)))
    output_every: int = field(default=1, metadata=_help(
        "write job outputs only at epochs that are multiples of N (and the last one)", check=at_least(1)))
    results_topic: str | None = field(default=None, metadata=_help("Kafka topic for per-epoch results",
                                                                    check=topic_names))
    results_format: str = field(default="json", metadata=_help("results topic payload: json|arrow",
                                                               check=one_of("json", "arrow")))
    dead_letter_topic: str | None = field(default=None, metadata=_help("Kafka topic for rejected records",
                                                                        check=topic_names))
    # monitoring
    metrics_port: int = field(default=9464, metadata=_help("Prometheus /metrics port (0 = any free port, -1 = off)",
                                                           check=port))
    metrics_addr: str = field(default="127.0.0.1", metadata=_help(
        "address the metrics endpoint binds (loopback by default; 0.0.0.0 to let Prometheus on another host "
        "scrape it)"))
    pushgateway: str | None = field(default=None, metadata=_help("Pushgateway URL to push metrics to at exit"))
    # checkpoints
    checkpoint_dir: str | None = field(default=None, metadata=_help("directory for atomic checkpoints",
                                                                    check=not_empty("a directory path")))
    # 0 is not "never": the run still checkpoints when it stops and before a rebalance takes its partitions
    checkpoint_every_batches: int = field(default=100, metadata=_help(
        "checkpoint every N batches (0 = only when the run stops or its partitions go)", check=at_least(0)))
    checkpoint_every_seconds: float = field(default=60.0, metadata=_help(
        "checkpoint every T seconds (0 = never by time)", check=at_least(0)))
    checkpoint_keep: int = field(default=2, metadata=_help("checkpoints kept on disk", check=at_least(1)))
    # stop conditions (replay-like runs and tests)
    max_batches: int | None = field(default=None, metadata=_help("stop after N batches", check=at_least(1)))
    idle_timeout: float | None = field(default=None, metadata=_help(
        "stop after T seconds without messages, counted once partitions are assigned; brokers that cannot be "
        "reached for T seconds end the run with an error", check=positive))
    until_end: bool = field(default=False, metadata=_help(
        "stop once every assigned partition is read up to its high watermark; brokers that cannot be reached "
        "within the consumer's request timeout (request_timeout_ms, 30 s; --idle-timeout when given) end the run "
        "with an error (without it the worker waits for them)"))
    # Kafka client
    session_timeout_ms: int = field(default=10_000, metadata=_help(
        "consumer group session timeout, 6000..1800000 ms (the brokers' default bounds)", check=session_timeout))
    max_poll_interval_ms: int = field(default=300_000, metadata=_help("max time between polls before eviction",
                                                                      check=at_least(1)))
    security_protocol: str | None = field(default=None, metadata=_help("PLAINTEXT|SSL|SASL_PLAINTEXT|SASL_SSL",
                                                                        check=one_of(*SECURITY_PROTOCOLS)))
    sasl_mechanism: str | None = field(default=None, metadata=_help(
        "PLAIN|SCRAM-SHA-256|SCRAM-SHA-512|GSSAPI|OAUTHBEARER", check=one_of(*SASL_MECHANISMS)))
    sasl_plain_username: str | None = field(default=None, metadata=_help("SASL username"))
    sasl_plain_password: str | None = field(default=None, metadata=_help("SASL password (prefer the env variable)"))
    ssl_cafile: str | None = field(default=None, metadata=_help("CA bundle for TLS", check=readable_file))
    ssl_certfile: str | None = field(default=None, metadata=_help("client certificate (PEM)", check=readable_file))
    ssl_keyfile: str | None = field(default=None, metadata=_help("client private key (PEM)", check=readable_file))
    ssl_password: str | None = field(default=None, metadata=_help("password of the client key"))
    ssl_check_hostname: bool | None = field(default=None, metadata=_help("verify the broker's hostname"))
    kafka_options: dict = field(default_factory=dict, metadata=_help(
        "extra kafka-python options ([kafka_options] table, or KEY=VALUE flags)", flag="--kafka-option"))
    log_level: str = field(default="INFO", metadata=_help("logging level: DEBUG|INFO|WARNING|ERROR", check=log_level))
    # hostile input (issue 9): limits on one message
    max_payload_bytes: int = field(default=16 * 1024 * 1024, metadata=_help(
        "largest message value accepted; a larger one is a too_large dead letter", check=at_least(1)))
    max_nesting: int = field(default=32, metadata=_help(
        "deepest JSON nesting accepted; a deeper record is a too_deep dead letter", check=at_least(1)))

    # -- derived -----------------------------------------------------------------------
    def security(self) -> dict:
        keys = ("security_protocol", "sasl_mechanism", "sasl_plain_username", "sasl_plain_password",
                "ssl_cafile", "ssl_certfile", "ssl_keyfile", "ssl_password", "ssl_check_hostname")
        return {k: getattr(self, k) for k in keys if getattr(self, k) is not None}

    def consumer_options(self) -> dict:
        """Everything passed straight to KafkaConsumer besides what KafkaSource sets itself."""
        return {"session_timeout_ms": self.session_timeout_ms, "max_poll_interval_ms": self.max_poll_interval_ms,
                "heartbeat_interval_ms": max(100, self.session_timeout_ms // 10),
                **self.security(), **self.kafka_options}

    def topic_formats(self) -> dict:
        return dict(self.formats)


@dataclass
class ProduceConfig:
    """``vinestream produce LOG --topic T --format F --bootstrap-servers HOST:PORT --rate N``."""
    logs: list[str] = field(default_factory=list, metadata=_help("recorded event log(s), Parquet", flag=""))
    topic: str = field(default="vinestream-events", metadata=_help("topic to publish to", check=topic_names))
    format: str = field(default="arrow", metadata=_help("payload format: json|csv|arrow (the worker's default)",
                                                        check=one_of(*FORMATS)))
    bootstrap_servers: str = field(default="localhost:9092", metadata=_help("Kafka bootstrap servers"))
    rate: float | None = field(default=None, metadata=_help("events per second (default: as fast as possible)",
                                                            check=positive))
    batch_events: int = field(default=20_000, metadata=_help("events per Arrow IPC message", check=at_least(1)))
    partitions: int | None = field(default=None, metadata=_help("create the topic with N partitions if missing",
                                                                check=at_least(1)))
    key_by_src: bool = field(default=True, metadata=_help("shard events by source vertex"))
    lines_per_message: int = field(default=1, metadata=_help(
        "json/csv: events per Kafka message, newline-separated (kafka-python tops out near 1e5 messages/s)",
        check=at_least(1)))
    delivery_timeout_s: float = field(default=30.0, metadata=_help(
        "give up on a message the broker has not acknowledged after this many seconds (then exit 1)",
        check=positive))
    security_protocol: str | None = field(default=None, metadata=_help("PLAINTEXT|SSL|SASL_PLAINTEXT|SASL_SSL",
                                                                        check=one_of(*SECURITY_PROTOCOLS)))
    sasl_mechanism: str | None = field(default=None, metadata=_help("SASL mechanism",
                                                                    check=one_of(*SASL_MECHANISMS)))
    sasl_plain_username: str | None = field(default=None, metadata=_help("SASL username"))
    sasl_plain_password: str | None = field(default=None, metadata=_help("SASL password"))
    ssl_cafile: str | None = field(default=None, metadata=_help("CA bundle for TLS", check=readable_file))

    def security(self) -> dict:
        keys = ("security_protocol", "sasl_mechanism", "sasl_plain_username", "sasl_plain_password", "ssl_cafile")
        return {k: getattr(self, k) for k in keys if getattr(self, k) is not None}


# -- job parameters ----------------------------------------------------------------------------
# JOB_OPTIONS (job -> option -> (type, what is valid, check)) is declared by the jobs (vinestream.algorithms)


def _flatten_options(options: dict, prefix: str = "") -> dict:
    out = {}
    for key, value in (options or {}).items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(_flatten_options(value, name + "."))
        else:
            out[name] = value
    return out


def parse_job_options(options: dict, jobs, where: str = "--job-option") -> dict[str, dict]:
    """``{"pagerank.damping": 0.9}`` (or nested TOML tables) -> ``{"pagerank": {"damping": 0.9}}``, validated.

    Every option must name a job in ``jobs`` and one of its known options, with a valid value.
    """
    out: dict[str, dict] = {}
    for key, raw in _flatten_options(options).items():
        job, _, option = str(key).partition(".")
        # each message names the one entry that is wrong (as given: a flag's text, a TOML value) and in it the job,
        # the option and the value
        entry = f"{where} {key}={raw if isinstance(raw, str) and len(raw) <= 100 else excerpt(raw)}"
        with_options = ", ".join(j for j in JOB_OPTIONS if JOB_OPTIONS[j])
        if not job or not option:
            raise UsageError(f"{entry}: expected {PAIR_FORMS['job_options']}, JOB one of {with_options}")
        if job not in JOB_OPTIONS:
            raise UsageError(f"{entry}: unknown job {job!r}; the jobs with options: {with_options}")
        known = JOB_OPTIONS[job]
        if option not in known:
            valid = ", ".join(f"{job}.{o}" for o in known)
            raise UsageError(f"{entry}: the {job} job has no option {option!r}"
                             + (f"; valid: {valid}" if valid else " (it takes none)"))
        if job not in (jobs or ()):
            raise UsageError(f"{entry}: the {job} job is not in --jobs ({','.join(jobs or ()) or 'none'})")
        kind, valid, _ = known[option]
        try:
            value = _scalar(kind, raw)
            bad = job_option_problem(job, option, value)
        except ValueError:
            bad = True
        if bad:
            raise UsageError(f"{entry}: the {job} job's {option} takes {valid}, not {excerpt(raw)}")
        out.setdefault(job, {})[option] = value
    return out


# -- parsing values -----------------------------------------------------------------------------

@functools.cache
def _type_hints(cls) -> dict:
    """The resolved annotations of ``cls``, once: resolving them for every field cost 0.17 s of each start-up
    (argparse is built before the command can even install its signal handlers)."""
    return typing.get_type_hints(cls)


def _kind(cls, f: dataclasses.Field):
    """(base type, is_list) of a field from its annotation."""
    hint = _type_hints(cls)[f.name]
    args = [a for a in typing.get_args(hint) if a is not type(None)]
    origin = typing.get_origin(hint)
    if origin is list:
        return typing.get_args(hint)[0], True
    if origin is dict or hint is dict:
        return dict, False
    if args and typing.get_origin(args[0]) is list:
        return typing.get_args(args[0])[0], True
    base = args[0] if args else hint
    return (dict if typing.get_origin(base) is dict else base), False


_KIND_TEXT = {int: "an integer", float: "a number", bool: "true or false", str: "text", dict: "KEY=VALUE pairs"}


def _bool(text: str) -> bool:
    t = str(text).strip().lower()
    if t in ("1", "true", "yes", "on"):
        return True
    if t in ("0", "false", "no", "off", ""):
        return False
    raise ValueError(f"not a boolean: {text!r}")


def _scalar(base, text):
    if base is bool:
        return text if isinstance(text, bool) else _bool(text)
    if base is int:
        if isinstance(text, bool) or (isinstance(text, float) and not text.is_integer()):
            raise ValueError(f"not an integer: {text!r}")
        return int(text) if not isinstance(text, str) else int(text.strip())
    if base is float:
        if isinstance(text, bool):
            raise ValueError(f"not a number: {text!r}")
        return float(text)
    return str(text)


def _from_text(cls, f, text: str):
    """Parse an env/flag string into the field's type (lists: comma separated; dicts: K=V,...).

    Empty text is an empty list or table, and for a single number or flag no value at all: a ValueError (it
    was None, which skipped both the default and the field's check and failed later as a TypeError, or
    switched a limit off).  An empty environment variable never gets here: it means unset (load_config).
    """
    base, is_list = _kind(cls, f)
    if text is None:
        return None
    if not is_list and base is not str and base is not dict and not str(text).strip():
        raise ValueError(f"no value: {text!r}")
    if is_list:
        out = []
        for t in str(text).split(","):
            if t.strip():
                try:
                    out.append(_scalar(base, t.strip()))
                except ValueError:
                    raise BadPart(t.strip()) from None
        return out
    if base is dict:
        return {k: _guess(v) for k, v in key_value_pairs(text).items()}
    return _scalar(base, text)


def key_value_pairs(text: str) -> dict[str, str]:
    """``"K=V,K=V"`` -> ``{K: V}`` (text, stripped; empty parts skipped); a part without ``=`` is a
    :class:`BadPart`.  Every KEY=VALUE flag and variable is split here (``--job-option`` too)."""
    out = {}
    for item in str(text).split(","):
        if item.strip():
            k, eq, v = item.partition("=")
            if not eq:
                raise BadPart(item.strip())
            out[k.strip()] = v.strip()
    return out


class BadPart(ValueError):
    """The one part of a comma-separated flag or variable that cannot be read (``str(exc)``): the message names it,
    not the whole value (``--job-option ['pagerank.damping=0.9,nope']: expected KEY=VALUE pairs``)."""


def _part_expected(cls, f) -> str:
    """What one comma-separated part of the field's text must be."""
    base, _ = _kind(cls, f)
    if base is dict:
        return PAIR_FORMS.get(f.name, "KEY=VALUE")
    return _KIND_TEXT.get(base, "text")


#: the form of one entry of a KEY=VALUE field, where it is not a bare KEY=VALUE
PAIR_FORMS = {"job_options": "JOB.OPTION=VALUE (e.g. pagerank.damping=0.9)"}


def _guess(text: str):
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    return text


def _file_scalar(base, value):
    """A TOML value of the key's own type (TOML types its values: ``out = 5`` was taken as the directory "5",
    ``topics = [1, 2]`` as topics "1" and "2", ``edge_ttl = "x"`` failed later); an integer is a number too."""
    fits = {bool: lambda v: isinstance(v, bool), int: lambda v: isinstance(v, int) and not isinstance(v, bool),
            float: lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
            str: lambda v: isinstance(v, str)}.get(base, lambda v: True)
    if not fits(value):
        raise TypeError(f"not {_KIND_TEXT.get(base, base)}: {value!r}")
    return float(value) if base is float else value


def _from_file_value(cls, f, value):
    base, is_list = _kind(cls, f)
    if is_list:
        if isinstance(value, str):
            return _from_text(cls, f, value)             # "a,b", as the flag and the variable take a list
        return [_file_scalar(base, v) for v in (value if isinstance(value, list) else [value])]
    if base is dict:
        if isinstance(value, str):
            return _from_text(cls, f, value)             # "k=v,k2=v2", as the flag and the variable take it
        if not isinstance(value, dict):
            raise ValueError("expected a table")
        return dict(value)
    return _file_scalar(base, value)


def _flatten_toml(doc: dict, names: set) -> dict:
    """Top-level keys, plus keys inside any table whose name is not itself a key (e.g. [kafka])."""
    out = {}
    for key, value in doc.items():
        if isinstance(value, dict) and key not in names:
            out.update(_flatten_toml(value, names))
        else:
            out[key] = value
    return out


def flag_of(f: dataclasses.Field) -> str:
    return f.metadata.get("flag") or "--" + f.name.replace("_", "-")


def _expected(cls, f) -> str:
    base, is_list = _kind(cls, f)
    text = _KIND_TEXT.get(base, "text")
    return f"comma-separated values, each {text}" if is_list else text


def _split_format(cfg, where: str = "--format") -> None:
    """``format = "t1=arrow,t2=json"`` or ``"arrow"``: a default plus per-topic entries."""
    if "=" in str(cfg.format):
        default = WorkerConfig.format
        for item in str(cfg.format).split(","):
            if "=" in item:
                topic, _, fmt = item.partition("=")
                cfg.formats[topic.strip()] = fmt.strip()
            elif item.strip():
                default = item.strip()
        cfg.format = default
    for fmt in [cfg.format, *cfg.formats.values()]:
        if fmt not in FORMATS:
            raise UsageError(f"{where}: unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")


def load_config(cls=WorkerConfig, *, path: str | None = None, args: argparse.Namespace | None = None,
                env: dict | None = None):
    """Merge defaults < TOML file < ``VINESTREAM_*`` environment < flags into a validated ``cls`` instance.

    Raises :class:`UsageError` naming the flag, environment variable or file key of a bad
    value and what would be valid.  ``cfg.sources`` maps each key given to where it came from.
    """
    env = os.environ if env is None else env
    values: dict = {}
    sources: dict = {}
    names = {f.name for f in fields(cls)}
    path = path or (getattr(args, "config", None) if args is not None else None) or env.get(ENV_PREFIX + "CONFIG")
    if path:
        kind = special_file(path)
        if kind:
            raise UsageError(f"--config {path}: is {kind}, not a regular file: give the TOML file itself")
        try:
            with open(path, "rb") as fh:
                # utf-8-sig: the byte-order mark editors on Windows write was "Invalid statement (line 1, column 1)"
                doc = _flatten_toml(tomllib.loads(fh.read().decode("utf-8-sig")), names)
        except tomllib.TOMLDecodeError as exc:
            raise UsageError(f"--config {path}: not valid TOML ({exc})") from None
        except UnicodeDecodeError as exc:    # TOML is UTF-8: a bare codec message would not say which file
            raise UsageError(f"--config {path}: not UTF-8 text (byte {exc.start} is 0x{exc.object[exc.start]:02x}); "
                             "a TOML file is UTF-8") from None
        except OSError as exc:
            raise UsageError(f"--config {path}: {exc.strerror or exc}") from None
        unknown = sorted(set(doc) - names - {"topic"})
        if unknown:
            hints = []
            for key in unknown:
                close = [n for n in sorted(names) if n.startswith(key)] or \
                    difflib.get_close_matches(key, sorted(names), n=1)
                hints.append(f"{key} (did you mean {close[0]}?)" if close else key)
            raise UsageError(f"--config {path}: unknown key(s) {', '.join(hints)}; `vinestream {_command(cls)} "
                             f"--help` lists the valid ones")
        if "topic" in doc and "topics" in names:
            doc.setdefault("topics", doc.pop("topic"))
        for f in fields(cls):
            if f.name in doc:
                where = f"{f.name} in {path}"
                try:
                    values[f.name] = _from_file_value(cls, f, doc[f.name])
                    if f.name == "job_options":
                        values[f.name] = _flatten_options(values[f.name])
                except BadPart as exc:
                    raise UsageError(f"{where}: {excerpt(str(exc))} is not {_part_expected(cls, f)}") from None
                except (ValueError, TypeError):
                    kind = "a table or " if _kind(cls, f)[0] is dict else ""
                    raise UsageError(f"{where}: {excerpt(doc[f.name])} is not {kind}{_expected(cls, f)}") from None
                sources[f.name] = where
    for f in fields(cls):
        key = ENV_PREFIX + f.name.upper()
        # An empty (or blank) variable is unset, so the file or the default applies: compose and Kubernetes
        # templates write VINESTREAM_X= for a value nobody filled in.
        if key in env and str(env[key]).strip():
            try:
                values[f.name] = _from_text(cls, f, env[key])
            except BadPart as exc:
                raise UsageError(f"environment variable {key}: {excerpt(str(exc))} is not "
                                 f"{_part_expected(cls, f)}") from None
            except ValueError:
                raise UsageError(f"environment variable {key}={env[key]!r}: expected {_expected(cls, f)}") from None
            sources[f.name] = key
    if args is not None:
        for f in fields(cls):
            given = getattr(args, f.name, None)
            if given is None:
                continue
            try:
                if isinstance(given, list) and given and isinstance(given[0], str) and _kind(cls, f)[1]:
                    given = [v for g in given for v in _from_text(cls, f, g)]   # --topic a --topic b,c
                elif isinstance(given, list) and _kind(cls, f)[0] is dict:
                    given = {k: v for g in given for k, v in _from_text(cls, f, g).items()}
                elif isinstance(given, str) and not isinstance(getattr(cls, f.name, ""), str):
                    given = _from_text(cls, f, given)
            except BadPart as exc:
                raise UsageError(f"{flag_of(f)} {excerpt(str(exc))}: expected {_part_expected(cls, f)}") from None
            except ValueError:
                raise UsageError(f"{flag_of(f)} {given!r}: expected {_expected(cls, f)}") from None
            if isinstance(given, dict) and isinstance(values.get(f.name), dict):
                given = {**values[f.name], **given}            # flags add to (and win over) file/env entries
            values[f.name] = given
            sources[f.name] = flag_of(f)
    cfg = cls(**values)
    cfg.sources = sources
    validate(cfg)
    return cfg


def _command(cls) -> str:
    return "produce" if cls is ProduceConfig else "run"


def where(cfg, name: str) -> str:
    """How the user set key ``name``: the flag, the environment variable or the file key."""
    f = next(f for f in fields(cfg) if f.name == name)
    return getattr(cfg, "sources", {}).get(name, flag_of(f))


def validate(cfg) -> None:
    """Every field's ``check``, then the rules between fields; UsageError names where a bad value came from."""
    if isinstance(cfg, WorkerConfig) and [str(j).lower() for j in cfg.jobs] == ["none"]:
        cfg.jobs = []                               # --jobs none, as replay takes it
    for f in fields(cfg):
        check = f.metadata.get("check")
        value = getattr(cfg, f.name)
        problem = check(value) if check is not None else None
        if problem:
            raise UsageError(f"{where(cfg, f.name)}: {excerpt(value)} is not valid; expected {problem}")
    _check_security(cfg)
    if isinstance(cfg, WorkerConfig):
        _split_format(cfg, where(cfg, "format"))
        if not cfg.topics and not cfg.topic_pattern:
            raise UsageError("no topic to consume: give --topic T (or topics = [...] in the config, or "
                             "VINESTREAM_TOPICS), or --topic-pattern REGEX")
        if cfg.topics and cfg.topic_pattern:
            # the worker subscribed to the pattern alone and the topics were dropped without a word; both may come
            # from different places (a file's topics, a flag's pattern), so neither is taken to override the other
            raise UsageError(f"{where(cfg, 'topics')} and {where(cfg, 'topic_pattern')} both say what to consume: "
                             "give one of them (a pattern replaces the list of topics)")
        _check_output_topics(cfg)
        _check_topic_formats(cfg)
        if "bfs" in cfg.jobs and not cfg.bfs_source:
            raise UsageError("the bfs job needs source vertices: --bfs-source ID[,ID] (or bfs_source = [...])")
        if cfg.bfs_source and "bfs" not in cfg.jobs:
            raise UsageError(f"{where(cfg, 'bfs_source')} is given but bfs is not in --jobs "
                             f"({','.join(cfg.jobs) or 'none'})")
        if cfg.overwrite and cfg.resume:
            raise UsageError("--overwrite and --resume contradict each other: choose one")
        if (cfg.resume or cfg.overwrite) and not cfg.out:
            raise UsageError(f"{'--resume' if cfg.resume else '--overwrite'} needs --out DIR")
        # they shape the job outputs written under --out (the results topic gets every epoch): without it they
        # were taken and did nothing
        for name, unset in (("keep_epochs", None), ("output_every", 1)):
            if getattr(cfg, name) != unset and not cfg.out:
                raise UsageError(f"{where(cfg, name)} needs --out DIR: it bounds the job outputs written there")
        cfg.job_options = cfg.job_options or {}
        parse_job_options(cfg.job_options, cfg.jobs, where(cfg, "job_options"))
        heartbeat = cfg.consumer_options().get("heartbeat_interval_ms")
        if isinstance(heartbeat, int) and heartbeat >= cfg.session_timeout_ms:
            # kafka-python refuses it when the worker connects, and that was retried as if the broker were down
            raise UsageError(f"{where(cfg, 'kafka_options')} heartbeat_interval_ms={heartbeat} must be below the "
                             f"session timeout ({cfg.session_timeout_ms} ms, {where(cfg, 'session_timeout_ms')})")


#: what the worker would do with its own output read back as input
_FED_BACK = {"dead_letter_topic": "read its own dead letters back, reject them again and write them again, "
                                  "without end",
             "results_topic": "read its own results back as events (each one a dead letter)"}


def _check_output_topics(cfg) -> None:
    """An output topic must not be an input: neither one of --topic nor one --topic-pattern matches (as
    kafka-python matches it: ``re.match``, anchored at the start)."""
    for key, outcome in _FED_BACK.items():
        topic = getattr(cfg, key)
        if not topic:
            continue
        if topic in cfg.topics:
            source = where(cfg, "topics")
        elif cfg.topic_pattern and re.match(cfg.topic_pattern, topic):
            source = f"{where(cfg, 'topic_pattern')} {cfg.topic_pattern!r}"
        else:
            continue
        raise UsageError(f"{where(cfg, key)} {topic} is also an input topic ({source}): the worker would {outcome}; "
                         "choose another topic")


def _check_topic_formats(cfg) -> None:
    """A per-topic format names an input topic (one of --topic, or one --topic-pattern matches): a misspelt
    one was taken, and the topic it meant was read in the default format, every message a dead letter."""
    for topic, fmt in cfg.formats.items():
        if topic in cfg.topics or (cfg.topic_pattern and re.match(cfg.topic_pattern, topic)):
            continue
        given = where(cfg, "formats") if "formats" in getattr(cfg, "sources", {}) else where(cfg, "format")
        inputs = f"{where(cfg, 'topics')} {','.join(cfg.topics)}" if cfg.topics else \
            f"{where(cfg, 'topic_pattern')} {cfg.topic_pattern!r}"
        raise UsageError(f"{given} {topic}={fmt}: {topic} is not an input topic ({inputs}); name a topic consumed")


def _check_security(cfg) -> None:
    """The security keys that only work together (kafka-python would ignore the rest, or fail at the handshake)."""
    protocol = cfg.security_protocol or "PLAINTEXT"
    sasl = protocol.startswith("SASL_")
    if cfg.sasl_mechanism and not sasl:
        raise UsageError(f"{where(cfg, 'sasl_mechanism')} {cfg.sasl_mechanism} needs --security-protocol "
                         f"SASL_PLAINTEXT or SASL_SSL (it is {protocol})")
    if sasl and not cfg.sasl_mechanism:
        raise UsageError(f"--security-protocol {protocol} needs --sasl-mechanism ({', '.join(SASL_MECHANISMS)})")
    if cfg.sasl_mechanism in ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512") and not (
            cfg.sasl_plain_username and cfg.sasl_plain_password):
        raise UsageError(f"--sasl-mechanism {cfg.sasl_mechanism} needs --sasl-plain-username and "
                         "--sasl-plain-password (or their VINESTREAM_ variables)")
    tls = [name for name in ("ssl_cafile", "ssl_certfile", "ssl_keyfile") if getattr(cfg, name, None)]
    if tls and protocol not in ("SSL", "SASL_SSL"):
        raise UsageError(f"{where(cfg, tls[0])} is given, but the connection is {protocol}: pass --security-protocol "
                         "SSL or SASL_SSL")


def masked(cfg) -> dict:
    """The effective config as a dict, secrets replaced by ``"***"`` (``vinestream run --check``)."""
    out = {}
    for f in fields(cfg):
        value = getattr(cfg, f.name)
        if f.name in SECRET_KEYS and value is not None:
            value = "***"
        elif isinstance(value, dict):
            value = {k: ("***" if any(s in str(k).lower() for s in ("password", "secret", "token")) else v)
                     for k, v in value.items()}
        out[f.name] = value
    return out


# -- argparse -------------------------------------------------------------------------------

def _add_fields(parser: argparse.ArgumentParser, cls, skip=()) -> None:
    for f in fields(cls):
        if f.name in skip:
            continue
        meta = f.metadata
        if meta.get("flag") == "":
            continue
        flag = flag_of(f)
        base, is_list = _kind(cls, f)
        env = ENV_PREFIX + f.name.upper()
        default = f.default if f.default is not dataclasses.MISSING else f.default_factory()
        text = f"{meta.get('help', '')} (env {env}; default {default!r})"
        kw = {"dest": f.name, "default": None, "help": text}
        if base is bool and not is_list:
            parser.add_argument(flag, action=argparse.BooleanOptionalAction, **kw)
        elif is_list or base is dict:
            parser.add_argument(flag, action="append", metavar="V[,V...]" if is_list else "K=V", **kw)
        else:
            parser.add_argument(flag, type=str, metavar=f.name.upper(), **kw)


def add_run_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The ``vinestream run`` flags (contract: --bootstrap-servers --topic --group --format --structure
    --jobs --metrics-port --out), plus ``--config worker.toml`` and ``--check``."""
    parser.add_argument("--config", metavar="TOML", default=None,
                        help=f"TOML config file (env {ENV_PREFIX}CONFIG); flags > env > file > defaults")
    parser.add_argument("--check", action="store_true",
                        help="dry run: validate the config, flags and environment, print the effective config "
                             "(secrets masked) and exit 0 without connecting")
    _add_fields(parser, WorkerConfig)
    return parser


def add_produce_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The ``vinestream produce LOG [LOG...] --topic T --format F --bootstrap-servers HOST:PORT --rate N`` flags."""
    parser.add_argument("logs", nargs="+", metavar="LOG", help="recorded event log(s), Parquet (EVENT_SCHEMA)")
    parser.add_argument("--config", metavar="TOML", default=None, help="TOML config file")
    _add_fields(parser, ProduceConfig, skip=("logs",))
    return parser


def run_config(args: argparse.Namespace, env: dict | None = None) -> WorkerConfig:
    return load_config(WorkerConfig, args=args, env=env)


def produce_config(args: argparse.Namespace, env: dict | None = None) -> ProduceConfig:
    return load_config(ProduceConfig, args=args, env=env)
