"""Worker and producer configuration: TOML file, ``VINESTREAM_<KEY>`` environment, CLI flags.

Precedence, per key: command-line flag > environment variable > config file >
default.  Every key of :class:`WorkerConfig` has all three spellings: ``key`` in
the TOML file (top level, or inside any table such as ``[kafka]`` — tables are
flattened, except ``[formats]`` and ``[kafka_options]`` which are maps), the
environment variable ``VINESTREAM_KEY`` and the flag ``--key`` (underscores
become dashes).

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

[kafka_options]      # anything else kafka-python accepts, passed straight through
fetch_max_wait_ms = 100
```
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import tomllib
import typing
from dataclasses import dataclass, field, fields

ENV_PREFIX = "VINESTREAM_"
FORMATS = ("json", "csv", "arrow")


def _help(text: str, flag: str | None = None, **kw) -> dict:
    return {"help": text, "flag": flag, **kw}


@dataclass
class WorkerConfig:
    """Everything ``vinestream run`` needs; each field's metadata holds its --help text."""
    # Kafka source
    bootstrap_servers: str = field(default="localhost:9092", metadata=_help(
        "Kafka bootstrap servers, HOST:PORT[,HOST:PORT...]"))
    topics: list[str] = field(default_factory=list, metadata=_help(
        "topic(s) to consume (repeat the flag or separate with commas)", flag="--topic"))
    topic_pattern: str | None = field(default=None, metadata=_help("regex of topics to consume instead of --topic"))
    group: str = field(default="vinestream", metadata=_help("consumer group id", flag="--group"))
    format: str = field(default="json", metadata=_help(
        "payload format: json|csv|arrow; per topic as TOPIC=FMT[,TOPIC=FMT]"))
    formats: dict = field(default_factory=dict, metadata=_help("per-topic formats (from --format T=F or [formats])",
                                                               flag=""))
    auto_offset_reset: str = field(default="earliest", metadata=_help(
        "where a group without committed offsets starts: earliest|latest"))
    # pipeline
    structure: str = field(default="graphvine", metadata=_help("dynamic graph structure (--structure NAME)"))
    backend: str = field(default="auto", metadata=_help("array backend: auto|cpu|gpu"))
    undirected: bool = field(default=False, metadata=_help("mirror every edge event"))
    keep_self_loops: bool = field(default=False, metadata=_help("keep src == dst edges instead of dropping them"))
    jobs: list[str] = field(default_factory=list, metadata=_help(
        "jobs to run on the changing graph: pagerank,bfs,triangles"))
    jobs_every: int = field(default=1, metadata=_help("run the jobs every N batches"))
    bfs_source: list[int] = field(default_factory=list, metadata=_help("BFS source vertex id(s) (external ids)"))
    batch_size: int = field(default=200_000, metadata=_help("events per batch (upper target)"))
    batch_latency_ms: int = field(default=200, metadata=_help(
        "close a batch after this many ms even when it is not full"))
    max_poll_records: int = field(default=500, metadata=_help("Kafka messages per poll"))
    max_inflight_batches: int = field(default=2, metadata=_help(
        "batches decoded but not yet applied before the consumer pauses its partitions (backpressure)"))
    # sinks
    out: str | None = field(default=None, metadata=_help("results directory (summary.parquet, <job>/epoch=N.parquet)"))
    results_topic: str | None = field(default=None, metadata=_help("Kafka topic for per-epoch results"))
    results_format: str = field(default="json", metadata=_help("results topic payload: json|arrow"))
    dead_letter_topic: str | None = field(default=None, metadata=_help("Kafka topic for rejected records"))
    # monitoring
    metrics_port: int = field(default=9464, metadata=_help("Prometheus /metrics port (0 = any free port, -1 = off)"))
    metrics_addr: str = field(default="127.0.0.1", metadata=_help(
        "address the metrics endpoint binds (loopback by default; 0.0.0.0 to let Prometheus on another host "
        "scrape it)"))
    pushgateway: str | None = field(default=None, metadata=_help("Pushgateway URL to push metrics to at exit"))
    # checkpoints
    checkpoint_dir: str | None = field(default=None, metadata=_help("directory for atomic checkpoints"))
    checkpoint_every_batches: int = field(default=100, metadata=_help("checkpoint every N batches (0 = never)"))
    checkpoint_every_seconds: float = field(default=60.0, metadata=_help("checkpoint every T seconds (0 = never)"))
    checkpoint_keep: int = field(default=2, metadata=_help("checkpoints kept on disk"))
    # stop conditions (replay-like runs and tests)
    max_batches: int | None = field(default=None, metadata=_help("stop after N batches"))
    idle_timeout: float | None = field(default=None, metadata=_help("stop after T seconds without messages"))
    until_end: bool = field(default=False, metadata=_help(
        "stop once every assigned partition is read up to its high watermark"))
    # Kafka client
    session_timeout_ms: int = field(default=10_000, metadata=_help("consumer group session timeout"))
    max_poll_interval_ms: int = field(default=300_000, metadata=_help("max time between polls before eviction"))
    security_protocol: str | None = field(default=None, metadata=_help("PLAINTEXT|SSL|SASL_PLAINTEXT|SASL_SSL"))
    sasl_mechanism: str | None = field(default=None, metadata=_help(
        "PLAIN|SCRAM-SHA-256|SCRAM-SHA-512|GSSAPI|OAUTHBEARER"))
    sasl_plain_username: str | None = field(default=None, metadata=_help("SASL username"))
    sasl_plain_password: str | None = field(default=None, metadata=_help("SASL password (prefer the env variable)"))
    ssl_cafile: str | None = field(default=None, metadata=_help("CA bundle for TLS"))
    ssl_certfile: str | None = field(default=None, metadata=_help("client certificate (PEM)"))
    ssl_keyfile: str | None = field(default=None, metadata=_help("client private key (PEM)"))
    ssl_password: str | None = field(default=None, metadata=_help("password of the client key"))
    ssl_check_hostname: bool | None = field(default=None, metadata=_help("verify the broker's hostname"))
    kafka_options: dict = field(default_factory=dict, metadata=_help(
        "extra kafka-python options ([kafka_options] table, or KEY=VALUE flags)", flag="--kafka-option"))
    log_level: str = field(default="INFO", metadata=_help("logging level: DEBUG|INFO|WARNING|ERROR"))
    # hostile input (issue 9): limits on one message
    max_payload_bytes: int = field(default=16 * 1024 * 1024, metadata=_help(
        "largest message value accepted; a larger one is a too_large dead letter"))
    max_nesting: int = field(default=32, metadata=_help(
        "deepest JSON nesting accepted; a deeper record is a too_deep dead letter"))

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
    topic: str = field(default="vinestream-events", metadata=_help("topic to publish to"))
    format: str = field(default="arrow", metadata=_help("payload format: json|csv|arrow"))
    bootstrap_servers: str = field(default="localhost:9092", metadata=_help("Kafka bootstrap servers"))
    rate: float | None = field(default=None, metadata=_help("events per second (default: as fast as possible)"))
    batch_events: int = field(default=20_000, metadata=_help("events per Arrow IPC message"))
    partitions: int | None = field(default=None, metadata=_help("create the topic with N partitions if missing"))
    key_by_src: bool = field(default=True, metadata=_help("shard events by source vertex"))
    lines_per_message: int = field(default=1, metadata=_help(
        "json/csv: events per Kafka message, newline-separated (kafka-python tops out near 1e5 messages/s)"))
    delivery_timeout_s: float = field(default=30.0, metadata=_help(
        "give up on a message the broker has not acknowledged after this many seconds (then exit 1)"))
    security_protocol: str | None = field(default=None, metadata=_help("PLAINTEXT|SSL|SASL_PLAINTEXT|SASL_SSL"))
    sasl_mechanism: str | None = field(default=None, metadata=_help("SASL mechanism"))
    sasl_plain_username: str | None = field(default=None, metadata=_help("SASL username"))
    sasl_plain_password: str | None = field(default=None, metadata=_help("SASL password"))
    ssl_cafile: str | None = field(default=None, metadata=_help("CA bundle for TLS"))

    def security(self) -> dict:
        keys = ("security_protocol", "sasl_mechanism", "sasl_plain_username", "sasl_plain_password", "ssl_cafile")
        return {k: getattr(self, k) for k in keys if getattr(self, k) is not None}


# -- parsing values -----------------------------------------------------------------------

def _kind(cls, f: dataclasses.Field):
    """(base type, is_list) of a field from its annotation."""
    hint = typing.get_type_hints(cls)[f.name]
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
    if base in (int, float):
        return base(text)
    return str(text)


def _from_text(cls, f, text: str):
    """Parse an env/flag string into the field's type (lists: comma separated; dicts: K=V,...)."""
    base, is_list = _kind(cls, f)
    if text is None or (text == "" and base is not str):
        return None
    if is_list:
        return [_scalar(base, t.strip()) for t in str(text).split(",") if t.strip()]
    if base is dict:
        out = {}
        for item in str(text).split(","):
            if item.strip():
                k, _, v = item.partition("=")
                out[k.strip()] = _guess(v.strip())
        return out
    return _scalar(base, text)


def _guess(text: str):
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    return text


def _from_file_value(cls, f, value):
    base, is_list = _kind(cls, f)
    if is_list:
        if isinstance(value, str):
            return _from_text(cls, f, value)
        return [_scalar(base, v) for v in (value if isinstance(value, list) else [value])]
    if base is dict:
        return dict(value)
    return _scalar(base, value)


def _flatten_toml(doc: dict, names: set) -> dict:
    """Top-level keys, plus keys inside any table whose name is not itself a key (e.g. [kafka])."""
    out = {}
    for key, value in doc.items():
        if isinstance(value, dict) and key not in names:
            out.update(_flatten_toml(value, names))
        else:
            out[key] = value
    return out


def _split_format(cfg) -> None:
    """``format = "t1=arrow,t2=json"`` or ``"arrow"``: a default plus per-topic entries."""
    if "=" in str(cfg.format):
        default = "json"
        for item in str(cfg.format).split(","):
            if "=" in item:
                topic, _, fmt = item.partition("=")
                cfg.formats[topic.strip()] = fmt.strip()
            elif item.strip():
                default = item.strip()
        cfg.format = default
    for fmt in [cfg.format, *cfg.formats.values()]:
        if fmt not in FORMATS:
            raise ValueError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")


def load_config(cls=WorkerConfig, *, path: str | None = None, args: argparse.Namespace | None = None,
                env: dict | None = None):
    """Merge defaults < TOML file < ``VINESTREAM_*`` environment < flags into a ``cls`` instance."""
    env = os.environ if env is None else env
    values: dict = {}
    names = {f.name for f in fields(cls)}
    path = path or (getattr(args, "config", None) if args is not None else None) or env.get(ENV_PREFIX + "CONFIG")
    if path:
        with open(path, "rb") as fh:
            doc = _flatten_toml(tomllib.load(fh), names)
        unknown = set(doc) - names - {"topic"}
        if unknown:
            raise ValueError(f"unknown key(s) in {path}: {', '.join(sorted(unknown))}")
        if "topic" in doc and "topics" in names:
            doc.setdefault("topics", doc.pop("topic"))
        for f in fields(cls):
            if f.name in doc:
                values[f.name] = _from_file_value(cls, f, doc[f.name])
    for f in fields(cls):
        key = ENV_PREFIX + f.name.upper()
        if key in env:
            values[f.name] = _from_text(cls, f, env[key])
    if args is not None:
        for f in fields(cls):
            given = getattr(args, f.name, None)
            if given is None:
                continue
            if isinstance(given, list) and given and isinstance(given[0], str) and _kind(cls, f)[1]:
                given = [v for g in given for v in _from_text(cls, f, g)]   # --topic a --topic b,c
            elif isinstance(given, list) and _kind(cls, f)[0] is dict:
                given = {k: v for g in given for k, v in _from_text(cls, f, g).items()}
            elif isinstance(given, str) and not isinstance(getattr(cls, f.name, ""), str):
                given = _from_text(cls, f, given)
            values[f.name] = given
    cfg = cls(**values)
    if cls is WorkerConfig:
        _split_format(cfg)
    return cfg


# -- argparse -------------------------------------------------------------------------------

def _add_fields(parser: argparse.ArgumentParser, cls, skip=()) -> None:
    for f in fields(cls):
        if f.name in skip:
            continue
        meta = f.metadata
        flag = meta.get("flag")
        if flag == "":
            continue
        flag = flag or "--" + f.name.replace("_", "-")
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
            parser.add_argument(flag, type=base if base in (int, float) else str,
                                metavar=f.name.upper(), **kw)


def add_run_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The ``vinestream run`` flags (contract: --bootstrap-servers --topic --group --format --structure
    --jobs --metrics-port --out), plus ``--config worker.toml``."""
    parser.add_argument("--config", metavar="TOML", default=None,
                        help=f"TOML config file (env {ENV_PREFIX}CONFIG); flags > env > file > defaults")
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
