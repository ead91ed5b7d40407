"""Where the project's optional real data sets live (SNAP / DIMACS files used by tests and benchmarks).

Nothing in vinestream needs them to run.  Looked up in ``$VINESTREAM_SHARED_DATA``,
then in ``shared/data`` beside the repository (the layout CI and developers have).
"""
from __future__ import annotations

import os
from pathlib import Path

ENV_VAR = "VINESTREAM_SHARED_DATA"


def shared_data_dir() -> Path | None:
    """The data folder, or None when it is not on this machine."""
    candidates = []
    if os.environ.get(ENV_VAR):
        candidates.append(Path(os.environ[ENV_VAR]))
    repo = Path(__file__).resolve().parents[1]
    candidates += [repo.parent / "shared" / "data", repo / "shared" / "data"]
    for path in candidates:
        if path.is_dir():
            return path
    return None


def shared_data_file(relative: str) -> Path | None:
    """``relative`` (e.g. ``temporal/CollegeMsg.txt.gz``) inside the data folder, if present."""
    root = shared_data_dir()
    if root is None or not (root / relative).exists():
        return None
    return root / relative
