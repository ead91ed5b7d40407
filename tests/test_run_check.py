"""`vinestream run --check` refuses what the run would refuse, and a config file that is not UTF-8 is named.

QA: ``run --check --out /proc/xx`` said ok (the permission bits said writable; the run then could not make the
directory), and ``--config`` of a non-UTF-8 file gave the codec's message without naming the file.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NO_BROKER = "127.0.0.1:1"


def run(*args, env_extra=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith("VINESTREAM_")}
    return subprocess.run([sys.executable, "-m", "vinestream", "run", "--bootstrap-servers", NO_BROKER,
                           "--backend", "cpu", "--metrics-port", "-1", *args], capture_output=True, text=True,
                          env={**env, **(env_extra or {})}, cwd=ROOT, timeout=120)


def one_error_line(proc) -> str:
    assert proc.returncode == 2, proc.stderr[-2000:]
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("vinestream: error: "), proc.stderr[-2000:]
    return lines[0]


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux's /proc")
@pytest.mark.parametrize("flag", ["--out", "--checkpoint-dir"])
def test_check_refuses_a_directory_the_run_cannot_make(flag):
    for check in (["--check"], []):              # the dry run says what the run says
        line = one_error_line(run("--topic", "t", flag, "/proc/vinestream-nope/x", *check))
        assert f"{flag} /proc/vinestream-nope/x: not writable" in line


def test_check_leaves_nothing_behind(tmp_path):
    proc = run("--topic", "t", "--out", str(tmp_path / "a" / "out"), "--checkpoint-dir", str(tmp_path / "ck"),
               "--check")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "# ok" in proc.stderr and list(tmp_path.iterdir()) == []
    (tmp_path / "out").mkdir()
    assert run("--topic", "t", "--out", str(tmp_path / "out"), "--check").returncode == 0
    assert list((tmp_path / "out").iterdir()) == []


@pytest.mark.parametrize("via", ["flag", "env"])
def test_a_config_file_that_is_not_utf8_is_named(tmp_path, via):
    bad = tmp_path / "b.toml"
    bad.write_bytes(b"\xff\xfe")
    proc = run("--check", "--config", str(bad)) if via == "flag" else \
        run("--check", env_extra={"VINESTREAM_CONFIG": str(bad)})
    line = one_error_line(proc)
    assert f"{bad}: not UTF-8 text (byte 0 is 0xff)" in line


def test_check_contacts_no_broker():
    """--check is a dry run: nothing connects to the bootstrap servers, with output topics and a bounded run too
    (their producers, and the worker's own tries of the servers, come once the run starts)."""
    import socket
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(8)
        port = server.getsockname()[1]
        env = {k: v for k, v in os.environ.items() if not k.startswith("VINESTREAM_")}
        proc = subprocess.run([sys.executable, "-m", "vinestream", "run", "--bootstrap-servers", f"127.0.0.1:{port}",
                               "--topic", "t", "--results-topic", "r", "--dead-letter-topic", "d", "--until-end",
                               "--backend", "cpu", "--metrics-port", "-1", "--check"], capture_output=True,
                              text=True, env=env, cwd=ROOT, timeout=120)
        assert proc.returncode == 0 and "Kafka was not contacted" in proc.stderr, proc.stderr[-2000:]
        server.settimeout(0.5)
        with pytest.raises(TimeoutError):
            server.accept()                 # no connection came
