"""The project's bench (`vinestream bench algorithms`) on the device, from the worktree's root:
python bench_algorithms.py OUT.json [SCALES]; R-MAT, 0.01 % and 0.1 % batches, 3 repeats, 3 batches, peers."""
import json
import os
import sys

sys.path.insert(0, os.getcwd())
import cupy as cp

from vinestream.stream.bench.algorithms import bench_algorithms, format_table

scales = tuple(int(s) for s in (sys.argv[2] if len(sys.argv) > 2 else "20").split(","))
r = bench_algorithms(cp, scales=scales, fractions=(1e-4, 1e-3), repeats=3, batches=3, peers=True)
json.dump(r, open(sys.argv[1], "w"), indent=1)
print(format_table(r))
