import statistics, time, sys
sys.path.insert(0, __import__("os").path.dirname(__import__("os").path.abspath(__file__)))
import numpy as np
from ab import _FLUSH
rng = np.random.default_rng(0)
i32 = rng.integers(0, 1000, 100).astype(np.int32); i64 = i32.astype(np.int64); u32 = i32.view(np.uint32)
idx = rng.integers(0, 100, 50).astype(np.intp); f = rng.random(100)
same = [lambda: i64.take(idx)] * 20
diff = [lambda: i64.take(idx), lambda: i32.take(idx), lambda: u32 > 5, lambda: i32 == 3, lambda: i64 << 3,
        lambda: i64 | 5, lambda: np.add.accumulate(i64), lambda: i64.repeat(2), lambda: np.arange(50),
        lambda: i64.searchsorted(idx), lambda: i32.argsort(), lambda: i64.nonzero(), lambda: np.count_nonzero(i32),
        lambda: np.concatenate((i64, i64)), lambda: i32.astype(np.intp), lambda: i64[idx], lambda: f * 2.0,
        lambda: i64 - i64, lambda: i32 + np.int32(1), lambda: u32.take(idx)]
a = np.arange(10)
for name, ops in (("20 x the same take", same), ("20 different ops", diff)):
    cold, warm = [], []
    for _ in range(30):
        np.add(_FLUSH, 1, out=_FLUSH)
        _ = a + 1
        t0 = time.perf_counter()
        for op in ops: op()
        cold.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        for op in ops: op()
        warm.append(time.perf_counter() - t0)
    print(name, "cold", round(statistics.median(cold) * 1e6, 1), "warm", round(statistics.median(warm) * 1e6, 1))
