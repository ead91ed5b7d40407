"""Summarise the bench JSONs of this folder (algorithms-{ours,main}{1,2}.json): the static BFS / PageRank /
triangles rows against the best peer, and incremental BFS against static per batch fraction."""
import glob
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
for path in sorted(glob.glob(os.path.join(HERE, "algorithms-*.json"))):
    r = json.load(open(path))
    r = r.get("algorithms", r)
    who = os.path.basename(path)[len("algorithms-"):-5]
    for g in r["graphs"]:
        p = g.get("peers", {})
        cells = []
        for j in ("pagerank", "bfs", "triangles"):
            q = p.get(j, {})
            extra = f" [min {q['ratio_of_minima']:.2f}, {q['pairs']} pairs]" if "ratio_of_minima" in q else ""
            cells.append(f"{j} {q.get('ratio', float('nan')):.2f}{extra}")
        inc = []
        for row in g["batches"]:
            b = row["bfs"]
            inc.append(f"{row['fraction']:g}: {b['incremental_seconds'] * 1e3:.2f}/{b['static_seconds'] * 1e3:.2f} ms "
                       f"= {b['speedup']:.2f}x ({''.join(m[0] for m in b['modes'])})")
        print(f"{who:6} {g['graph']:14} static/best peer: " + "; ".join(cells))
        print(f"{'':6} {'':14} bfs inc/static: " + "; ".join(inc))
