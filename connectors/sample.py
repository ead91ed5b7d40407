"""The bundled sample log that ``vinestream replay`` plays when given no argument.

``data/collegemsg.parquet`` is SNAP's CollegeMsg temporal network (UC Irvine student
messages, 59,835 add-edge events over 1,899 users, 20,296 distinct directed pairs,
April-October 2004), converted by :func:`connectors.files.convert` from
``CollegeMsg.txt.gz`` (SNAP times in seconds -> ``ts`` in ms, sorted by time).
"""
from __future__ import annotations

from pathlib import Path

__all__ = ["SAMPLE_LOG", "sample_log_path"]

SAMPLE_LOG = Path(__file__).resolve().parent / "data" / "collegemsg.parquet"


def sample_log_path() -> Path:
    """Path of the bundled sample log (raises FileNotFoundError if the install lacks it)."""
    if not SAMPLE_LOG.is_file():
        raise FileNotFoundError(f"bundled sample log missing: {SAMPLE_LOG}")
    return SAMPLE_LOG
