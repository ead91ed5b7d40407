#!/usr/bin/env bash
# Session 30: the benches of issues 11 and 12 at HEAD, against cuGraph (pylibcugraph 26.10, brought onto the lease by
# ../shared/hooks/device-wheels) and the plain CuPy forms.  PART=a: the fused BFS kernels (R-MAT 22 ef 64, R-MAT 20
# ef 16) and `bench algorithms` at R-MAT 20 and 22; PART=b: `bench structures` at R-MAT 22 (csr, coo, graphvine; three
# runs) and the 1,000-event phases (resolve + vertex + structure update, R-MAT 20; three runs).
set -u
source .ci/gpu-lib.sh
gpu_setup bench.txt
[ -f "$HOME/.dw/site/env.sh" ] && . "$HOME/.dw/site/env.sh"
python3 -c "import pylibcugraph; print('pylibcugraph', pylibcugraph.__version__)" 2>&1 | tail -1 | tee -a "$OUT/bench.txt"
git log -1 --format='tree of %h (the copy names an older commit; the files are the working tree)' 2>/dev/null | tee -a "$OUT/bench.txt"
vs() { echo "== bench ${*:2}" >> "$OUT/bench.txt"; timeout "$1" python3 -m vinestream bench "${@:2}" 2>&1 | tee -a "$OUT/bench.txt" | tail -n 40; }
case ${PART:-a} in
a)
  vs 100 bfs-fused --backend gpu --scales 22 --edge-factor 64 --json "$OUT/bfs22.json"
  vs 60 bfs-fused --backend gpu --scales 20 --edge-factor 16 --json "$OUT/bfs20.json"
  vs 120 algorithms --backend gpu --scales 20 --json "$OUT/alg20.json"
  vs 220 algorithms --backend gpu --scales 22 --json "$OUT/alg22.json" ;;
b)
  for r in 1 2 3; do
    vs 150 structures --backend gpu --structures csr,coo,graphvine --scales 22 --batch-sizes 1000,1000000 \
      --json "$OUT/structures22-$r.json"
  done
  for r in 1 2 3; do
    timeout 120 python3 -m tests.phase_timing --backend gpu --scale 20 --structures coo,graphvine 2>&1 \
      | sed "s/^/round $r /" | tee -a "$OUT/phase.txt" | tail -n 12
  done ;;
esac
ls "$OUT"
