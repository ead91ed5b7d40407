"""``structures.backend.defer_numpy_extras``: NumPy's submodules that SciPy's ``from numpy import *`` imports and
no run uses are registered lazily, so that importing ``scipy.sparse`` (which CuPy does inside a GPU replay's
window) no longer runs them; each still works at its first use; ``$VINESTREAM_LAZY_IMPORTS=0`` turns it off.

Each case runs in a fresh interpreter: this one has imported ``numpy.testing`` long ago."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("scipy")

PROBE = """
import json, sys
from vinestream.structures.backend import defer_numpy_extras
deferred = defer_numpy_extras()
import scipy.sparse
ran = {name: name + "." + inner in sys.modules
       for name, inner in (("numpy.f2py", "crackfortran"), ("numpy.testing", "_private.utils"))}
from numpy.testing import assert_array_equal          # the first use runs it
import numpy as np
assert_array_equal(np.arange(3), [0, 1, 2])
import numpy.f2py
used = {"numpy.testing": "numpy.testing._private.utils" in sys.modules,
        "numpy.f2py": callable(numpy.f2py.run_main) and "numpy.f2py.crackfortran" in sys.modules}
print(json.dumps({"deferred": deferred, "ran_at_scipy_import": ran, "work_when_used": used}))
"""


def _probe(**env) -> dict:
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120,
                         env={**os.environ, **env}, check=True)
    return json.loads(out.stdout.splitlines()[-1])


def test_scipy_import_leaves_them_unrun_and_they_work_when_used():
    result = _probe(VINESTREAM_LAZY_IMPORTS="1")
    assert {"numpy.f2py", "numpy.testing"} <= set(result["deferred"])
    assert result["ran_at_scipy_import"] == {"numpy.f2py": False, "numpy.testing": False}
    assert result["work_when_used"] == {"numpy.testing": True, "numpy.f2py": True}


def test_turned_off_scipy_runs_them_as_before():
    result = _probe(VINESTREAM_LAZY_IMPORTS="0")
    assert result["deferred"] == []
    assert result["ran_at_scipy_import"] == {"numpy.f2py": True, "numpy.testing": True}


def test_an_imported_module_is_left_alone():
    import numpy.testing

    from vinestream.structures.backend import defer_numpy_extras
    before = sys.modules["numpy.testing"]
    assert "numpy.testing" not in defer_numpy_extras(("numpy.testing",))
    assert sys.modules["numpy.testing"] is before is numpy.testing
