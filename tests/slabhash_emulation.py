"""Serial host emulation of structures/slabhash_kernels.SOURCE (tests only).

The one-thread-per-edge kernels (``sh_find``, ``sh_insert_thread``,
``sh_delete``) are compiled with g++ behind GraphVine's emulation prelude (CUDA
built-ins as host code, the grid-stride loop replaced by a loop over all threads
in a chosen order: forward, reverse or a seeded shuffle) plus ``atomicCAS``.
The warp-cooperative ``sh_insert_warp`` needs real warp intrinsics
(``__ballot_sync``, ``__shfl_sync``) and is excluded (``SH_HOST_EMULATION``): it is
tested on the GPU only.
"""
from __future__ import annotations

from tests import graphvine_emulation as gemu
from vinestream.structures import slabhash_kernels as sk

PRELUDE = gemu.PRELUDE + r"""
#define SH_HOST_EMULATION 1
#define SH_GRID_LOOP GV_GRID_LOOP
static inline int atomicCAS(int* a, int compare, int val)
{ int o = *a; if (o == compare) *a = val; return o; }
"""

HOST_KERNELS = ("sh_find", "sh_insert_thread", "sh_delete")
_lib = None


def available() -> bool:
    return gemu.available()


def _library():
    global _lib
    if _lib is None:
        _lib = gemu.compile_library(PRELUDE + sk.SOURCE, "sh")
    return _lib


class HostLauncher(gemu.OrderedLauncher):
    """Stands in for ``slabhash_kernels.launcher``; counts launches per kernel."""

    library = staticmethod(lambda: _library())

    def __call__(self, xp, name, n, args):
        if name not in HOST_KERNELS:
            raise NotImplementedError(f"{name} runs on a GPU only")
        super().__call__(xp, name, n, args)
