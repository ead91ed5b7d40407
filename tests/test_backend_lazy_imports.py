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



def test_numpy_ma_is_never_deferred():
    """pyarrow reads ``numpy.ma.MaskedArray`` at every array it builds, from the results writer's thread and the main
    one at once; a LazyLoader module (not thread-safe on Python 3.11) failed there with "module 'numpy.ma' has no
    attribute 'MaskedArray'" in a resumed replay.  It was deferred wherever pandas, which imports it, was not loaded
    before (a plain `pip install .` has no pandas)."""
    code = ("import sys; sys.modules['pandas'] = None; import json; "
            "from vinestream.structures.backend import defer_numpy_extras; d = defer_numpy_extras(); "
            "import numpy.ma; print(json.dumps([d, type(sys.modules['numpy.ma']).__name__]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "VINESTREAM_LAZY_IMPORTS": "1"}, check=True)
    deferred, kind = json.loads(out.stdout.splitlines()[-1])
    assert "numpy.ma" not in deferred and kind == "module"

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


# ``defer_cupyx_extras``: a subpackage that its package imports at its own import, made to run at its first use
PACKAGE = {"pkg/__init__.py": "from pkg import heavy  # noqa\nLIGHT = 1\n",
           "pkg/heavy/__init__.py": ("import sys\nsys.modules.setdefault('HEAVY_RUNS', []).append(1)\n"
                                     "from pkg.heavy import sub  # noqa\nVALUE = 42\n"),
           "pkg/heavy/sub.py": "X = 7\n"}

PACKAGE_PROBE = """
import json, sys, threading
sys.path.insert(0, sys.argv[1])
from vinestream.structures.backend import defer_cupyx_extras
deferred = defer_cupyx_extras(("pkg.heavy",))
import pkg
at_import = len(sys.modules.get("HEAVY_RUNS", []))
values = []
threads = [threading.Thread(target=lambda: values.append(pkg.heavy.VALUE)) for _ in range(8)]
for t in threads: t.start()
for t in threads: t.join()
from pkg.heavy.sub import X
print(json.dumps({"deferred": deferred, "runs_at_import": at_import, "values": values, "x": X,
                  "runs": len(sys.modules.get("HEAVY_RUNS", [])), "sub": pkg.heavy.sub.X}))
"""


def _package_probe(tmp_path, **env) -> dict:
    for rel, text in PACKAGE.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    out = subprocess.run([sys.executable, "-c", PACKAGE_PROBE, str(tmp_path)], capture_output=True, text=True,
                         timeout=120, env={**os.environ, **env}, check=True)
    return json.loads(out.stdout.splitlines()[-1])


def test_a_deferred_subpackage_runs_at_its_first_use_once(tmp_path):
    """The package's own ``from pkg import heavy`` does not run it; eight threads reading it at once run it once
    and all see its value; its submodule imports as before."""
    result = _package_probe(tmp_path, VINESTREAM_LAZY_IMPORTS="1")
    assert result == {"deferred": ["pkg.heavy"], "runs_at_import": 0, "values": [42] * 8, "x": 7, "runs": 1,
                      "sub": 7}


def test_turned_off_the_subpackage_runs_at_the_package_import(tmp_path):
    result = _package_probe(tmp_path, VINESTREAM_LAZY_IMPORTS="0")
    assert result["deferred"] == [] and result["runs_at_import"] == 1 and result["runs"] == 1


def test_an_imported_package_is_left_alone():
    from vinestream.structures.backend import defer_cupyx_extras
    assert defer_cupyx_extras(("json.decoder",)) == []          # json is imported: its import ran it
    assert defer_cupyx_extras(("no_such_package_here.sub",)) == []


CUPYX_PROBE = """
import json, sys
from vinestream.structures.backend import get_backend
xp = get_backend("gpu")
(xp.arange(5) + 1).sum()                    # CuPy imports cupyx at its first elementwise operation
import cupyx
before = "scipy.sparse" in sys.modules
import cupyx.linalg
works = callable(cupyx.linalg.invh) and cupyx.linalg.sparse.lschol is not None
print(json.dumps({"scipy_sparse_at_cupyx": before, "linalg_works": works,
                  "scipy_sparse_after_use": "scipy.sparse" in sys.modules}))
"""


@pytest.mark.gpu
def test_gpu_cupyx_import_leaves_scipy_out_until_linalg_is_used():
    from tests.backends import cupy_or_skip
    cupy_or_skip()
    out = subprocess.run([sys.executable, "-c", CUPYX_PROBE], capture_output=True, text=True, timeout=300,
                         check=True)
    assert json.loads(out.stdout.splitlines()[-1]) == {"scipy_sparse_at_cupyx": False, "linalg_works": True,
                                                        "scipy_sparse_after_use": True}
