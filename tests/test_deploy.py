"""deploy/: every shipped config loads through the real loader, `run --check` passes, and the pieces agree.

What cannot run here (no Docker, no Kubernetes, no GPU): building the images and starting the
compose stack.  What is checked instead: the worker configs validate exactly as the worker would
load them, the Prometheus target is the port the worker serves, every metric the Grafana dashboard
queries is registered by stream/app/metrics.py, the k8s args parse as `vinestream` flags, and the
Dockerfile copies every package the build needs and has a CUDA (CuPy) target.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from vinestream.stream.app.cli import build_parser
from vinestream.stream.app.config import WorkerConfig, load_config
from vinestream.stream.app.metrics import PipelineMetrics

yaml = pytest.importorskip("yaml")

ROOT = Path(__file__).resolve().parent.parent
DEPLOY = ROOT / "deploy"


def k8s_docs():
    return [d for d in yaml.safe_load_all((DEPLOY / "k8s" / "worker.yaml").read_text()) if d]


def shipped_configs(tmp_path) -> dict[str, Path]:
    """deploy/worker.toml and the worker.toml inside the k8s ConfigMap, as files."""
    out = {"deploy/worker.toml": DEPLOY / "worker.toml"}
    for doc in k8s_docs():
        if doc["kind"] == "ConfigMap":
            path = tmp_path / "k8s-worker.toml"
            path.write_text(doc["data"]["worker.toml"])
            out["k8s ConfigMap worker.toml"] = path
    assert len(out) == 2
    return out


def test_every_shipped_config_loads_through_the_real_loader(tmp_path):
    for name, path in shipped_configs(tmp_path).items():
        cfg = load_config(WorkerConfig, path=str(path), env={})
        assert cfg.topics == ["graph-events"] and cfg.format == "arrow", name
        assert cfg.checkpoint_dir and cfg.out and cfg.resume, name       # restarts continue, never refuse


def test_run_check_validates_and_masks_secrets(tmp_path):
    env = {**os.environ, "VINESTREAM_OUT": str(tmp_path / "out"),          # /data exists only in the container
           "VINESTREAM_CHECKPOINT_DIR": str(tmp_path / "ckpt"), "VINESTREAM_SASL_PLAIN_PASSWORD": "hunter2"}
    proc = subprocess.run([sys.executable, "-m", "vinestream", "run", "--config", "deploy/worker.toml", "--check"],
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stderr
    printed = tomllib.loads(proc.stdout)                                   # the effective config is TOML
    assert printed["structure"] == "graphvine" and printed["metrics_port"] == 9464
    assert printed["out"] == str(tmp_path / "out")                          # env beats the file
    assert printed["sasl_plain_password"] == "***" and "hunter2" not in proc.stdout + proc.stderr
    assert "# VINESTREAM_OUT" in proc.stdout and "# checkpoint_every_batches in deploy/worker.toml" in proc.stdout
    assert not (tmp_path / "out").exists()                                  # a dry run creates nothing
    assert "Traceback" not in proc.stderr


def test_prometheus_scrapes_the_port_the_worker_serves():
    prom = yaml.safe_load((DEPLOY / "prometheus.yml").read_text())
    targets = [t for job in prom["scrape_configs"] for sc in job["static_configs"] for t in sc["targets"]]
    worker = load_config(WorkerConfig, path=str(DEPLOY / "worker.toml"), env={})
    compose = yaml.safe_load((DEPLOY / "docker-compose.yml").read_text())
    assert f"worker:{worker.metrics_port}" in targets and "worker" in compose["services"]
    assert f"{worker.metrics_port}:{worker.metrics_port}" in compose["services"]["worker"]["ports"]
    mounted = compose["services"]["worker"]["volumes"][0].split(":")[1]
    assert compose["services"]["worker"]["command"][-1] == mounted          # the worker reads the shipped file


SUFFIXES = {"counter": ("_total",), "gauge": ("",), "histogram": ("_bucket", "_sum", "_count"), "info": ("_info",),
            "summary": ("", "_sum", "_count")}


def registered_metric_names() -> set[str]:
    """Every series name the worker's registry can export (labelled families have no sample until used)."""
    names = set()
    for family in PipelineMetrics().registry.collect():
        names.update(family.name + suffix for suffix in SUFFIXES.get(family.type, ("",)))
        names.update(sample.name for sample in family.samples)
    return names


def test_every_dashboard_metric_is_exported():
    dashboard = json.loads((DEPLOY / "grafana" / "dashboards" / "vinestream.json").read_text())
    exprs = [t["expr"] for p in dashboard["panels"] for t in p.get("targets", [])]
    assert exprs
    queried = {m for e in exprs for m in re.findall(r"\b(vinestream_[a-z_]+)", e)}
    exported = registered_metric_names()
    assert queried and queried <= exported, sorted(queried - exported)


def test_k8s_manifest_args_volumes_and_gpu_image():
    docs = {d["kind"]: d for d in k8s_docs()}
    pod = docs["StatefulSet"]["spec"]["template"]["spec"]
    container = pod["containers"][0]
    args = build_parser().parse_args(container["args"])                    # valid `vinestream` flags
    assert args.command == "run" and args.config == "/etc/vinestream/worker.toml"
    assert "emptyDir" not in json.dumps(pod["volumes"])
    claims = [c["metadata"]["name"] for c in docs["StatefulSet"]["spec"]["volumeClaimTemplates"]]
    data_mount = next(m for m in container["volumeMounts"] if m["mountPath"] == "/data")
    assert data_mount["name"] in claims                                     # checkpoints on a persistent volume
    assert container["resources"]["limits"]["nvidia.com/gpu"] == 1 and container["image"].endswith(":cuda")
    text = (DEPLOY / "k8s" / "worker.yaml").read_text()
    assert "Per-partition graphs" in text and "replicas: 1" in text


def test_dockerfile_has_cpu_and_cuda_targets_and_copies_every_package():
    text = (DEPLOY / "Dockerfile").read_text()
    assert re.search(r"^FROM \S+ AS cpu$", text, re.M) and re.search(r"^FROM nvidia/cuda:\S+ AS cuda$", text, re.M)
    assert 'pip install --no-cache-dir ".[cuda12]"' in text
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    folders = set(pyproject["tool"]["setuptools"]["package-dir"].values())
    for stage in text.split("FROM ")[1:]:
        copied = set(re.findall(r"^COPY (\S+) \1$", stage, re.M))
        assert folders <= copied, folders - copied
        assert "COPY pyproject.toml README.md LICENSE ./" in stage
    assert (ROOT / "LICENSE").read_text().strip().startswith("Apache License")
