#!/usr/bin/env python3
"""``vinestream bench structures --backend gpu --structures S --scales 22 --batch-sizes 1000,1000000``
without the CLI (whose import of the Kafka client the GPU box lacks): the same ``bench_structures``
call, run from a checkout's root (it imports that checkout's vinestream).
``python3 PATH/bench22.py STRUCTURES OUT.json``"""
import json
import os
import sys

sys.path.insert(0, os.getcwd())

from vinestream.stream.bench import structures as bs  # noqa: E402
from vinestream.structures.backend import get_backend  # noqa: E402

xp = get_backend("gpu")
r = bs.bench_structures(xp, structures=tuple(sys.argv[1].split(",")), batch_sizes=(1000, 1_000_000),
                        graphs=[{"kind": "rmat", "scale": 22, "edge_factor": 16}], real_graph=None)
print(bs.format_table(r))
with open(sys.argv[2], "w") as f:
    json.dump(r, f, indent=1, default=str)
