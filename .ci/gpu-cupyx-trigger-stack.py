#!/usr/bin/env python3
"""Who imports ``cupyx`` in a fresh process: the stack at the moment CuPy's first array operation imports it
(an import hook prints it), then the import's own time (-X importtime runs apart)."""
import sys
import time
import traceback


class Hook:
    def find_spec(self, name, path, target=None):
        if name == "cupyx":
            print(f"--- cupyx imported at {1e3 * (time.perf_counter() - T0):.1f} ms from:", flush=True)
            traceback.print_stack(file=sys.stdout)
        return None


T0 = time.perf_counter()
sys.meta_path.insert(0, Hook())
import cupy  # noqa: E402

print(f"import cupy {1e3 * (time.perf_counter() - T0):.1f} ms; cupyx imported: {'cupyx' in sys.modules}", flush=True)
for what, fn in (("empty", lambda: cupy.empty(4)), ("zeros", lambda: cupy.zeros(4)), ("arange", lambda: cupy.arange(4)),
                 ("a + 1", lambda: cupy.arange(4) + 1)):
    t = time.perf_counter()
    fn()
    print(f"{what}: {1e3 * (time.perf_counter() - t):.1f} ms; cupyx imported: {'cupyx' in sys.modules}", flush=True)
