"""Serial host emulation of the cuDF decoders' line screen (``stream/events/cudf_decode._SCREEN_SOURCE``).

The exact kernel source is compiled with g++ behind the GraphVine emulation's
prelude; one launch becomes a loop that runs the kernel body once per line
(block ``i`` of one thread).  CI has no GPU, so this is how the screen's promise
is tested there: a line it passes must be one the pyarrow decoder turns into
exactly one valid event.
"""
from __future__ import annotations

import ctypes

import numpy as np

from tests.graphvine_emulation import PRELUDE, _arg, available, compile_library
from vinestream.stream.events.cudf_decode import _SCREEN_SOURCE

__all__ = ["available", "screen_host"]

_WRAPPER = r"""
extern "C" void screen_host(const u8* buf, const long long* starts, const long long* ends, long long n,
                            int csv, int* out) {
    for (long long q = 0; q < n; ++q) { blockIdx.x = (unsigned int)q; screen_lines(buf, starts, ends, n, csv, out); }
}
"""
_lib = None


def _library():
    global _lib
    if _lib is None:
        _lib = compile_library(PRELUDE + "#define __forceinline__\n" + _SCREEN_SOURCE + _WRAPPER, "screen")
    return _lib


def screen_host(lines: list[bytes], fmt: str) -> np.ndarray:
    """The kernel's verdict per line (0: not clean; else 1 for JSON, the field count for CSV)."""
    data = b"\n".join(lines) + b"\n"
    buf = np.frombuffer(data, dtype=np.uint8).copy()
    lengths = np.array([len(x) for x in lines], dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(lengths + 1)[:-1]]).astype(np.int64)
    ends = (starts + lengths).astype(np.int64)
    out = np.zeros(len(lines), dtype=np.int32)
    if len(lines):
        _library().screen_host(_arg(buf), _arg(starts), _arg(ends), ctypes.c_longlong(len(lines)),
                               ctypes.c_int(fmt == "csv"), _arg(out))
    return out
