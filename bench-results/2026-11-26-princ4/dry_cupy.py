"""numpy posing as cupy for a dry run of the driver (kernels through the host emulation, one-lane warps)."""
import sys
import time

import numpy as np

from tests.test_pagerank_kernels import HostLauncher
from vinestream.algorithms import pagerank_kernels as pk

pk.launcher = HostLauncher(2, 3)
pk.threads_per_row = lambda mean: 1
np.asnumpy = np.asarray
np.__version__dry = "dry"  # the driver prints cp.__version__ (NumPy's here)


class _Event:
    def record(self):
        self.t = time.perf_counter()

    def synchronize(self):
        pass


class _Dev:
    def synchronize(self):
        pass


class _Pool:
    def free_all_blocks(self):
        pass


class cuda:
    Event = _Event
    Device = _Dev

    @staticmethod
    def get_elapsed_time(a, b):
        return (b.t - a.t) * 1e3

    class runtime:
        @staticmethod
        def getDeviceProperties(i):
            return {"name": b"dry-run"}


np.cuda = cuda
np.get_default_memory_pool = lambda: _Pool()
sys.modules[__name__] = np
