#!/usr/bin/env python3
"""Per batch of the sx-mathoverflow replay (the direct loop: Pipeline.apply batch by batch, all three jobs, one
structure): PageRank's mode, rounds, edges, host reads of the pushes / sweeps, CUDA graphs captured and replayed, its
error bound and the pagerank phase's ms, for the tree in the current directory (a cold pass, then a warm one whose
rows are kept).  PR_OPTIONS: PageRank's options as JSON (job_options), e.g. '{"fallback_fraction": 1e9}'.

    python3 pr_stats.py LOG OUT.json [structure] [label]
"""
import importlib.util
import json
import os
import sys

sys.path.insert(0, os.getcwd())
spec = importlib.util.spec_from_file_location("direct", os.path.join(os.getcwd(), ".ci", "gpu-replay-direct.py"))
direct = importlib.util.module_from_spec(spec)
spec.loader.exec_module(direct)

import vinestream  # noqa: E402

log, out = sys.argv[1], sys.argv[2]
structure = sys.argv[3] if len(sys.argv) > 3 else "coo"
label = sys.argv[4] if len(sys.argv) > 4 else structure
options = json.loads(os.environ.get("PR_OPTIONS", "{}"))
parts = direct.batches(log)
for rep in range(2):                      # the second pass is warm
    p = vinestream.build_pipeline(structure=structure, backend=os.environ.get("BACKEND", "gpu"), jobs=["pagerank", "bfs", "triangles"],
                                  bfs_sources=[1], job_options={"pagerank": options})
    pr = next(j for j in p.jobs if j.name == "pagerank")
    rows = []
    for b, events in enumerate(parts):
        r = p.apply(events)
        w = dict(pr.work)
        push, sweep = pr.last_push, pr.last_sweep
        inc = w.get("mode") == "incremental"
        rows.append({"batch": b, "ms": round(r.seconds.get("pagerank", 0.0) * 1000, 3), "mode": w.get("mode"),
                     "iterations": w.get("iterations"), "edges": w.get("edges_touched"),
                     "edges_now": int(p.structure.num_edges) if hasattr(p, "structure") else None,
                     "reads": getattr(push if inc else sweep, "reads", None),
                     "captures": getattr(push, "captures", None) if inc else None,
                     "first_chunk": getattr(push, "first_chunk", None) if inc else None,
                     "graphs": getattr(push if inc else sweep, "graph_launches", None),
                     "error_bound": w.get("error_bound")})
modes = {}
for row in rows:
    m = modes.setdefault(row["mode"], {"batches": 0, "ms": 0.0, "iterations": 0, "reads": 0, "captures": 0})
    m["batches"] += 1
    m["ms"] = round(m["ms"] + row["ms"], 3)
    m["iterations"] += row["iterations"] or 0
    m["reads"] += row["reads"] or 0
    m["captures"] += row["captures"] or 0
print(f"== {label} {structure} options {options}: warm pass, pagerank ms {sum(r['ms'] for r in rows):.1f}; "
      f"max error bound {max(r['error_bound'] for r in rows):.3g}")
for k, v in modes.items():
    print(f"   {k}: {v}")
for row in rows:
    print("   " + json.dumps(row))
with open(out, "w") as f:
    json.dump({"label": label, "structure": structure, "options": options, "rows": rows}, f)
