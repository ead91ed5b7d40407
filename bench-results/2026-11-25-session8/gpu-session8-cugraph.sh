#!/usr/bin/env bash
# Session 8: the benches against cuGraph (pylibcugraph 26.10, brought by ../shared/hooks/device-wheels in
# the same lease): BFS kernels on R-MAT 22 ef 64 and R-MAT 20 ef 16, then `bench algorithms` at R-MAT 20
# and 22 (static PageRank, BFS, triangles against cupyx and cuGraph; the incremental rows as usual).
set -u
source .ci/gpu-lib.sh
gpu_setup bench.txt          # kafka-python from .whl onto PYTHONPATH (the CLI imports it), then cuGraph's
. $HOME/.dw/site/env.sh
python3 -c "import pylibcugraph; print('pylibcugraph', pylibcugraph.__version__)" 2>&1 | tail -1 | tee -a "$OUT/bench.txt"
vs() { timeout "$1" python3 -m vinestream bench "${@:2}" 2>&1 | tee -a "$OUT/bench.txt" | tail -n 40; }
vs 70 bfs-fused --backend gpu --scales 22 --edge-factor 64 --json "$OUT/bfs22.json"
vs 50 bfs-fused --backend gpu --scales 20 --edge-factor 16 --json "$OUT/bfs20.json"
vs 100 algorithms --backend gpu --scales 20 --json "$OUT/alg20.json"
vs 140 algorithms --backend gpu --scales 22 --json "$OUT/alg22.json"
