"""Kafka source and sinks on kafka-python (DESIGN.md "The worker and its guarantees").

- :class:`KafkaSource`: a consumer-group member with manual commits.  ``poll``
  returns every message of a poll decoded together (vectorised, one
  ``stream.decode.decode`` call per topic-partition, format per topic), plus the
  offsets to commit once the caller says the batch is durable.
- :class:`KafkaResultsSink` / :class:`KafkaDeadLetterSink`: per-epoch summaries and
  job outputs, and rejected records with reason and source position.
- :func:`produce`: publish a recorded event log (Parquet, EVENT_SCHEMA) as JSON
  lines, CSV lines or Arrow IPC messages, sharded by source vertex.

A broker that goes away is retried with exponential backoff and logged, never a
crash.  kafka-python computes CRC-32C for every record batch; with the
``crc32c`` package it does so in C (~25x faster), see :func:`crc32c_accelerated`.

Tansu 0.6 (the test broker) answers ``ListOffsets(latest)`` with the base offset
of the last record batch + 1, so partition ends are taken from the high
watermark of fetch responses (``KafkaConsumer.highwater``), which is right on
both Tansu and Apache Kafka.
"""
from __future__ import annotations

import difflib
import functools
import inspect
import json
import logging
import re
import socket
import threading
import time
from collections.abc import Callable, Iterable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.consumer.subscription_state import AsyncConsumerRebalanceListener
from kafka.coordinator.assignors.range import RangePartitionAssignor
from kafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor
from kafka.errors import (
    CommitFailedError,
    CorruptRecordError,
    InvalidSessionTimeoutError,
    KafkaConfigurationError,
    KafkaConnectionError,
    KafkaError,
    KafkaTimeoutError,
    RetriableError,
    TopicAlreadyExistsError,
    UnsupportedCodecError,
)
from kafka.structs import OffsetAndMetadata
from pyarrow import ipc

from vinestream.stream.events.decode import decode
from vinestream.stream.events.device import DeviceEvents
from vinestream.stream.events.schema import (
    DEFAULT_MAX_NESTING,
    DEFAULT_MAX_PAYLOAD_BYTES,
    EVENT_SCHEMA,
)
from vinestream.stream.events.validate import dead_letters

from .base import Polled, add_rejected, error_text, position_offset
from .partition_merge import MergePosition, PartitionMerge, as_position

log = logging.getLogger(__name__)

FORMATS = ("json", "csv", "arrow")

#: commit errors that mean "the coordinator is unreachable for now": wait and retry
RETRIABLE_COMMIT_ERRORS = (RetriableError, KafkaTimeoutError, KafkaConnectionError, OSError)

#: how long the commit of a stopping worker (SIGTERM, the end of its input) may wait for the brokers: a stop is
#: prompt even with the brokers gone (it took kafka-python's request timeout, 30 s by default, and as long again for
#: a commit in flight when the signal came).  A running worker's commits keep that timeout and are retried
STOP_COMMIT_TIMEOUT_S = 5.0

#: kafka-python options that pass straight through from the config (security and tuning)
SECURITY_KEYS = ("security_protocol", "sasl_mechanism", "sasl_plain_username", "sasl_plain_password",
                 "sasl_kerberos_service_name", "sasl_kerberos_domain_name", "sasl_oauth_token_provider",
                 "ssl_cafile", "ssl_certfile", "ssl_keyfile", "ssl_password", "ssl_crlfile",
                 "ssl_check_hostname", "ssl_ciphers", "ssl_context")


def crc32c_accelerated() -> bool:
    """True when kafka-python checks record CRCs with the ``crc32c`` C extension."""
    from kafka.record import util
    return util._crc32c is not util.crc32c_py


def security_options(options: dict | None) -> dict:
    """The security/tuning subset of ``options`` that kafka-python clients accept, Nones dropped."""
    return {k: v for k, v in (options or {}).items() if v is not None}


#: consumer settings that vinestream sets itself, with what sets them: a ``[kafka_options]`` entry may not
#: change them (``enable_auto_commit`` above all: offsets are committed with the checkpoints)
OWNED_CONSUMER_OPTIONS = {
    "bootstrap_servers": "--bootstrap-servers", "group_id": "--group", "auto_offset_reset": "--auto-offset-reset",
    "enable_auto_commit": "nothing: offsets are committed with the checkpoints", "max_poll_records":
    "--max-poll-records", "session_timeout_ms": "--session-timeout-ms", "max_poll_interval_ms":
    "--max-poll-interval-ms", "key_deserializer": "the worker", "value_deserializer": "the worker",
    **{key: "--" + key.replace("_", "-") for key in (
        "security_protocol", "sasl_mechanism", "sasl_plain_username", "sasl_plain_password", "ssl_cafile",
        "ssl_certfile", "ssl_keyfile", "ssl_password", "ssl_check_hostname")},
}


def check_consumer_options(options: dict, where: str) -> None:
    """Raise ``ValueError`` (a usage error: one line on the command line) for an extra consumer option that
    kafka-python does not know, one vinestream sets itself (:data:`OWNED_CONSUMER_OPTIONS`), or a value whose
    type differs from the option's default (a number given as text would otherwise fail inside kafka-python
    when the worker connects)."""
    known = KafkaConsumer.DEFAULT_CONFIG
    for key, value in (options or {}).items():
        if key in OWNED_CONSUMER_OPTIONS:
            raise ValueError(f"{where} {key}: vinestream sets it ({OWNED_CONSUMER_OPTIONS[key]}); remove it")
        if key not in known:
            close = difflib.get_close_matches(key, list(known), n=1)
            raise ValueError(f"{where} {key}: not a kafka-python consumer option"
                             + (f" (did you mean {close[0]}?)" if close else ""))
        default = known[key]
        kinds = {bool: (bool,), int: (int,), float: (int, float), str: (str,)}.get(type(default))
        if kinds and (not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds)):
            raise ValueError(f"{where} {key}={value!r}: expected {_KIND_WORDS[type(default)]} (its default is "
                             f"{default!r})")


_KIND_WORDS = {bool: "true or false", int: "an integer", float: "a number", str: "text"}


# -- retry with backoff -----------------------------------------------------------------

class Backoff:
    """Exponential backoff with a cap; ``wait`` returns False when ``stop`` is set meanwhile."""

    def __init__(self, first: float = 0.1, cap: float = 30.0, stop: threading.Event | None = None):
        self.first, self.cap, self.stop = first, cap, stop
        self.delay = first
        self.attempts = 0

    def wait(self) -> bool:
        self.attempts += 1
        delay, self.delay = self.delay, min(self.delay * 2, self.cap)
        if self.stop is not None:
            return not self.stop.wait(delay)
        time.sleep(delay)
        return True

    def reset(self) -> None:
        self.delay, self.attempts = self.first, 0


def retrying(what: str, fn: Callable, *, stop: threading.Event | None = None, retry_on=(KafkaError, OSError),
             cap: float = 30.0, attempts: int | None = None, within: float | None = None):
    """Call ``fn`` until it succeeds, sleeping with exponential backoff and logging each failure.

    Gives up (re-raising the last error) only when ``stop`` is set, after ``attempts`` tries or once
    ``within`` seconds have passed; a broker that is down is otherwise waited for (the worker's case; a
    one-shot command such as ``produce`` gives a time).
    """
    backoff = Backoff(cap=cap, stop=stop)
    deadline = None if within is None else time.monotonic() + within
    while True:
        try:
            return fn()
        except retry_on as exc:
            if attempts is not None and backoff.attempts + 1 >= attempts:
                raise
            if deadline is not None and time.monotonic() + backoff.delay > deadline:
                raise
            if stop is not None and stop.is_set():        # stopping: no "retrying" to announce
                raise
            log.warning("%s failed (%s); retrying in %.1fs", what, error_text(exc), backoff.delay)
            if not backoff.wait():
                raise


def _interruptible(fn: Callable, stop: threading.Event):
    """``fn()`` in a helper thread, given up (left to finish alone) as soon as ``stop`` is set.

    Creating a client bootstraps against the brokers and can take many seconds when they
    are down; a SIGTERM meanwhile must end the worker at once, not after that.
    """
    box: dict = {}

    def body():
        try:
            box["value"] = fn()
        except BaseException as exc:      # handed to the caller below
            box["error"] = exc
    thread = threading.Thread(target=body, name="vinestream-connect", daemon=True)
    thread.start()
    while thread.is_alive():
        if stop.wait(0.1):
            raise KafkaConnectionError("stopped while connecting")
    if "error" in box:
        raise box["error"]
    return box["value"]


# -- reaching the brokers ----------------------------------------------------------------

class BrokersUnreachable(Exception):
    """No bootstrap server could be reached within the time a run that should finish gives them
    (``KafkaSource(connect_within=...)``): its text is the one line the command line prints."""


def bootstrap_addresses(servers) -> list[tuple[str, int]]:
    """``[(host, port), ...]`` of ``HOST:PORT[,HOST:PORT...]`` (or a list of them); a server without a port is on
    9092, as kafka-python takes it."""
    items = str(servers).split(",") if isinstance(servers, str) else [str(s) for s in servers]
    out = []
    for item in (i.strip() for i in items):
        if not item:
            continue
        host, sep, port = item.rpartition(":")
        if not sep or not port.isdigit():
            host, port = item, "9092"
        out.append((host.strip("[]"), int(port)))
    return out


def unreachable_reason(host: str, port: int, timeout: float) -> str | None:
    """Why no TCP connection to ``host:port`` can be made now, in a few words (``connection refused``); None when
    one can.  Nothing is sent: a connection is opened and closed."""
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return None
    except ConnectionRefusedError:
        return "connection refused"
    except socket.gaierror as exc:
        return f"host not found ({(exc.strerror or str(exc)).lower()})"
    except TimeoutError:
        return f"no answer within {timeout:g} s"
    except OSError as exc:
        text = exc.strerror or error_text(exc)
        return text[:1].lower() + text[1:]


def _close_half_made(client) -> None:
    """Stop what a kafka-python client whose ``__init__`` raised had started: 3.0.12 starts its IO thread before it
    bootstraps, and a bootstrap that times out raises out of ``__init__`` with that thread left running (one thread
    more for every failed attempt, for as long as the process lives)."""
    inner = getattr(client, "_client", None)
    if inner is not None:
        try:
            inner.close()
        except Exception as exc:        # a half-made client: whatever it has, closed as far as it goes
            log.debug("closing a client that failed to start: %s", error_text(exc))


# -- the source -------------------------------------------------------------------------

class _Rebalance(AsyncConsumerRebalanceListener):
    """Runs on kafka-python's IO thread: commit what is done before partitions move.

    ``on_revoke(revoked) -> {TopicPartition: offset}`` is the worker's callback: it
    finishes the batch in hand and returns the offsets that are now durable; they
    are committed (awaited, without blocking the IO loop) before the partitions go.
    """

    def __init__(self, source: KafkaSource):
        self.source = source

    async def on_partitions_revoked(self, revoked):
        src = self.source
        offsets = {}
        if src.on_revoke is not None:
            try:
                offsets = src.on_revoke(set(revoked)) or {}
            except Exception:
                log.exception("on_revoke callback failed; partitions %s go without a final commit", revoked)
        if offsets and src.commit_abandoned:
            # closing after a final commit that could not reach the brokers (said once, in commit): not again
            log.debug("not committing %s at close: the final commit could not be made", _fmt(offsets))
        elif offsets:
            try:
                await src.consumer.commit_async(src._offset_map(offsets))
                src.last_commit = time.time()
                log.info("committed %s before giving up %d partition(s)", _fmt(offsets), len(revoked))
            except Exception as exc:
                log.warning("commit on revocation failed (%s); the next owner re-reads from the last "
                            "commit (at-least-once)", exc)
        for tp in revoked:
            # what was released (so applied, and committed above): a partition this worker keeps resumes there.
            # kafka-python keeps a kept partition's fetch position, which is past the events the merge held
            # and drops here: they were lost, and until_end saw the partition at its end (the run stopped early)
            released = src.merge.position((tp.topic, tp.partition))
            if released is not None:
                src._revoked_at[tp] = released
            src.merge.drop((tp.topic, tp.partition))
            src._merge_paused.discard(tp)

    async def on_partitions_assigned(self, assigned):
        src = self.source
        # a partition new to this worker resumes at its group commit, in the middle of a message if that is where
        # the last owner stopped: the commit's metadata says where (commit_metadata)
        fresh = {tp for tp in assigned if tp not in src.restore_offsets and tp not in src._revoked_at}
        commits = await src._committed_positions(fresh) if fresh else {}
        for tp in assigned:
            pos = src.restore_offsets.pop(tp, None)
            if pos is not None:
                log.info("resuming %s at checkpoint position %s", tp, pos)
            else:
                pos = src._revoked_at.get(tp) or commits.get(tp)
            if pos is not None:
                src.consumer.seek(tp, pos.offset)
            src.merge.start((tp.topic, tp.partition), pos)
        src._revoked_at.clear()      # a partition that went to another member resumes from its commit there
        if src.on_assign is not None:
            src.on_assign(set(assigned))

    async def on_partitions_lost(self, lost):
        log.warning("consumer lost partitions %s (evicted from the group); not committing", lost)
        for tp in lost:
            self.source.merge.drop((tp.topic, tp.partition))
            self.source._merge_paused.discard(tp)


class _LeaderRange(RangePartitionAssignor):
    """kafka-python's range assignor, but a leader without metadata for a topic that a member subscribes to asks
    the brokers for it before assigning, as the Java client does (``ensureFreshMetadata`` in
    ``performAssignment``).

    kafka-python's leader assigns with the metadata it has, which covers its own topics only: a member of the group
    subscribed to other topics got no partition ("No partition metadata for topic ..."). kafka-python then sees the
    metadata change and joins again; Apache Kafka answers a leader's join with a new rebalance, but Tansu 0.6 keeps
    the generation, so that member stayed without partitions until the group changed again.  Same name as the
    range assignor: members of other versions and clients agree on it.
    """

    def __init__(self, topic_partitions: Callable):
        self.topic_partitions = topic_partitions       # {topic: {partition, ...}} of the cluster's topics

    def assign(self, cluster, members):
        wanted = {topic for member in members for topic in member.metadata.topics}
        missing = {topic for topic in wanted if cluster.partitions_for_topic(topic) is None}
        if missing:
            try:
                found = self.topic_partitions()
            except Exception as exc:    # assign with what there is (kafka-python's own way); its re-join follows
                log.warning("metadata for topic(s) %s of other group members: %s", ", ".join(sorted(missing)),
                            error_text(exc))
                found = {}
            cluster = _WithPartitions(cluster, {t: found[t] for t in missing if found.get(t)})
        return super().assign(cluster, members)


class _WithPartitions:
    """A cluster view with partitions of topics the client had no metadata for (all an assignor asks of it)."""

    def __init__(self, cluster, extra: dict):
        self.cluster, self.extra = cluster, extra

    def partitions_for_topic(self, topic):
        found = self.cluster.partitions_for_topic(topic)
        return found if found is not None else self.extra.get(topic)


def _unpack_frame(exc: BaseException):
    """The frame of kafka-python's ``_unpack_records`` that ``exc`` was raised in, or None."""
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_name == "_unpack_records":
            return tb.tb_frame
        tb = tb.tb_next
    return None


def _raised_reading_records(exc: BaseException) -> bool:
    """Whether ``exc`` was raised while kafka-python unpacked a partition's records (a CRC check or decompression:
    the record is at fault, not the connection)."""
    return isinstance(exc, (CorruptRecordError, UnsupportedCodecError)) or _unpack_frame(exc) is not None


def _unreadable_range(exc: BaseException, offset: int) -> tuple[int, int]:
    """``[first, after)``: the offsets of the record batch that ``exc`` was raised reading, from ``offset`` (a
    fetch may start inside a batch) to its end, from its header (base offset + last offset delta: both outside
    the CRC'd and compressed part, so readable where the records are not).  kafka-python keeps that batch only
    in its ``_unpack_records`` generator's frame; a batch of the old message format, or none found, is the one
    record at ``offset``."""
    frame = _unpack_frame(exc)
    batch = frame.f_locals.get("batch") if frame is not None else None
    delta = getattr(batch, "last_offset_delta", None)
    if isinstance(delta, int) and delta >= 0:
        after = int(batch.base_offset) + delta + 1
        if after > offset:
            return max(offset, int(batch.base_offset)), after
    return offset, offset + 1


def _fmt(offsets: dict) -> str:
    """``topic[partition]@offset, ...`` for logs.  Keys are ``(topic, partition)`` pairs (what the application
    hands to ``commit`` and ``on_revoke`` returns) or TopicPartitions (a named pair); values offsets or
    MergePositions.  Only reached on the way out of a failure, so it must never raise itself."""
    return ", ".join(f"{topic}[{partition}]@{position_offset(off)}"
                     for (topic, partition), off in sorted(offsets.items(), key=lambda kv: tuple(kv[0])))


#: the commit metadata's tag and version: metadata other tools wrote (or none) is not read as a position
_COMMIT_TAG = "vinestream-merge/1"
_INT64 = (-(1 << 63), (1 << 63) - 1)


def commit_metadata(position) -> str:
    """The metadata string committed with a position's offset: the rest of the :class:`MergePosition` (events of
    the message at that offset already released, the partition's running maximum ``ts``).  A partition that moves
    to another member resumes from its commit alone; with the offset alone the new owner applied that message's
    released events again, and keyed the partition's next events by their own ``ts`` instead of the running
    maximum (another merge order than a restart from a checkpoint gives)."""
    pos = as_position(position)
    return json.dumps({"v": _COMMIT_TAG, "offset": pos.offset, "skip": pos.skip, "max_ts": pos.max_ts},
                      separators=(",", ":"))


def committed_position(offset: int, metadata) -> MergePosition:
    """The position a commit of ``offset`` with ``metadata`` resumes at: :func:`commit_metadata`'s skip and
    running maximum where the metadata is ours and names this offset (a reset by another tool moves the offset and
    keeps or clears the metadata: it then says nothing about the new offset), else the offset alone.  Never raises:
    the metadata is whatever the group's commits hold."""
    try:
        meta = json.loads(metadata) if metadata else None
    except (TypeError, ValueError, RecursionError):
        meta = None
    if not isinstance(meta, dict) or meta.get("v") != _COMMIT_TAG:
        return MergePosition(int(offset))
    fields = [meta.get(k) for k in ("offset", "skip", "max_ts")]
    if not all(type(f) is int and _INT64[0] <= f <= _INT64[1] for f in fields) or fields[0] != offset \
            or fields[1] < 0:
        log.warning("commit metadata %.200r does not describe offset %d; resuming at the offset", metadata, offset)
        return MergePosition(int(offset))
    return MergePosition(*fields)


class MissingTopics(ValueError):
    """Topics to consume that the brokers do not have, or a pattern that matches none of theirs (a user's mistake:
    one line, nonzero exit)."""


def _missing_topics_text(missing: list, existing) -> str:
    """``topic 'x' does not exist on the brokers (did you mean 'y'?)``, for one or several."""
    names = sorted(t for t in existing if not t.startswith("__"))        # internal topics are no one's typo
    hints = []
    for topic in missing:
        close = difflib.get_close_matches(topic, names, n=1)
        hints.append(f" (did you mean {close[0]!r}?)" if close else "")
    if len(missing) == 1:
        return f"topic {missing[0]!r} does not exist on the brokers{hints[0]}"
    return f"topics {', '.join(f'{t!r}{h}' for t, h in zip(missing, hints))} do not exist on the brokers"


def _unmatched_pattern_text(pattern: str, existing) -> str:
    """``no topic on the brokers matches the pattern 'x'``, with the topics it would match anywhere in their name:
    kafka-python matches a pattern from the start of a name (``re.match``), as Kafka's own clients do."""
    regex = re.compile(pattern)
    inside = sorted(t for t in existing if not t.startswith("__") and regex.search(t))
    hint = ""
    if inside:
        more = f" and {len(inside) - 3} more" if len(inside) > 3 else ""
        hint = (f" (it must match from the start of a name; {', '.join(map(repr, inside[:3]))}{more} "
                f"contain{'s' if len(inside) == 1 else ''} a match: try {'.*' + pattern!r})")
    return f"no topic on the brokers matches the pattern {pattern!r}{hint}"


class KafkaSource:
    """A consumer-group member: decoded polls, manual commits, pause/resume, lag (a source: connectors/base.py).

    ``formats`` maps topic -> json|csv|arrow (``default_format`` for the rest,
    e.g. topics matched by a pattern).  ``consumer_options`` pass straight to
    ``KafkaConsumer`` (security: ``security_protocol``, ``sasl_*``, ``ssl_*``;
    tuning: ``max_partition_fetch_bytes``...).

    Every poll decodes each partition's messages (``max_payload_bytes`` and
    ``max_nesting`` bound what one message may be), fills a missing ``ts`` with the
    record timestamp, and hands them to the event-time merge
    (:mod:`~vinestream.connectors.partition_merge`); ``poll`` returns what the merge
    releases, with each partition's :class:`MergePosition`.  A partition holding more
    than ``max_buffered_events`` unreleased events is paused until the others catch up.
    """

    def __init__(self, bootstrap_servers: str | list[str], *, group_id: str, topics: Iterable[str] = (),
                 pattern: str | None = None, formats: dict | None = None, default_format: str = "json",
                 auto_offset_reset: str = "earliest", decoder: Callable | None = None,
                 on_revoke: Callable | None = None, on_assign: Callable | None = None,
                 consumer_options: dict | None = None, stop: threading.Event | None = None,
                 connect: bool = True, max_payload_bytes: int = DEFAULT_MAX_PAYLOAD_BYTES,
                 max_nesting: int = DEFAULT_MAX_NESTING, max_buffered_events: int = 1_000_000,
                 missing_topics: str = "wait", connect_within: float | None = None):
        self.topics = [t for t in topics if t]
        if missing_topics not in ("wait", "error"):
            raise ValueError(f"missing_topics must be wait or error, not {missing_topics!r}")
        self.missing_topics = missing_topics
        #: seconds the brokers may stay out of reach when connecting before :class:`BrokersUnreachable` (a run that
        #: should finish); None: waited for as long as it takes (a long-lived worker), said once (connect)
        self.connect_within = connect_within
        self._connect_deadline: float | None = None
        self.pattern = pattern
        self.commits = True            # offsets are committed to the group once the batch is durable
        self.pausable = True           # paused partitions keep the group membership alive while polling
        self.whole_batches = False     # polls are gathered into batches by the loop
        self.bounded_polls = True      # poll(max_events=N) returns at most N events (the loop's --batch-size)
        self._held = False             # the last poll left events the merge could release
        if not self.topics and not pattern:
            raise ValueError("KafkaSource needs topics or a pattern")
        if pattern:
            try:
                re.compile(pattern)
            except (re.error, TypeError) as exc:     # kafka-python's subscribe would raise it, after connecting
                raise ValueError(f"topic pattern {pattern!r} is not a regular expression ({exc})") from None
        self.formats = dict(formats or {})
        self.default_format = default_format
        for fmt in [default_format, *self.formats.values()]:
            if fmt not in FORMATS:
                raise ValueError(f"unknown payload format {fmt!r}; choose one of {', '.join(FORMATS)}")
        self.decode = decoder or decode
        self.on_revoke = on_revoke
        self.on_assign = on_assign
        self.stop = stop or threading.Event()
        self.restore_offsets: dict = {}          # tp -> MergePosition, applied once on assignment (checkpoints)
        self._revoked_at: dict = {}              # tp -> MergePosition released when revoked (rebalances)
        self.merge = PartitionMerge()
        self.max_payload_bytes, self.max_nesting = max_payload_bytes, max_nesting
        self.max_buffered_events = max_buffered_events
        self._paused = False                     # the application's backpressure
        self._merge_paused: set = set()          # partitions far ahead of the merge
        self.last_commit: float | None = None
        #: whether the brokers give commit metadata back (None: not known before this worker's first commit).
        #: Apache Kafka does; Tansu 0.6 does not, and a rebalance then finishes the messages it is in the middle
        #: of before their partitions go (finish_messages)
        self.commit_metadata_kept: bool | None = None
        #: the final commit of a stop could not reach the brokers (commit): the consumer closes without trying again
        self.commit_abandoned = False
        self._said_commits_unread = False         # _committed_positions could not read commits (said once)
        self._commit_thread: threading.Thread | None = None    # the last commit's (commit: a stop leaves it)
        self._config = {"bootstrap_servers": bootstrap_servers, "group_id": group_id,
                            "auto_offset_reset": auto_offset_reset, "enable_auto_commit": False,
                            "max_partition_fetch_bytes": 16 * 1024 * 1024, "fetch_max_bytes": 64 * 1024 * 1024}
        if "allow_auto_create_topics" in KafkaConsumer.DEFAULT_CONFIG:
            # a consumer never creates what it reads (Apache Kafka honours this; Tansu 0.6 creates topics anyway,
            # hence the check in connect)
            self._config["allow_auto_create_topics"] = False
        self._config.update(security_options(consumer_options))
        self._config.setdefault("partition_assignment_strategy",
                                (_LeaderRange(self._topic_partitions), RoundRobinPartitionAssignor))
        self.consumer: KafkaConsumer | None = None
        if connect:
            self.connect()

    # -- connection --------------------------------------------------------------------
    def open(self) -> bool:
        """Connect unless connected; False when a stop was requested before the brokers answered."""
        if self.consumer is None:
            try:
                self.connect()
            except (KafkaError, OSError):
                if self.stop.is_set():
                    return False
                raise
        return True

    def connect(self) -> KafkaConsumer:
        """Create the consumer and subscribe, waiting while the brokers are unreachable (:meth:`_reach_brokers`)."""
        if not crc32c_accelerated():
            log.warning("the crc32c package is missing: kafka-python checks CRCs in pure Python (~25x slower)")
        self.consumer = self._reach_brokers()
        try:
            self._await_topics()
        except BaseException:
            self.close()
            raise
        listener = _Rebalance(self)
        if self.pattern:
            self.consumer.subscribe(pattern=self.pattern, listener=listener)
        else:
            self.consumer.subscribe(topics=self.topics, listener=listener)
        return self.consumer

    def _reach_brokers(self) -> KafkaConsumer:
        """A consumer bootstrapped from the brokers, once they can be reached.

        While no bootstrap server accepts a TCP connection, kafka-python is not asked to try: it logged two or
        three lines (``ERROR kafka.net.manager: Connection failed ... ECONNREFUSED``, ``WARNING ... not ready;
        waiting``) for each of its attempts, about one a second, and none of them said the worker was waiting.
        The servers are tried here instead, with backoff (at most 5 s apart), and the state is said in vinestream's
        own lines: a long-lived worker (``connect_within`` None) says once that it is waiting and why, and again
        when the brokers answer; a run that should finish waits ``connect_within`` seconds, then raises
        :class:`BrokersUnreachable` (the command line's one line).  A server that accepts connections but where
        kafka-python cannot bootstrap (not a Kafka broker, a TLS mismatch) counts as unreachable too.  Through a
        proxy (``proxy_url``) the servers cannot be tried directly: kafka-python's attempts decide alone.
        """
        servers = bootstrap_addresses(self._config["bootstrap_servers"])
        shown = ",".join(f"{host}:{port}" for host, port in servers)
        start = time.monotonic()
        self._connect_deadline = None if self.connect_within is None else start + self.connect_within
        backoff, said = Backoff(first=0.25, cap=5.0), False
        while True:
            left = None if self._connect_deadline is None else max(0.0, self._connect_deadline - time.monotonic())
            reason = self._why_unreachable(servers, left)
            if reason is None:
                try:
                    consumer = _interruptible(functools.partial(self._new_consumer, within=left), self.stop)
                except (KafkaError, OSError) as exc:
                    if self.stop.is_set():
                        raise
                    reason = f"connected, but the consumer could not bootstrap: {error_text(exc)}"
                else:
                    if said:        # at the level the wait was said at: a log read at WARNING sees both
                        log.log(logging.WARNING if self._connect_deadline is None else logging.INFO,
                                "the brokers at %s answer now (after %.0f s): connected", shown,
                                time.monotonic() - start)
                    return consumer
            if self._connect_deadline is not None and time.monotonic() >= self._connect_deadline:
                raise BrokersUnreachable(f"cannot reach Kafka at {shown} ({reason}) within {self.connect_within:g} s;"
                                         " check --bootstrap-servers")
            if not said:
                if self._connect_deadline is None:
                    log.warning("waiting for the brokers at %s: %s (trying again until they answer)", shown, reason)
                else:
                    log.info("waiting up to %g s for the brokers at %s: %s", self.connect_within, shown, reason)
                said = True
            delay, backoff.delay = backoff.delay, min(backoff.delay * 2, backoff.cap)
            if self._connect_deadline is not None:
                delay = min(delay, max(0.0, self._connect_deadline - time.monotonic()))
            if self.stop.wait(delay):
                raise KafkaConnectionError("stopped while connecting")

    def _why_unreachable(self, servers: list, within: float | None) -> str | None:
        """None when a bootstrap server accepts connections (or a proxy stands between), else why none does."""
        if self._config.get("proxy_url") or self._config.get("socks5_proxy"):
            return None
        timeout = 5.0 if within is None else min(5.0, max(0.5, within))
        reasons = []
        for host, port in servers:
            reason = unreachable_reason(host, port, timeout)
            if reason is None:
                return None
            reasons.append(reason if len(servers) == 1 else f"{host}:{port}: {reason}")
        return "; ".join(reasons)

    def _await_topics(self) -> None:
        """Subscribe only to topics that exist: a subscription asks for the topics' metadata, and brokers that
        create topics on demand (Tansu always, Apache Kafka with ``auto.create.topics.enable``) then create a
        misspelt topic, empty, and ``--until-end`` stopped at once having read nothing.  The topics are looked
        up in the list of all topics, which creates none.  ``missing_topics="error"``: :class:`MissingTopics`;
        ``"wait"`` (a long-lived worker, started before its topics are created): a warning, then a look every
        few seconds until they exist (or a stop).

        A pattern likewise: one that matches no topic consumed nothing, with no word (``--until-end`` stopped at
        once; a worker waited for kafka-python's next metadata refresh, five minutes by default, to see a topic
        created meanwhile).  It is matched here as kafka-python matches it (``re.match``, internal topics left
        out: ``KafkaConsumer.topics`` lists none)."""
        backoff, warned = Backoff(first=1.0, cap=10.0, stop=self.stop), False
        regex = re.compile(self.pattern) if self.pattern else None
        while True:
            left = None if self._connect_deadline is None else max(0.0, self._connect_deadline - time.monotonic())
            existing = retrying("listing topics", self.consumer.topics, stop=self.stop, within=left)
            if regex is not None:
                matched = sorted(t for t in existing if regex.match(t))
                if matched:
                    if warned:
                        log.info("%d topic(s) match the pattern %r now (%s): subscribing", len(matched),
                                 self.pattern, ", ".join(matched[:5]) + (", ..." if len(matched) > 5 else ""))
                    return
                what = _unmatched_pattern_text(self.pattern, existing)
                todo = "create a topic it matches first (vinestream produce --partitions N does) or correct it"
            else:
                missing = [t for t in self.topics if t not in existing]
                if not missing:
                    if warned:
                        log.info("topic(s) %s exist now: subscribing", ", ".join(self.topics))
                    return
                what = _missing_topics_text(missing, existing)
                it = "it" if len(missing) == 1 else "them"
                todo = f"create {it} first (vinestream produce --partitions N does) or correct the topic name"
            if self.missing_topics == "error":
                raise MissingTopics(f"{what}; {todo}")
            if not warned:
                if regex is not None:
                    log.warning("%s (yet); waiting for one to be created", what)
                else:
                    log.warning("%s (yet); waiting for %s to be created (subscribing would create %s, empty, on "
                                "brokers that create topics on demand)", what, it, it)
                warned = True
            if not backoff.wait():
                raise KafkaConnectionError("stopped while waiting for the topics")

    def _new_consumer(self, within: float | None = None) -> KafkaConsumer:
        """A KafkaConsumer, bootstrapped (kafka-python does it in ``__init__``) within ``within`` seconds if given."""
        config = dict(self._config)
        if within is not None and "bootstrap_timeout_ms" in KafkaConsumer.DEFAULT_CONFIG:
            own = config.get("bootstrap_timeout_ms", KafkaConsumer.DEFAULT_CONFIG["bootstrap_timeout_ms"])
            config["bootstrap_timeout_ms"] = max(1000, min(int(within * 1000), own))
        consumer = KafkaConsumer.__new__(KafkaConsumer)     # kept where __init__ fails: _close_half_made
        try:
            consumer.__init__(**config)
        except KafkaConfigurationError as exc:
            _close_half_made(consumer)
            # settings kafka-python refuses never work: an error for the user, not an outage to wait out
            raise ValueError(f"kafka-python refuses the consumer settings: {exc}") from None
        except BaseException:
            _close_half_made(consumer)
            raise
        return consumer

    def _topic_partitions(self) -> dict:
        """{topic: {partition, ...}} of every topic on the brokers, by a client of its own: the group leader's
        assignor asks from kafka-python's IO thread, where the consumer's own requests cannot be waited for.
        Metadata of all topics, not of the ones named: naming a topic that does not exist creates it on brokers
        that create topics on a metadata request (Tansu does, whatever the request says)."""
        from kafka import KafkaAdminClient
        keys = set(KafkaAdminClient.DEFAULT_CONFIG) & (set(SECURITY_KEYS) | {"bootstrap_servers", "client_id",
                                                                                "request_timeout_ms", "api_version"})
        admin = KafkaAdminClient(**{k: v for k, v in self._config.items() if k in keys})
        try:
            return {t["name"]: {p["partition_index"] for p in t["partitions"]}
                    for t in admin.describe_topics() if not t.get("error_code")}
        finally:
            admin.close()

    def close(self) -> None:
        if self.consumer is not None:
            # bounded even with the broker gone (leaving the group); briefly once a final commit could not reach it
            timeout_ms = 1000 if self.commit_abandoned else 5000
            try:
                self.consumer.close(autocommit=False, timeout_ms=timeout_ms)
            except TypeError:
                self.consumer.close()
            except Exception as exc:
                log.warning("closing the consumer: %s", exc)
            self.consumer = None

    def format_of(self, topic: str) -> str:
        return self.formats.get(topic, self.default_format)

    # -- consuming ---------------------------------------------------------------------
    def _decode(self, tp, msgs) -> tuple:
        payloads = [m.value for m in msgs]
        offsets = np.fromiter((m.offset for m in msgs), dtype=np.int64, count=len(msgs))
        decoded = self.decode(payloads, self.format_of(tp.topic), source=tp.topic, partition=tp.partition,
                              positions=offsets, max_payload_bytes=self.max_payload_bytes,
                              max_nesting=self.max_nesting)
        events, event_offsets = decoded.events, decoded.positions
        ts = events.column("ts")
        if events.num_rows and ts.null_count:
            # DESIGN.md: an event without ts takes its record's timestamp (the merge orders by ts)
            stamps = np.fromiter((m.timestamp if m.timestamp is not None else -1 for m in msgs), np.int64,
                                 count=len(msgs))
            record_ts = stamps[np.searchsorted(offsets, event_offsets)]
            if isinstance(events, DeviceEvents):          # decoded on the GPU (stream/events/cudf_decode.py)
                events = events.with_ts_filled(record_ts)
            else:
                filled = pc.fill_null(ts, pa.array(record_ts, pa.int64()).cast(pa.timestamp("ms")))
                events = events.set_column(events.schema.get_field_index("ts"), "ts", filled)
        nbytes = sum(len(p) for p in payloads if p is not None)
        return events, event_offsets, decoded.dead, int(offsets[0]), int(offsets[-1]) + 1, nbytes

    def poll(self, max_records: int | None = None, timeout: float = 1.0, max_events: int | None = None) -> Polled:
        """One poll: decode each partition's messages, merge by event time, return what is released.

        ``max_events``: release at most that many events (the first ones in merge order, a message cut where
        it must be: the positions say how many of its events went).  The rest stays in the merge and the next
        poll releases it without waiting for records.
        """
        if not self.open():
            return Polled.nothing()
        if self._held and max_events != 0:
            timeout = 0.0                 # events are ready in the merge: fetch what has come, do not wait
        try:
            records = self.consumer.poll(timeout_ms=int(timeout * 1000), max_records=max_records)
        except CommitFailedError:
            raise
        except InvalidSessionTimeoutError:
            # the group coordinator refuses the session timeout: every retry would be refused the same way
            raise ValueError(f"the broker refuses the consumer group session timeout of "
                             f"{self.consumer.config.get('session_timeout_ms')} ms (InvalidSessionTimeoutError): "
                             "choose one within its group.min.session.timeout.ms and group.max.session.timeout.ms"
                             ) from None
        except Exception as exc:
            records = {}
            if not self._skip_unreadable(exc):
                if not isinstance(exc, KafkaError):
                    raise
                # broker gone mid-poll: log, back off a little, return nothing
                log.warning("poll failed (%s); retrying", error_text(exc))
                self.stop.wait(min(timeout, 1.0))
        t0 = time.perf_counter()
        messages = nbytes = 0
        for tp, msgs in records.items():
            if not msgs:
                continue
            events, event_offsets, dead, first, after, size = self._decode(tp, msgs)
            self.merge.add((tp.topic, tp.partition), events, event_offsets, dead, first, after)
            messages += len(msgs)
            nbytes += size
        idle = self._idle()
        released = self.merge.release(idle, max_events=max_events)
        self._held = max_events is not None and self.merge.releasable(idle)
        self._bound_buffers()
        return Polled(events=released.events, dead=released.dead, next_positions=released.positions,
                      messages=messages, payload_bytes=nbytes, decode_seconds=time.perf_counter() - t0,
                      late=released.late)

    def _skip_unreadable(self, exc: Exception) -> bool:
        """A record that kafka-python cannot read - its batch fails the CRC check, or is compressed with a codec
        whose library is missing or with bytes that do not decompress - becomes a ``malformed`` dead letter at its
        offset, and its partition goes on after it (as Kafka's own client says: "seek past the record to continue
        consumption").  kafka-python raises such an error once; its record iterator is then spent but kept, and
        the next poll looped inside kafka-python for ever (3.0.12), so one such message stopped the worker for
        good, SIGTERM included.  The whole batch is skipped at once (its offset range is in its header): one dead
        letter per record, one warning per batch (skipping a record at a time took a fetch and a warning per
        record, as a fetch from the next offset returns the same batch).  False, touching nothing, when ``exc``
        did not come from reading records (the broker went away, say)."""
        fetcher = getattr(self.consumer, "_fetcher", None)
        part = getattr(fetcher, "_next_partition_records", None)
        if not part or not _raised_reading_records(exc):
            return False
        tp, offset = part.topic_partition, int(part.next_fetch_offset)
        part.drain()
        fetcher._next_partition_records = None
        if tp not in self.assignment():
            return True
        first, after = _unreadable_range(exc, offset)
        self.consumer.seek(tp, after)
        detail = f"Kafka record batch cannot be read: {error_text(exc)}"
        n = after - first
        log.warning("%s[%d]@%d..%d: %s; %d dead letter%s, continuing after it", tp.topic, tp.partition, first,
                    after - 1, detail, n, "" if n == 1 else "s")
        dead = dead_letters(source=tp.topic, partition=tp.partition, positions=np.arange(first, after, dtype=np.int64),
                            reasons=pa.repeat(pa.scalar("malformed"), n), details=pa.repeat(pa.scalar(detail), n),
                            payloads=pa.nulls(n, pa.string()))
        self.merge.add((tp.topic, tp.partition), EVENT_SCHEMA.empty_table(), np.zeros(0, np.int64), dead, offset,
                       after)
        return True

    def _idle(self) -> dict:
        """{(topic, partition): read up to its high watermark} for the assigned partitions."""
        out = {}
        for tp in self.assignment():
            key = (tp.topic, tp.partition)
            try:
                hw = self.consumer.highwater(tp)
            except KafkaError:
                hw = None
            pos = self.merge.fetched(key)
            if pos is None and hw is not None:
                pos = self.position(tp)
            out[key] = hw is not None and pos is not None and pos >= hw
        return out

    def _bound_buffers(self) -> None:
        """Pause partitions whose unreleased events pile up (the merge waits for the others)."""
        limit = self.max_buffered_events
        for tp in self.assignment():
            n = self.merge.buffered((tp.topic, tp.partition))
            if n > limit and tp not in self._merge_paused:
                self._merge_paused.add(tp)
            elif n <= limit // 2 and tp in self._merge_paused:
                self._merge_paused.discard(tp)
        self._apply_pauses()

    def _apply_pauses(self) -> None:
        parts = self.assignment()
        want = parts if self._paused else (self._merge_paused & parts)
        now = set(self.consumer.paused())
        if want - now:
            self.consumer.pause(*(want - now))
        if now - want:
            self.consumer.resume(*(now - want))

    def _offset_map(self, offsets: dict) -> dict:
        return {TopicPartition(*tp): OffsetAndMetadata(position_offset(off), commit_metadata(off), -1)
                for tp, off in offsets.items()}

    async def _committed_positions(self, partitions) -> dict:
        """{tp: MergePosition} of the group's commits of ``partitions`` (those with one), on kafka-python's IO
        thread (the rebalance listener's).  Failing that, {}: the partitions then resume at the commit's offset,
        as kafka-python finds it (at-least-once within a message).

        kafka-python's private coordinator coroutine, because its public API cannot be used here (3.0.12, read in
        its source and tested: tests/test_kafka_rebalance.py): ``KafkaConsumer.committed(tp, metadata=True)``
        blocks on the IO loop (``net.run``), and the listener runs on that loop's thread, where kafka-python
        refuses it (``RuntimeError: Cannot block on net.run() from the IO thread itself``); it has no public
        asynchronous variant, and reading the commits afterwards, on the caller's thread, races kafka-python's own
        positioning and fetching of the partitions.  Guarded: where the coroutine is missing or changed, a warning
        (once) and the offsets alone, never a failed rebalance."""
        fetch = getattr(getattr(self.consumer, "_coordinator", None), "fetch_committed_offsets_async", None)
        if fetch is None or not inspect.iscoroutinefunction(fetch):
            self._commits_unread("this kafka-python cannot read commits in a rebalance")
            return {}
        try:
            found = await fetch(set(partitions), timeout_ms=self._config.get("request_timeout_ms", 30_000))
            return {tp: committed_position(c.offset, c.metadata) for tp, c in (found or {}).items()
                    if c is not None and c.offset is not None and c.offset >= 0}
        except Exception as exc:       # a broker's error, or another shape of answer from another kafka-python
            self._commits_unread(f"reading the commits of {len(partitions)} partition(s) failed "
                                 f"({error_text(exc)})", once=False)
            return {}

    def _commits_unread(self, why: str, once: bool = True) -> None:
        if once and self._said_commits_unread:
            return
        self._said_commits_unread = True
        log.warning("%s: a partition that moves to this worker resumes at the start of the message it was left in "
                    "(its events already applied there are applied again)", why)

    def seek(self, positions: dict) -> None:
        """Resume each partition of ``positions`` ({(topic, partition): position}) there once it is assigned."""
        self.restore_offsets.update({TopicPartition(*tp): as_position(pos) for tp, pos in positions.items()})

    def commit(self, offsets: dict) -> bool:
        """Commit ``offsets`` ({(topic, partition): position}: the offset of each); only once they are durable.

        Retries with backoff while the coordinator is unreachable, each try waiting as long as kafka-python's
        request timeout, unless a stop comes meanwhile: the wait ends at once (the final commit follows).  Once
        stopping (``stop`` set: the final commit), one try of at most :data:`STOP_COMMIT_TIMEOUT_S`; one that
        cannot be made is said in one line.  Returns False when the group rebalanced meanwhile (the partitions are
        someone else's: they re-read from the last commit, at-least-once) or at shutdown.
        """
        if not offsets:
            return True
        offset_map = self._offset_map(offsets)
        if self.stop.is_set():
            return self._final_commit(offsets, offset_map)
        try:
            retrying("offset commit", lambda: self._commit_call(offset_map), stop=self.stop,
                     retry_on=RETRIABLE_COMMIT_ERRORS)
        except CommitFailedError as exc:
            log.warning("commit of %s refused (%s): partitions were reassigned", _fmt(offsets), exc)
            return False
        except (KafkaError, OSError) as exc:
            if self.stop.is_set():      # the final commit, bounded, says whether it could be made
                log.debug("commit of %s left at the stop (%s)", _fmt(offsets), error_text(exc))
            else:
                log.warning("commit of %s failed (%s)", _fmt(offsets), error_text(exc))
            return False
        self.last_commit = time.time()
        if self.commit_metadata_kept is None:
            self._check_commit_metadata(offsets)
        return True

    def _commit_call(self, offset_map: dict) -> None:
        """``KafkaConsumer.commit`` (waiting up to kafka-python's request timeout), on a helper thread whose wait a
        stop ends: a SIGTERM that came while the brokers were gone waited out that timeout (30 s by default) before
        the worker could stop.  The thread is kept: the final commit waits for it first (two commits in flight at
        once could land in either order, and the older one last would take the group's commit back)."""
        box: dict = {}

        def body():
            try:
                self.consumer.commit(offset_map)
            except BaseException as exc:      # raised on the caller's thread below
                box["error"] = exc
        thread = threading.Thread(target=body, name="vinestream-commit", daemon=True)
        self._commit_thread = thread
        thread.start()
        while thread.is_alive():
            thread.join(0.05)           # returns as soon as the commit does: no wait added to a commit
            if thread.is_alive() and self.stop.is_set():
                raise KafkaConnectionError("stopped while committing")
        if "error" in box:
            raise box["error"]

    def _final_commit(self, offsets: dict, offset_map: dict) -> bool:
        """The commit of a stopping worker: one try, bounded by :data:`STOP_COMMIT_TIMEOUT_S` together with the wait
        for a commit still in flight; if it cannot be made, one line says what was not committed, and the consumer
        closes without trying again (``commit_abandoned``).  Nothing is lost: what is committed is durable already
        (in the checkpoint, if any), and a restart resumes from the checkpoint or, without one, from the group's
        last commit (at-least-once)."""
        deadline = time.monotonic() + STOP_COMMIT_TIMEOUT_S
        earlier = self._commit_thread
        if earlier is not None and earlier.is_alive():
            earlier.join(STOP_COMMIT_TIMEOUT_S)
        try:
            if earlier is not None and earlier.is_alive():
                raise KafkaTimeoutError("an earlier commit is still waiting for them")
            self.consumer.commit(offset_map, timeout_ms=max(1000, int((deadline - time.monotonic()) * 1000)))
        except CommitFailedError as exc:
            log.warning("commit of %s refused (%s): partitions were reassigned", _fmt(offsets), exc)
            return False
        except (KafkaError, OSError) as exc:
            self.commit_abandoned = True
            why = (f"the brokers did not answer within {STOP_COMMIT_TIMEOUT_S:g} s"
                   if isinstance(exc, KafkaTimeoutError) else error_text(exc))
            log.warning("commit of %s abandoned at shutdown (%s): the group's commits stay where they were; a restart "
                        "resumes from its checkpoint, if it has one, else from the group's commits (applying again "
                        "what came after them)", _fmt(offsets), why)
            return False
        self.last_commit = time.time()
        return True

    def _check_commit_metadata(self, offsets: dict) -> None:
        """Read one commit back: does the broker keep its metadata (see :meth:`finish_messages`)?  Once a run."""
        key, pos = next(iter(offsets.items()))
        try:
            got = self.consumer.committed(TopicPartition(*key), metadata=True, timeout_ms=5000)
        except Exception as exc:         # asked again after the next commit
            log.debug("reading a commit back: %s", error_text(exc))
            return
        self.commit_metadata_kept = got is not None and got.metadata == commit_metadata(pos)
        if not self.commit_metadata_kept:
            log.info("the brokers do not keep offset commit metadata: a partition that leaves this worker in a "
                     "rebalance goes once the message it is in the middle of is applied whole")

    def finish_messages(self, keys, max_events: int | None = None) -> Polled:
        """The rest of the messages that partitions ``keys`` (about to be revoked) are in the middle of, unless
        the brokers keep commit metadata (then the commit says how much of the message is done: nothing to do).

        A commit is an offset, with the rest of the position (``skip``, ``max_ts``) in its metadata; on brokers
        that drop the metadata the next owner of a partition revoked inside a message read that message from its
        first event and applied again what this worker had applied.  With the message finished here, the commit
        is a message boundary.  At most ``max_events`` events a call (a batch's bound); call until it returns no
        event."""
        if self.commit_metadata_kept:
            return Polled.nothing()
        released = self.merge.finish(set(keys), max_events=max_events)
        return Polled(events=released.events, dead=released.dead, next_positions=released.positions,
                      late=released.late)

    def committed(self, tp: TopicPartition) -> int | None:
        return self.consumer.committed(tp)

    # -- flow control and lag ----------------------------------------------------------
    def assignment(self) -> set:
        return set(self.consumer.assignment())

    def pause(self) -> None:
        """Stop fetching from every assigned partition (backpressure); polling keeps the membership."""
        self._paused = True
        self._apply_pauses()

    def resume(self) -> None:
        self._paused = False
        self._apply_pauses()

    def is_paused(self) -> bool:
        return self._paused

    def highwaters(self) -> dict:
        """{tp: high watermark} for assigned partitions that have been fetched at least once."""
        out = {}
        for tp in self.assignment():
            try:
                hw = self.consumer.highwater(tp)
            except KafkaError:
                continue
            if hw is not None:
                out[tp] = hw
        return out

    def position(self, tp: TopicPartition) -> int | None:
        """The next offset this worker reads in ``tp`` (what it fetched, else the consumer's position)."""
        fetched = self.merge.fetched((tp.topic, tp.partition))
        if fetched is not None:
            return fetched
        try:
            return self.consumer.position(tp, timeout_ms=2000)
        except Exception:
            return None

    def lag(self) -> dict:
        """{(topic, partition): records between what was released and the high watermark} (the lag metric).

        Measured from the merge's released position, so records fetched but still waiting in
        the merge count as lag; a broker that lost its data resets the position (see the merge),
        so the lag never sticks at 0 behind a watermark that went backwards.
        """
        out = {}
        for tp, hw in self.highwaters().items():
            key = (tp.topic, tp.partition)
            released = self.merge.position(key)
            pos = released.offset if released is not None else self.position(tp)
            try:    # the consumer's own position is lower after a reset (the broker lost data): trust it
                fetch = self.consumer.position(tp, timeout_ms=0)
            except Exception:
                fetch = None
            if fetch is not None and pos is not None and fetch < pos:
                pos = fetch
            if pos is not None:
                if pos > hw:
                    log.warning("%s[%d]: position %d is past the high watermark %d (data lost on the broker?)",
                                tp.topic, tp.partition, pos, hw)
                out[key] = max(0, hw - pos)
        return out

    def at_end(self) -> bool:
        """True when every assigned partition is read up to its high watermark and the merge released all."""
        parts = self.assignment()
        if not parts:
            return False
        hws = self.highwaters()
        for tp in parts:
            # a partition the merge does not track is between its revocation and its assignment (a rebalance):
            # kafka-python's position is then no measure of what was applied
            if tp not in hws or not self.merge.tracks((tp.topic, tp.partition)):
                return False
            pos = self.position(tp)
            if pos is None or pos < hws[tp]:
                return False
        return self.merge.empty()


# -- producing --------------------------------------------------------------------------

def _producer(bootstrap_servers, options: dict | None = None, stop=None, within: float | None = None,
              **tuning) -> KafkaProducer:
    config = {"bootstrap_servers": bootstrap_servers, "acks": "all", "linger_ms": 5, "batch_size": 1 << 20,
                  "max_request_size": 32 * 1024 * 1024}
    config.update(tuning)
    config.update(security_options(options))
    return retrying("connecting a producer", lambda: KafkaProducer(**config), stop=stop, within=within)


class DurableProducer:
    """A KafkaProducer whose ``send_all`` returns only when every record is acknowledged.

    Records that fail (broker gone) are re-sent with exponential backoff until they are acknowledged, or until
    :data:`STOP_COMMIT_TIMEOUT_S` after ``stop`` is set (the worker stops: the brokers are waited for that long).
    This is what "results durable" means before the worker commits its input offsets.  While the worker runs there
    is no other bound: a results topic out of reach for minutes holds the worker's batch (and its commit) until it
    answers, with a warning every :attr:`WARN_AFTER_S` seconds, rather than ending the run (DESIGN.md: a broker that
    goes away is retried, and offsets are committed only once the outputs are durable).
    """

    #: how long records may wait unacknowledged between two warnings that they still do (while running)
    WARN_AFTER_S = 60.0

    def __init__(self, bootstrap_servers, options: dict | None = None, stop: threading.Event | None = None,
                 **tuning):
        self.stop = stop
        self.abandoned = False          # records left unacknowledged at a stop: close without waiting for them
        self._stopped_at: float | None = None     # when this producer first saw the stop
        self._settings = (bootstrap_servers, options, tuning)
        self._producer: KafkaProducer | None = None

    @property
    def producer(self) -> KafkaProducer:
        """The KafkaProducer, made by :meth:`connect` or at the first record.  Made with the sink (before the
        worker's consumer, its stop and its signal handlers), it waited for unreachable brokers for ever, 30 s an
        attempt: ``run --until-end --results-topic T`` against no broker never started, let alone ended, and
        SIGTERM could not stop it.  The worker's consumer now reaches the brokers first, and says what it waits for
        (``KafkaSource._reach_brokers``); the application connects its sinks after it."""
        if self._producer is None:
            servers, options, tuning = self._settings
            self._producer = _producer(servers, options, stop=self.stop, **tuning)
        return self._producer

    def send_all(self, topic: str, records: list[tuple]) -> int:
        """``records``: (key, value, headers) tuples; blocks until all are acknowledged."""
        pending = list(records)
        backoff = Backoff()
        while pending:
            futures, failed = [], []
            for i, r in enumerate(pending):
                try:
                    futures.append((r, self.producer.send(topic, key=r[0], value=r[1], headers=r[2] or None)))
                except KafkaTimeoutError as exc:
                    # no metadata for the topic within max_block_ms (60 s): its brokers are out of reach.  Those left
                    # are tried again with the failed ones (each would wait as long), not the end of the run
                    failed, last = pending[i:], exc
                    break
            self._flush(topic)
            for r, fut in futures:
                try:
                    fut.get(timeout=60)
                except KafkaError as exc:
                    failed.append(r)
                    last = exc
            if failed:
                left = self._grace_left()
                if left is not None and left <= 0:
                    raise self._given_up(topic) from last
                log.warning("%d of %d records to %s failed (%s); retrying in %.1fs", len(failed), len(pending),
                            topic, last, backoff.delay)
                delay, backoff.delay = backoff.delay, min(backoff.delay * 2, backoff.cap)
                self._pause(delay)
            pending = failed
        return len(records)

    def _flush(self, topic: str) -> None:
        """``KafkaProducer.flush`` in short waits, so that a stop is seen and then given only what its grace leaves
        (a worker stopped while the brokers were gone waited out 60 s, then ended with this error anyway).  While
        running it waits for as long as the records are in flight, saying so every :attr:`WARN_AFTER_S` seconds:
        its 60 s bound ended the run with KafkaTimeoutError where this class promises to wait until acknowledged.
        Records are in flight until acknowledged or failed by kafka-python (``delivery_timeout_ms``, 120 s by
        default), and failed ones are sent again by :meth:`send_all`."""
        started = warned = time.monotonic()
        while True:
            try:
                self.producer.flush(timeout=0.25)
                return
            except KafkaTimeoutError:
                left = self._grace_left()
                if left is not None and left <= 0:
                    raise self._given_up(topic) from None
                now = time.monotonic()
                if left is None and now - warned >= self.WARN_AFTER_S:
                    warned = now
                    log.warning("records to topic %r not acknowledged after %.0f s (its brokers out of reach?): still "
                                "waiting; the batch is done, and its input offsets committed, once they are (a stop "
                                "gives up after %g s)", topic, now - started, STOP_COMMIT_TIMEOUT_S)

    def _grace_left(self) -> float | None:
        """Seconds a stop leaves to wait for the brokers (:data:`STOP_COMMIT_TIMEOUT_S` from when this producer first
        saw it); None while not stopping."""
        if self.stop is None or not self.stop.is_set():
            return None
        if self._stopped_at is None:
            self._stopped_at = time.monotonic()
        return STOP_COMMIT_TIMEOUT_S - (time.monotonic() - self._stopped_at)

    def _pause(self, delay: float) -> None:
        """Sleep ``delay`` before sending again; once stopping, at most what the stop's grace leaves."""
        if self.stop is not None and not self.stop.wait(delay):
            return
        left = self._grace_left()
        time.sleep(delay if left is None else max(0.0, min(delay, left)))

    def _given_up(self, topic: str) -> KafkaTimeoutError:
        self.abandoned = True
        return KafkaTimeoutError(f"records to topic {topic!r} not acknowledged within {STOP_COMMIT_TIMEOUT_S:g} s of "
                                 "the stop (the brokers are out of reach): the batch is not done, and a restart "
                                 "applies it again")

    def connect(self) -> None:
        """Make the KafkaProducer now (:attr:`producer`)."""
        _ = self.producer

    def stop_on(self, stop: threading.Event) -> None:
        """Give up waiting for the brokers once ``stop`` is set (the worker's stop: ``kafka_application``)."""
        if self.stop is None:
            self.stop = stop

    def close(self) -> None:
        if self._producer is None:             # never used: never connected
            return
        if not self.abandoned:
            self.producer.close(timeout=5)        # bounded, even with the broker gone
            return
        # Records were left unacknowledged at a stop (the run's error says so): do not wait for them.  kafka-python
        # (3.0.12) has no public way: its close flushes first, whatever its timeout, and raises while records are
        # pending without closing anything, and the producer's __del__ raised the same again at exit (a traceback
        # after the run's one line).  Its sender's own force close (what close does past its timeout) fails them
        sender = getattr(self.producer, "_sender", None)
        if sender is not None and hasattr(sender, "force_close"):
            sender.force_close()
            sender.join(1)
        try:
            self.producer.close(timeout=1)
        except KafkaTimeoutError as exc:
            log.debug("closing the producer with records unacknowledged: %s", exc)


def _json_default(o):
    if isinstance(o, (np.integer,)):
        return int(o)
    if isinstance(o, (np.floating,)):
        return float(o)
    return str(o)


def _ipc_bytes(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    with ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


class KafkaResultsSink:
    """Per epoch: the summary row and every job's output table, to one results topic.

    ``fmt="json"``: the summary as one JSON object; each job output as JSON
    messages of up to ``rows_per_message`` rows (``{"epoch", "job", "part", "rows"}``).
    ``fmt="arrow"``: the summary as a one-row Arrow IPC stream, each job output as
    one Arrow IPC stream.  Headers ``kind`` (summary|job), ``job`` and ``epoch``
    say what a message is; the key is ``summary`` or the job name.

    An epoch's summary row is sent again, whole, when it changes after it was sent, as the summary
    under ``--out`` changes that row: the jobs' final catch-up (``jobs_every`` > 1) adds its job
    scalars, and batches without a valid event at the end of the input (:meth:`add_invalid`) add
    their ``invalid`` and ``batches``.  The newest summary message of an epoch is its row.

    That row outlives the process through the checkpoint: :meth:`last_summary` is what a checkpoint keeps and
    :meth:`resume_summary` what a restored run hands back, so a run resumed from it that makes no new epoch
    still amends the whole row (the restarted sink had no row: a catch-up went out as its job scalars alone,
    and rejects at the end of the input reached no row at all).
    """

    def __init__(self, bootstrap_servers, topic: str, fmt: str = "json", *, options: dict | None = None,
                 stop: threading.Event | None = None, rows_per_message: int = 10_000):
        if fmt not in ("json", "arrow"):
            raise ValueError("results format must be json or arrow")
        self.topic, self.fmt, self.rows_per_message = topic, fmt, rows_per_message
        self.out = DurableProducer(bootstrap_servers, options, stop=stop)
        self._last_row: dict | None = None        # the newest summary row sent (amended and sent again)

    def _summary_record(self, row: dict) -> tuple:
        body = json.dumps(row, default=_json_default).encode() if self.fmt == "json" else \
            _ipc_bytes(pa.Table.from_pylist([row]))
        return (b"summary", body, [("kind", b"summary"), ("epoch", str(int(row["epoch"])).encode())])

    def write(self, result, *, invalid: int | None = None, offsets: dict | None = None,
              batches: int | None = None) -> None:
        """Publish one epoch; returns once every message is acknowledged (durable)."""
        epoch = str(int(result.epoch)).encode()
        row = result.summary_row(invalid=invalid, offsets=offsets, batches=batches)
        if not result.counts and self._last_row is not None and self._last_row["epoch"] == row["epoch"]:
            row = {**self._last_row, **row}         # the jobs' final catch-up: the epoch's row with its scalars
        self._last_row = row
        records = [self._summary_record(row)]
        for job, table in (result.job_outputs or {}).items():
            headers = [("kind", b"job"), ("job", job.encode()), ("epoch", epoch)]
            if self.fmt == "arrow":
                records.append((job.encode(), _ipc_bytes(table), headers))
                continue
            for part, start in enumerate(range(0, max(table.num_rows, 1), self.rows_per_message)):
                rows = table.slice(start, self.rows_per_message).to_pylist()
                body = {"epoch": int(result.epoch), "job": job, "part": part, "rows": rows}
                records.append((job.encode(), json.dumps(body, default=_json_default).encode(), headers))
        self.out.send_all(self.topic, records)

    def last_summary(self) -> dict | None:
        """The newest summary row sent, as JSON values (a checkpoint keeps it), or None before the first."""
        if self._last_row is None:
            return None
        return json.loads(json.dumps(self._last_row, default=_json_default))

    def resume_summary(self, row: dict | None) -> None:
        """Take ``row`` (:meth:`last_summary` of the checkpoint a run resumes from) as the newest row sent."""
        if row is not None and self._last_row is None:
            self._last_row = dict(row)

    def add_invalid(self, n: int, batches: int = 0) -> bool:
        """Count ``n`` more invalid events and ``batches`` more batches in the newest epoch's row, sent again
        (batches without a valid event at the end of the input).  False where this sink has sent no row."""
        if self._last_row is None:
            return False
        self.out.send_all(self.topic, [self._summary_record(add_rejected(self._last_row, n, batches))])
        return True

    def flush(self) -> None:
        """Nothing to do: every write returns only once the broker acknowledged it."""

    def connect(self) -> None:
        """Reach the brokers now (the application's start, once its source has), not at the first record."""
        self.out.connect()

    def stop_on(self, stop: threading.Event) -> None:
        self.out.stop_on(stop)

    def close(self) -> None:
        self.out.close()


class KafkaDeadLetterSink:
    """Each rejected record as one JSON message: source, partition, position, reason, detail, payload."""

    def __init__(self, bootstrap_servers, topic: str, *, options: dict | None = None,
                 stop: threading.Event | None = None):
        self.topic = topic
        self.out = DurableProducer(bootstrap_servers, options, stop=stop)

    def write(self, dead: pa.Table) -> None:
        if dead is None or dead.num_rows == 0:
            return
        records = []
        for row in dead.to_pylist():   # dead letters are rare: one object per row is fine here
            key = f"{row['source']}:{row['partition']}:{row['position']}".encode()
            records.append((key, json.dumps(row).encode(), [("reason", (row["reason"] or "").encode())]))
        self.out.send_all(self.topic, records)

    def flush(self) -> None:
        """Nothing to do: every write returns only once the broker acknowledged it."""

    def connect(self) -> None:
        """Reach the brokers now (the application's start, once its source has), not at the first record."""
        self.out.connect()

    def stop_on(self, stop: threading.Event) -> None:
        self.out.stop_on(stop)

    def close(self) -> None:
        self.out.close()


# -- publishing a recorded log ----------------------------------------------------------

def create_topic(bootstrap_servers, topic: str, partitions: int = 1, options: dict | None = None,
                 timeout_s: float | None = None) -> bool:
    """Create ``topic`` with ``partitions``; False if it already existed.  ``timeout_s``: how long the client
    may take to reach the brokers (kafka-python's default, 30 s, when not given)."""
    from kafka import KafkaAdminClient
    from kafka.admin import NewTopic
    config = security_options(options)
    if timeout_s is not None and "bootstrap_timeout_ms" in KafkaAdminClient.DEFAULT_CONFIG:
        config["bootstrap_timeout_ms"] = max(1000, int(timeout_s * 1000))
    admin = KafkaAdminClient(bootstrap_servers=bootstrap_servers, **config)
    try:
        admin.create_topics([NewTopic(topic, partitions, 1)])
        return True
    except TopicAlreadyExistsError:
        return False
    finally:
        admin.close()


def vertex_partition(src, num_partitions: int) -> np.ndarray:
    """Partition of each event, from its source vertex: splitmix64 finaliser mod n (vectorised).

    Every event of one source vertex lands in one partition, so a worker per
    partition owns that vertex's out-adjacency (DESIGN.md "Scale beyond one GPU").
    """
    with np.errstate(over="ignore"):
        z = np.asarray(src, dtype=np.int64).view(np.uint64) + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z = z ^ (z >> np.uint64(31))
    return (z % np.uint64(num_partitions)).astype(np.int32)


def _text_lines(table: pa.Table, fmt: str) -> pa.Array:
    """One JSON object or CSV line per event, built with vectorised string kernels."""
    def s(col, null="null"):
        return pc.fill_null(pc.cast(col, pa.string()), null)
    op = s(table.column("op"))
    if fmt == "json" and pa.types.is_string(op.type) and not pa.types.is_integer(table.column("op").type):
        op = pc.binary_join_element_wise('"', op, '"', "")      # op names are JSON strings
    src = s(table.column("src"))
    ts = table.column("ts")
    ts_ms = pc.cast(pc.cast(ts, pa.int64()), pa.string()) if ts.type != pa.null() else ts
    if fmt == "json":
        parts = ['{"op":', op, ',"src":', src, ',"dst":', s(table.column("dst")),
                 ',"weight":', s(table.column("weight")), ',"ts":', pc.fill_null(ts_ms, "null"), "}"]
    else:
        parts = [op, ",", src, ",", s(table.column("dst"), ""), ",", s(table.column("weight"), ""), ",",
                 pc.fill_null(ts_ms, "")]
    cols = [pa.scalar(p) if isinstance(p, str) else p for p in parts]
    lines = pc.binary_join_element_wise(*cols, "")
    return lines.combine_chunks() if isinstance(lines, pa.ChunkedArray) else lines


def _read_logs(log_paths) -> Iterable[pa.RecordBatch]:
    if isinstance(log_paths, (str, bytes)) or hasattr(log_paths, "__fspath__"):
        log_paths = [log_paths]
    for path in log_paths:
        pf = pq.ParquetFile(path)
        # weight and ts are optional in an event log (replay reads one without them): null here, as there; asking
        # for them failed ("Target schema's field names are not matching the table's field names")
        present = [name for name in EVENT_SCHEMA.names if name in pf.schema_arrow.names]
        for batch in pf.iter_batches(batch_size=1 << 20, columns=present):
            table = pa.Table.from_batches([batch])
            for field in EVENT_SCHEMA:
                if field.name not in present:
                    table = table.append_column(field.name, pa.nulls(table.num_rows, field.type))
            yield table.select(EVENT_SCHEMA.names).cast(EVENT_SCHEMA)


class _Pacer:
    """Token-bucket pacing to ``rate`` events/s (None = as fast as possible)."""

    def __init__(self, rate: float | None):
        self.rate, self.t0, self.sent = rate, time.perf_counter(), 0

    def __call__(self, n: int) -> None:
        self.sent += n
        if self.rate:
            ahead = self.sent / self.rate - (time.perf_counter() - self.t0)
            if ahead > 0:
                time.sleep(ahead)


class _Acks:
    """Counts the events whose messages the broker acknowledged (futures' callbacks)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.acked = self.failed = 0
        self.sent_events = self.sent_messages = self.sent_bytes = 0
        self.error: Exception | None = None

    def track(self, future, events: int) -> None:
        future.add_callback(self._ok, events)
        future.add_errback(self._bad, events)

    def _ok(self, events, _metadata=None):
        with self.lock:
            self.acked += events

    def _bad(self, events, exc=None):
        with self.lock:
            self.failed += events
            self.error = exc


def produce(log_paths, topic: str, bootstrap_servers, fmt: str = "json", rate: float | None = None,
            batch_events: int = 20_000, key_by_src: bool = True, partitions: int | None = None,
            options: dict | None = None, limit: int | None = None, lines_per_message: int = 1,
            delivery_timeout_s: float = 30.0) -> dict:
    """Publish recorded event logs (Parquet, EVENT_SCHEMA) to ``topic``; returns counts.

    ``fmt="arrow"``: ``batch_events`` events per message as one Arrow IPC stream
    (the fast path).  ``json``/``csv``: one line per event, batched into requests
    by the producer (``linger_ms``).  Events without ``ts`` are ordered by the worker by
    their records' timestamps.  In a log without any ``ts`` those are stamped in log order
    (:class:`_LogOrderStamps`) and a message then holds only a run of consecutive log events of
    one partition; in a log with ``ts``, a row without one is stamped with the ``ts`` of the row
    before it in the log (the log's first ``ts`` for rows before that: :func:`_event_times`), the
    event time that replay's windows give it (a time before 1970, which no record timestamp can be, goes
    in the row's payload ``ts`` instead: :func:`_times_in_payload`).  ``key_by_src`` shards events by source
    vertex (:func:`vertex_partition`), so per-source order is kept.  ``rate``
    limits events/s.  ``partitions`` creates the topic when it is missing.
    ``lines_per_message > 1`` (json/csv) packs that many newline-separated events
    into one message: kafka-python handles ~1e5 records/s per consumer, so one
    record per event caps text throughput there.

    The counts include ``acknowledged`` and ``unacknowledged`` events: a message the
    broker did not acknowledge within ``delivery_timeout_s`` (a broker gone, say)
    counts all its events as unacknowledged, and the CLI exits 1 naming how many.
    Brokers that cannot be reached within ``delivery_timeout_s`` raise the client's error.
    """
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}")
    if partitions:
        create_topic(bootstrap_servers, topic, partitions, options, timeout_s=delivery_timeout_s)
    timeout_ms = max(1000, int(delivery_timeout_s * 1000))
    # a one-shot command: brokers that cannot be reached within the delivery timeout end it (the worker waits)
    bootstrap = {"bootstrap_timeout_ms": timeout_ms} if "bootstrap_timeout_ms" in KafkaProducer.DEFAULT_CONFIG else {}
    producer = _producer(bootstrap_servers, options, within=delivery_timeout_s, acks=1, enable_idempotence=False,
                         linger_ms=20, delivery_timeout_ms=timeout_ms,
                         request_timeout_ms=min(timeout_ms - 100, 30_000), max_block_ms=timeout_ms, **bootstrap)
    acks = _Acks()
    nparts = len(retrying("topic metadata", lambda: producer.partitions_for(topic) or _missing(topic),
                          attempts=10))
    pace = _Pacer(rate)
    t0 = time.perf_counter()
    per_partition = np.zeros(nparts, dtype=np.int64)
    try:
        events, messages, nbytes = _produce_tables(
            _read_logs(log_paths), producer, acks, topic, fmt, nparts, per_partition, pace, limit, batch_events,
            key_by_src, lines_per_message, _first_time(log_paths))
    except KafkaError as exc:
        log.warning("producing stopped: %s", error_text(exc))
        events, messages, nbytes = acks.sent_events, acks.sent_messages, acks.sent_bytes
    try:
        producer.flush(timeout=delivery_timeout_s + 5)
    except KafkaError as exc:
        log.warning("flushing the producer: %s", exc)
    producer.close(timeout=5)
    seconds = time.perf_counter() - t0
    with acks.lock:
        acked = acks.acked
    total = events if limit is None else min(events, limit)
    return {"topic": topic, "format": fmt, "events": total, "messages": messages, "bytes": nbytes,
            "partitions": nparts, "per_partition": per_partition.tolist(), "seconds": seconds,
            "events_per_second": total / seconds if seconds > 0 else float("inf"),
            "acknowledged": acked, "unacknowledged": _log_rows(log_paths, limit) - acked}


def _log_rows(log_paths, limit) -> int:
    if isinstance(log_paths, (str, bytes)) or hasattr(log_paths, "__fspath__"):
        log_paths = [log_paths]
    rows = sum(pq.ParquetFile(p).metadata.num_rows for p in log_paths)
    return rows if limit is None else min(rows, limit)


class _LogOrderStamps:
    """Record timestamps (``timestamp_ms``) for the messages of a log without ``ts``, in log order.

    The worker gives an event without ``ts`` its record's timestamp and applies its partitions' events in the
    event-time merge: smallest timestamp first, ties by partition, offset order within one (DESIGN.md "Order
    across partitions").  Send times (kafka-python's default) are mostly equal, so the merge took partition
    0's events before partition 1's and the graph differed from a replay of the log.  Stamps here never
    decrease in log order and go up by one whenever a message goes to a lower partition than the message
    before it: events with equal stamps then lie in increasing partition order in the log, which is the order
    the merge takes them in, so the merge gives back the log's order exactly.  Each stamp is also at least
    the wall clock, so a later ``produce`` to the topic sorts after this one; a producer faster than one
    message a millisecond runs ahead of the clock by at most one millisecond per step down.
    """

    def __init__(self):
        self.last: int | None = None
        self.partition: int | None = None

    def __call__(self, partition: int) -> int:
        now = int(time.time() * 1000)
        step = 1 if self.partition is not None and partition < self.partition else 0
        self.last = now if self.last is None else max(now, self.last + step)
        self.partition = partition
        return self.last


def _first_time(log_paths) -> int | None:
    """The first ``ts`` of the logs (ms), None where no row has one: the time of the rows before it."""
    if isinstance(log_paths, (str, bytes)) or hasattr(log_paths, "__fspath__"):
        log_paths = [log_paths]
    for path in log_paths:
        pf = pq.ParquetFile(path)
        if "ts" not in pf.schema_arrow.names:
            continue
        for batch in pf.iter_batches(batch_size=1 << 20, columns=["ts"]):
            ts = pc.drop_null(batch.column(0).cast(EVENT_SCHEMA.field("ts").type))
            if len(ts):
                return int(ts[0].cast(pa.int64()).as_py())
    return None


def _event_times(ts: pa.ChunkedArray, before: int) -> np.ndarray:
    """Each row's event time in ms: its ``ts``, else that of the last row before it with one (``before``, the
    previous table's last time or the log's first, for rows before the table's first ``ts``).  The record
    timestamp a row without ``ts`` is sent with: the worker's merge then takes it in the log's place, as if it
    had its predecessor's time, which is where replay's ``--window`` puts it too (it joins the current window)."""
    ts = ts.combine_chunks() if isinstance(ts, pa.ChunkedArray) else ts
    valid = ts.is_valid().to_numpy(zero_copy_only=False)
    values = pc.fill_null(ts.cast(pa.int64()), 0).to_numpy(zero_copy_only=False)
    last = np.maximum.accumulate(np.where(valid, np.arange(len(values)), -1))
    return np.where(last >= 0, values[np.maximum(last, 0)], before).astype(np.int64)


def _times_in_payload(table: pa.Table, times: np.ndarray) -> pa.Table:
    """``table`` with the ``ts`` of its rows without one set to their event time (``times``, of
    :func:`_event_times`) where that is before 1970: a negative time cannot be a Kafka record timestamp (>= 0, or -1
    for none), so such a row carries it itself; the worker reads the event time it would have given it from the
    record timestamp.  The other rows are left as they are (their record timestamp says their time)."""
    ts = table.column("ts")
    negative = pc.and_(ts.is_null(), pa.array(times < 0))
    if not pc.any(negative).as_py():
        return table
    filled = pc.if_else(negative, pa.array(times, pa.int64()).cast(ts.type), ts)
    return table.set_column(table.schema.get_field_index("ts"), "ts", filled)


def _runs(part: np.ndarray, limit: int, stamp: np.ndarray | None = None) -> list[tuple[int, int]]:
    """[start, stop) ranges of consecutive rows in one partition, each at most ``limit`` rows: the messages of a
    log without ts (a message never holds events that other partitions' events come between in the log).
    ``stamp``: each row's record timestamp, for rows already grouped by partition; a range also ends where it
    changes (one record timestamp a message: that of its rows without ``ts``)."""
    change = part[1:] != part[:-1]
    if stamp is not None:
        change |= stamp[1:] != stamp[:-1]
    cut = np.flatnonzero(change) + 1
    starts = np.concatenate([[0], cut]).astype(np.int64)
    stops = np.concatenate([cut, [len(part)]]).astype(np.int64)
    return [(s, min(s + limit, stop)) for start, stop in zip(starts.tolist(), stops.tolist())  # runs, not events
            for s in range(start, stop, limit)]


def _produce_tables(tables, producer, acks, topic, fmt, nparts, per_partition, pace, limit, batch_events,
                    key_by_src, lines_per_message, first_time=None):
    events = messages = nbytes = 0
    stamps = _LogOrderStamps()
    last_time = first_time          # the time of the last row with ts so far (of the log's first, before it)

    def send(value, partition, count, key=None, timestamp_ms=None):
        nonlocal messages, nbytes
        if timestamp_ms is not None and timestamp_ms < 0:
            # Kafka's record timestamps are >= 0, or -1 for none (the Java producer refuses others): a pre-1970 time
            # is not one. Rows that needed it as their time carry it in their payload (_times_in_payload)
            timestamp_ms = None
        acks.track(producer.send(topic, value=value, key=key, partition=partition, timestamp_ms=timestamp_ms),
                   count)
        messages += 1
        nbytes += len(value)

    for table in tables:
        if limit is not None:
            if events >= limit:
                break
            table = table.slice(0, limit - events)
        part = (vertex_partition(table.column("src").to_numpy(), nparts) if key_by_src
                else np.zeros(table.num_rows, dtype=np.int32))
        per_partition += np.bincount(part, minlength=nparts)
        # a log without ts is stamped in log order; in a log with ts, a row without one takes its predecessor's
        missing = table.column("ts").null_count > 0
        untimed = missing and first_time is None
        times = _event_times(table.column("ts"), last_time) if missing and not untimed else None
        if times is not None and len(times):
            last_time = int(times[-1])
        elif first_time is not None and table.num_rows:
            last_time = int(pc.cast(table.column("ts"), pa.int64())[-1].as_py())
        if times is not None:
            table = _times_in_payload(table, times)
            if not table.column("ts").null_count:        # every row without ts had a pre-1970 time
                missing, times = False, None
        per_message = batch_events if fmt == "arrow" else lines_per_message
        if times is not None and (per_message > 1 or fmt == "arrow"):
            # messages grouped by partition as for a log with ts, also cut where the rows without ts change
            # time: each message's record timestamp is the time of its rows without ts
            order = np.argsort(part, kind="stable")
            table, part_sorted, times = table.take(pa.array(order)), part[order], times[order]
            nulls = table.column("ts").is_null().to_numpy(zero_copy_only=False)
            # of the last row without ts so far (a partition's first ones: of its first, or the partition before's)
            seen = np.maximum.accumulate(np.where(nulls, np.arange(len(nulls)), -1))
            stamp = times[np.where(seen >= 0, seen, int(np.argmax(nulls)))]
            lines = None if fmt == "arrow" else _text_lines(table, fmt).to_pylist()
            for start, stop in _runs(part_sorted, per_message, stamp):
                payload = (_ipc_bytes(table.slice(start, stop - start)) if lines is None
                           else "\n".join(lines[start:stop]).encode())
                send(payload, int(part_sorted[start]), stop - start,
                     timestamp_ms=int(stamp[start]) if nulls[start:stop].any() else None)
                pace(stop - start)
        elif untimed and (per_message > 1 or fmt == "arrow"):
            # Without ts the worker orders by record timestamp: a message is a run of the log in one partition,
            # stamped in log order (_LogOrderStamps).  Logs with ts keep the bigger per-partition messages below.
            # Arrow with one event a message too: the Arrow branch below sends at the wall clock, grouped by
            # partition, and the worker's merge took partition 0's events before partition 1's
            lines = None if fmt == "arrow" else _text_lines(table, fmt).to_pylist()
            for start, stop in _runs(part, per_message):
                p = int(part[start])
                payload = (_ipc_bytes(table.slice(start, stop - start)) if lines is None
                           else "\n".join(lines[start:stop]).encode())
                send(payload, p, stop - start, timestamp_ms=stamps(p))
                pace(stop - start)
        elif fmt == "arrow":
            order = np.argsort(part, kind="stable")   # group by partition, keep event order inside it
            sorted_part = part[order]
            table = table.take(pa.array(order))
            bounds = np.searchsorted(sorted_part, np.arange(nparts + 1))
            for p in range(nparts):                   # a loop over partitions and chunks, not events
                for start in range(bounds[p], bounds[p + 1], batch_events):
                    chunk = table.slice(start, min(batch_events, bounds[p + 1] - start))
                    send(_ipc_bytes(chunk), p, chunk.num_rows)
                    pace(chunk.num_rows)
        elif lines_per_message > 1:
            order = np.argsort(part, kind="stable")
            sorted_part = part[order]
            lines = _text_lines(table.take(pa.array(order)), fmt).to_pylist()
            bounds = np.searchsorted(sorted_part, np.arange(nparts + 1))
            for p in range(nparts):
                for start in range(bounds[p], bounds[p + 1], lines_per_message):
                    stop = min(start + lines_per_message, bounds[p + 1])
                    send("\n".join(lines[start:stop]).encode(), p, stop - start)
                    pace(stop - start)
        else:
            lines = _text_lines(table, fmt).to_pylist()
            keys = pc.cast(table.column("src"), pa.string()).to_pylist() if key_by_src else None
            parts = part.tolist()
            step = max(1, min(batch_events, 10_000))
            for start in range(0, len(lines), step):
                for i in range(start, min(start + step, len(lines))):   # one Kafka record per event
                    send(lines[i].encode(), parts[i], 1, key=keys[i].encode() if keys else None,
                         timestamp_ms=stamps(parts[i]) if untimed else
                         int(times[i]) if times is not None else None)
                pace(min(step, len(lines) - start))
        events += table.num_rows
        acks.sent_events, acks.sent_messages, acks.sent_bytes = events, messages, nbytes
    return events, messages, nbytes


def _missing(topic):
    from kafka.errors import UnknownTopicOrPartitionError
    raise UnknownTopicOrPartitionError(f"topic {topic} does not exist (pass partitions= to create it)")
