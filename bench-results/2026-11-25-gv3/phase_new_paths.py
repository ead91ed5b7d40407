#!/usr/bin/env python3
"""``python -m tests.phase_timing`` with GraphVine's new GPU paths switched on (graphvine.DEFAULT_KEYSIDE:
``keyside`` and ``keyside_small``; graphvine.DEFAULT_GRAPHS), which are off by default until a device run
validates them.

``python3 PATH/phase_new_paths.py --backend gpu --scale 20 --structures graphvine`` from a checkout's root."""
import os
import sys

sys.path.insert(0, os.getcwd())

from tests import phase_timing  # noqa: E402
from vinestream.structures import graphvine  # noqa: E402

graphvine.DEFAULT_KEYSIDE = graphvine.DEFAULT_GRAPHS = True
phase_timing.main(sys.argv[1:])
