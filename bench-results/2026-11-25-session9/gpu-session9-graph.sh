#!/usr/bin/env bash
# Session 9, two last short calls (about 4 minutes each): resolve's CUDA graph with its copies through the
# runtime's memcpyAsync (CuPy's copy_*_host_async refused the capturing stream), its device tests and the
# pipeline's with the graph on, the structure contract on CuPy in three parallel parts (one run hit its limit
# in the closing call), then 1,000-event phases with the graph off and on, interleaved.  The first call found
# the pipeline's jobs reading a net effect the next batch had overwritten (jobs_every 2); the second runs
# everything with the graph on after the fix (a copy of the fixed buffer).
set -u
source .ci/gpu-lib.sh
gpu_setup graph.txt
L=$(mktemp -d)
t() {   # NAME LIMIT GRAPH PYTEST-ARGS...: one pytest run in the background, graph on (1) or off (0)
  local name=$1 limit=$2 graph=$3; shift 3
  ( VINESTREAM_RESOLVE_GRAPH=$graph VINESTREAM_BACKEND=gpu timeout $limit python3 -m pytest -q -p no:cacheprovider "$@" \
      > $L/$name.log 2>&1; echo "rc=$? $name $*" >> $L/rc ) &
}
t resolve 200 1 -rx tests/test_resolve_kernels_gpu.py tests/test_coo_fused_gpu.py tests/test_vertex_map_fused_gpu.py tests/test_sync_budget.py
t jobs 200 1 tests/test_pipeline_jobs.py
t pipe 200 1 tests/test_pipeline_contract.py tests/test_replay_warm_up.py tests/test_replay_read_ahead.py -k "cupy or gpu or replay"
t sc1 230 1 tests/test_structure_contract.py -k "cupy and (csr or coo or graphvine or slabhash)"
t sc2 230 1 tests/test_structure_contract.py -k "cupy and (hornet or gpma or faimgraph or diffcsr)"
t sc3 230 1 tests/test_structure_contract.py -k "cupy and (custinger or aimgraph or ourograph)"
wait
sort $L/rc | tee -a "$OUT/graph.txt"
for f in $L/*.log; do echo "===== $f"; tail -n 8 $f; done >> "$OUT/graph.txt"
echo "t=$SECONDS" >> "$OUT/graph.txt"
for i in 1 2 3; do
  for g in 0 1; do
    echo "graph=$g $(VINESTREAM_RESOLVE_GRAPH=$g timeout 30 python3 -m tests.phase_timing --backend gpu --scale 20 --structures graphvine,coo 2>&1 | tail -1)" >> "$OUT/phase.txt"
  done
done
echo "t=$SECONDS" >> "$OUT/phase.txt"
