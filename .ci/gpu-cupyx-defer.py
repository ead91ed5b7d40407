#!/usr/bin/env python3
"""A fresh process's CuPy start with ``cupyx.linalg`` and ``cupyx.scipy`` deferred (registered as lazy modules
before CuPy imports ``cupyx``) or not (DEFER=0): the times of ``import cupy`` and of the first operations, and
whether SciPy was imported; then cupyx.scipy.sparse used (it must still work)."""
import importlib.machinery
import importlib.util
import os
import sys
import time


class Hook:
    """Prints the stack where a module of $WATCH (comma-separated names) is first looked for."""
    def __init__(self):
        self.watch = set(filter(None, os.environ.get("WATCH", "").split(",")))


    def find_spec(self, name, path, target=None):
        if name in self.watch:
            self.watch.discard(name)
            import traceback
            print(f"--- {name} looked for from:", flush=True)
            traceback.print_stack(file=sys.stdout, limit=14)
        return None


sys.meta_path.insert(0, Hook())
T0 = time.perf_counter()
if os.environ.get("DEFER", "1") == "1":
    where = importlib.util.find_spec("cupyx").submodule_search_locations
    for name in ("cupyx.linalg", "cupyx.scipy"):
        spec = importlib.machinery.PathFinder.find_spec(name, where)
        spec.loader = importlib.util.LazyLoader(spec.loader)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
import cupy  # noqa: E402

marks = [("import cupy", time.perf_counter())]
a = cupy.empty(4, dtype=cupy.int64)
marks.append(("empty (context)", time.perf_counter()))
b = cupy.arange(4) + 1
marks.append(("arange + 1", time.perf_counter()))
int(b.sum())
marks.append(("sum, read", time.perf_counter()))
print(f"DEFER={os.environ.get('DEFER', '1')}: " + ", ".join(f"{w} at {1e3 * (t - T0):.0f} ms" for w, t in marks)
      + f"; scipy imported: {'scipy' in sys.modules}, scipy.sparse: {'scipy.sparse' in sys.modules}")
import cupyx.scipy.sparse as sp  # noqa: E402

m = sp.csr_matrix(cupy.eye(3))
print(f"  then cupyx.scipy.sparse works: {float((m @ cupy.ones(3)).sum())}; scipy imported: {'scipy' in sys.modules}")
