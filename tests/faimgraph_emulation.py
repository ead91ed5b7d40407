"""Serial host emulation of structures/faimgraph_kernels.SOURCE (tests only).

The same g++ build and thread-order prelude as the GraphVine emulation
(:mod:`tests.graphvine_emulation`): the grid-stride loop becomes a loop over
all threads in a chosen order (forward, reverse, seeded shuffle), so the whole
fused path of faimGraph / aimGraph / ouroGraph runs on NumPy arrays and a
result that depended on which thread ran first would show.
"""
from __future__ import annotations

from tests import graphvine_emulation as gv_emu
from vinestream.structures import faimgraph_kernels as fk

PRELUDE = gv_emu.PRELUDE + "\n#define FG_GRID_LOOP(t, n) GV_GRID_LOOP(t, n)\n"

_lib = None
available = gv_emu.available


def _library():
    global _lib
    if _lib is None:
        _lib = gv_emu.compile_library(PRELUDE + fk.SOURCE, "fg")
    return _lib


class HostLauncher(gv_emu.OrderedLauncher):
    """Stands in for ``faimgraph_kernels.launcher``; counts launches per kernel."""

    library = staticmethod(lambda: _library())

    def __call__(self, xp, name, n, args):
        getattr(self.ordered(name), name)(*[gv_emu._arg(a) for a in args])
