#!/usr/bin/env python3
"""How often a replay's batches find their resolve launched ahead, and why not: per batch, nothing launched
(the next batch was not queued when the batch before asked), used, or dropped (another table, another map,
the map's version moved), counted over one cold and one warm replay.

    python3 .ci/gpu-ahead-check.py STRUCTURE [LOG]
"""
import collections

import replay_driver

vinestream, structure, _, log = replay_driver.start(0)
from vinestream.stream.pipeline import pipeline as pm  # noqa: E402

seen = collections.Counter()
real_take, real_launch = pm.Pipeline._take_resolve_ahead, pm.Pipeline._launch_resolve_ahead


def take(self, events):
    a = self._resolve_ahead
    if a is None:
        seen["nothing launched"] += 1
    elif a.events is not events:
        seen["dropped: another table"] += 1
    elif a.vmap is not self.vertex_map:
        seen["dropped: another map"] += 1
    elif a.version != self.vertex_map.version:
        seen[f"dropped: version {a.version} -> {self.vertex_map.version}"] += 1
    else:
        seen["used"] += 1
    return real_take(self, events)


def launch(self, events):
    seen["launch asked"] += 1
    real_launch(self, events)
    if self._resolve_ahead is None:
        seen["launch declined"] += 1


pm.Pipeline._take_resolve_ahead = take
pm.Pipeline._launch_resolve_ahead = launch
for r in range(2):
    seen.clear()
    report, p = replay_driver.replay(vinestream, structure, log, f"/tmp/ahead-{structure}")
    print(f"{structure} replay {r}: {report.batches} batches, resolved ahead {p.resolved_ahead}; {dict(seen)}",
          flush=True)
