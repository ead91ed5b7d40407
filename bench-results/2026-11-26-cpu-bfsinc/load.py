"""Load the two graphs as stream/bench/algorithms.py does (self-loops dropped), cached as .npz in /tmp."""
import os

import numpy as np

from vinestream.stream.bench.algorithms import load_edge_list

DATA = os.path.join(os.path.dirname(__file__), "../../../shared/data")
GRAPHS = {"coAuthorsDBLP": "static/coAuthorsDBLP.mtx.gz", "cnr-2000": "large/cnr-2000.edges.tsv.gz"}


def load(name):
    cache = f"/tmp/bfscpu-{name}.npz"
    if os.path.exists(cache):
        z = np.load(cache)
        return z["s"], z["d"], int(z["n"])
    path = os.path.join("/work/shared/data", GRAPHS[name])
    s, d, n = load_edge_list(np, path)
    keep = s != d
    s, d = s[keep], d[keep]
    np.savez(cache, s=s, d=d, n=n)
    return s, d, n
