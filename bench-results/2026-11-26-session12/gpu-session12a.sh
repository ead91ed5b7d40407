#!/usr/bin/env bash
# Session 12, call 1: the triangle device tests of 020d806 (the tri_owned refactor), a fresh replay's start
# step by step (.ci/gpu-startup.py), and what `import cupyx.scipy.sparse` imports (-X importtime). Carry .data .whl.
set -u
GPU_TEST_LIMIT=240; source .ci/gpu-lib.sh
gpu_setup tests.txt
run tests/test_triangles_fused_gpu.py tests/test_triangles.py tests/test_triangle_kernels.py tests/test_triangles_recount.py tests/test_triangles_delta.py
tests_done
python3 -c "import scipy, os; d=os.path.dirname(scipy.__file__); print(scipy.__version__, d, 'writable', os.access(d, os.W_OK), 'pycache', os.path.isdir(d+'/__pycache__'))" > $OUT/startup.txt 2>&1
for i in 1 2; do
  for s in coo graphvine; do timeout 60 python3 .ci/gpu-startup.py $s >> $OUT/startup.txt 2>&1; done
done
for i in 1 2; do
  python3 -X importtime -c "import cupy" 2> /tmp/it-cupy.txt
  python3 -X importtime -c "import cupy; import cupyx.scipy.sparse" 2> /tmp/it.txt
  echo "== round $i: import cupy alone, cumulative top 12" >> $OUT/importtime.txt
  sort -t'|' -k2 -n /tmp/it-cupy.txt | tail -12 >> $OUT/importtime.txt
  echo "== round $i: import cupy + cupyx.scipy.sparse, cumulative top 40" >> $OUT/importtime.txt
  sort -t'|' -k2 -n /tmp/it.txt | tail -40 >> $OUT/importtime.txt
done
/usr/bin/time -f "import cupy: %e s" python3 -c "import cupy" 2>> $OUT/importtime.txt
/usr/bin/time -f "import cupy, cupyx.scipy.sparse: %e s" python3 -c "import cupy, cupyx.scipy.sparse" 2>> $OUT/importtime.txt
/usr/bin/time -f "import scipy.sparse: %e s" python3 -c "import scipy.sparse" 2>> $OUT/importtime.txt
/usr/bin/time -f "import scipy: %e s" python3 -c "import scipy" 2>> $OUT/importtime.txt
