"""vinestream: streaming graph analytics on dynamic GPU graph structures.

Placeholder: the public API is filled in below.
"""
from __future__ import annotations

from pathlib import Path as _Path

# The subpackages live at the repository's top level (stream/, structures/, algorithms/,
# connectors/) and pyproject's package-dir installs them as vinestream.<name>.  In a source
# checkout (tests run from the repository root) this folder shadows the installed package,
# so the checkout's top level joins the package path: vinestream.stream is ./stream there.
_checkout = _Path(__file__).resolve().parent.parent
if (_checkout / "pyproject.toml").is_file() and (_checkout / "structures" / "registry.py").is_file():
    __path__.append(str(_checkout))
