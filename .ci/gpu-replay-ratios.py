#!/usr/bin/env python3
"""Per-round ratios of the replays in a replay_sides file ($OUT/replay.txt), this tree against the starting code,
by two windows:

* ours as printed (the clock from the run's start: the pipeline's build inside it) over the starting code's as
  printed (its clock started after ``build_pipeline``, in ``stream/replay.py`` of 2633564): the stricter reading;
* the same window on both sides: ours with its printed ``build ms`` taken out, i.e. the starting code's own
  definition of the window.

    python3 .ci/gpu-replay-ratios.py REPLAY.txt
"""
import re
import statistics
import sys

EVENTS = 506_550          # sx-mathoverflow's events (every replay of replay_sides reads them all)


def fields(line: str) -> dict:
    out = {}
    for part in line.split(";"):
        m = re.match(r"\s*(.*?)\s+([\d,.]+)( ms)?\s*$", part)
        if m:
            out[m.group(1).split(" ", 2)[-1] if m.group(1).startswith(("orig ", "new ")) else m.group(1)] = \
                float(m.group(2).replace(",", ""))
    return out


def main(path: str) -> None:
    rows = {"coo": [], "graphvine": []}
    pending = {}
    for line in open(path):
        parts = line.split()
        if len(parts) < 3 or parts[0] not in ("orig", "new") or parts[1] not in rows:
            continue
        side, structure = parts[0], parts[1]
        f = fields(line)
        if side == "orig":
            pending[structure] = f["events / s"]
        elif structure in pending:
            wall, build = f["wall seconds"], f.get("build ms", 0.0) / 1e3
            rows[structure].append((pending.pop(structure), f["events / s"], EVENTS / (wall - build)))
    for structure, rs in rows.items():
        if not rs:
            continue
        print(f"{structure}: round, starting code, ours (our window), ours (its window), ratio ours / its, "
              "ratio same window")
        for i, (o, n, nb) in enumerate(rs, 1):
            print(f"  {i}  {o:,.0f}  {n:,.0f}  {nb:,.0f}  {n / o:.2f}x  {nb / o:.2f}x")
        med_o = statistics.median(r[0] for r in rs)
        by_round = [statistics.median(r[i] / r[0] for r in rs) for i in (1, 2)]
        by_median = [statistics.median(r[i] for r in rs) / med_o for i in (1, 2)]
        least = [min(r[i] / r[0] for r in rs) for i in (1, 2)]
        print(f"  median over rounds: {by_round[0]:.2f}x / {by_round[1]:.2f}x; median over median: "
              f"{by_median[0]:.2f}x / {by_median[1]:.2f}x; least: {least[0]:.2f}x / {least[1]:.2f}x")


if __name__ == "__main__":
    main(sys.argv[1])
