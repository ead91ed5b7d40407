#!/usr/bin/env python3
"""Where a fresh replay's wall time goes, from its results: per epoch the summary's ``wall_time`` step
against the sum of its phase milliseconds.

    python3 .ci/gpu-replay-timeline.py OUT_DIR LAUNCH_UNIX_SECONDS END_UNIX_SECONDS

Prints the launch -> first epoch time, each of the first epochs and the median of the rest (step, phases,
the rest), and the last epoch -> process end time.
"""
import itertools
import os
import statistics
import sys

sys.path.insert(0, os.getcwd())

import vinestream

out, launch, end = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
s = vinestream.read_results(out)["summary"].to_pandas().sort_values("epoch")
phase_cols = [c for c in s.columns if c.endswith("_ms")]
wall = s["wall_time"].to_numpy()
phases = s[phase_cols].sum(axis=1).to_numpy()
print(f"launch -> epoch {int(s['epoch'].iloc[0])} written: {1000 * (wall[0] - launch):.1f} ms "
      f"(its phases {phases[0]:.1f} ms)")
steps = [1000 * (b - a) for a, b in itertools.pairwise(wall)]
for i in range(min(4, len(steps))):
    print(f"epoch {i + 2}: step {steps[i]:.1f} ms, phases {phases[i + 1]:.1f} ms, rest {steps[i] - phases[i + 1]:.1f}")
rest = [st - ph for st, ph in zip(steps, phases[1:])]
print(f"epochs 6-: median step {statistics.median(steps[4:]):.2f} ms, phases {statistics.median(phases[5:]):.2f}, "
      f"rest {statistics.median(rest[4:]):.2f}; sum of steps {sum(steps):.0f} ms, of phases {phases[1:].sum():.0f}")
print(f"last epoch written -> process end: {1000 * (end - wall[-1]):.1f} ms")
print("median phases (epochs 6-):", {c: round(float(s[c].iloc[5:].median()), 3) for c in phase_cols})
if os.environ.get("FIRST_PHASES") == "1":         # each of the first five epochs' phases
    for i in range(min(5, len(s))):
        print(f"epoch {int(s['epoch'].iloc[i])} phases:", {c.removesuffix("_ms"): round(float(s[c].iloc[i]), 1)
                                                          for c in phase_cols})
