#!/usr/bin/env python3
"""One fresh-process CLI replay (``vinestream replay ARGS...``) that also says whether SciPy was imported.

    NO_LIBRARY_IMPORT=1 python3 .ci/gpu-replay-fresh.py replay LOG --backend gpu ...

NO_LIBRARY_IMPORT=1: the warm-up thread leaves out its cupyx.scipy.sparse import (stream/app/warm_up.py).
"""
import os
import sys

sys.path.insert(0, os.getcwd())

from vinestream.stream.app import warm_up
from vinestream.stream.app.cli import main

if os.environ.get("NO_LIBRARY_IMPORT") == "1":
    warm_up.LIBRARY_MODULES = ()
try:
    code = main(sys.argv[1:])
finally:
    print(f"scipy imported {'scipy' in sys.modules}; cupyx.scipy imported {'cupyx.scipy' in sys.modules}")
sys.exit(code)
