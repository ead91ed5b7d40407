#!/usr/bin/env bash
# Third measuring call: the COO index log on the GPU (tests, small-batch phases, structure bench, replay A/B).
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
[ -f .data/cupy_cache.tgz ] && mkdir -p ~/.cupy && tar xzf .data/cupy_cache.tgz -C ~/.cupy
export PYTHONUNBUFFERED=1
VINESTREAM_BACKEND=gpu timeout 400 python3 -m pytest -q -p no:cacheprovider -x tests/test_coo_fused_gpu.py tests/test_coo_csr.py tests/test_pagerank_fused_gpu.py tests/test_resolve_kernels_gpu.py "tests/test_structure_contract.py" -k "coo or fused or resolve or pagerank" > "$OUT/tests.txt" 2>&1; tail -3 "$OUT/tests.txt"
STRUCTURES=coo python3 .ci/gpu-profile-batch.py "$OUT" 2>&1 | grep -E "^coo"
python3 -m tests.phase_timing --backend gpu --scale 20 --structures coo | tee "$OUT/phase.txt"
log=$PWD/.data/sx-mathoverflow.events.parquet
python3 .ci/gpu-profile-replay.py "$log" "$OUT/new" coo 2>&1 | grep timed
(cd .wt/base && python3 .ci/gpu-profile-replay.py "$log" /tmp/base coo 2>&1 | grep timed)
python3 .ci/gpu-profile-replay.py "$log" /tmp/new2 coo 2>&1 | grep timed
timeout 200 python3 -m vinestream bench structures --backend gpu --structures csr,coo --scales 20 --batch-sizes 1000,1000000 --json "$OUT/structures.json" > "$OUT/structures.txt" 2>&1; tail -20 "$OUT/structures.txt"
