#!/usr/bin/env bash
# Session 10, closing lease, call B (about 8 minutes): the benches with cuGraph (installed by call A in this
# lease), the most needed first, since a call cut at its limit keeps what it wrote: `bench algorithms` at
# R-MAT 20 (static PageRank / BFS / triangles against cupyx and cuGraph in interleaved rounds, the incremental
# rows), 1,000-event phases of main's start (.wt/base) and this tree interleaved, fresh-process CLI replays of
# the issue's starting code (.wt/orig) and this tree, then `bench bfs-fused` at R-MAT 22 ef 64 and 20 ef 16 and
# `bench algorithms` at R-MAT 22.
set -u
source .ci/gpu-lib.sh
gpu_setup bench.txt
[ -f $HOME/.dw/site/env.sh ] && . $HOME/.dw/site/env.sh
python3 -c "import pylibcugraph; print('pylibcugraph', pylibcugraph.__version__)" 2>&1 | tail -1 | tee -a "$OUT/bench.txt"
vs() { timeout "$1" python3 -m vinestream bench "${@:2}" 2>&1 | tee -a "$OUT/bench.txt" | tail -n 40; echo "t=$SECONDS" >> "$OUT/bench.txt"; }
vs 150 algorithms --backend gpu --scales 20 --json "$OUT/alg20.json"
for i in 1 2 3; do phase_timing graphvine,coo 40 base new; done
echo "t=$SECONDS" >> "$OUT/phase.txt"
for s in coo graphvine; do for side in orig new; do replay_once $side $s 40; done; done    # CuPy's disk cache filled
for i in 1 2; do for s in coo graphvine; do for side in orig new; do replay_once $side $s 25; replay_line $side $s; done; done; done
echo "t=$SECONDS" >> "$OUT/replay.txt"
vs 70 bfs-fused --backend gpu --scales 22 --edge-factor 64 --json "$OUT/bfs22.json"
vs 50 bfs-fused --backend gpu --scales 20 --edge-factor 16 --json "$OUT/bfs20.json"
vs 160 algorithms --backend gpu --scales 22 --json "$OUT/alg22.json"
