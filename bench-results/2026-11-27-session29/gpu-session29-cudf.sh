#!/usr/bin/env bash
# Session 29, second call: cuDF's pure-Python dependencies that the device image lacks (from .whl2, only those
# that do not import), then the cuDF decoder's tests and a GPU replay of the bundled sample through cuDF.
set -u
source .ci/gpu-lib.sh
gpu_setup tests.txt
. $HOME/.dw/site/env.sh
# cuDF 26.10's pure-Python dependencies that the image lacks (nvtx, cachetools), and NumPy 2.3: cuDF 26.10 calls
# numpy.row_stack, which the image's NumPy no longer has
mkdir -p /tmp/extra
python3 -m pip install -q --no-index --no-deps --target /tmp/extra .whl4/*.whl 2>&1 | grep -v WARNING
export PYTHONPATH=/tmp/extra:$PWD:/tmp/site:$PYTHONPATH
# libcudf 26.10 wants nvidia-libnvcomp-cu13 5.3 (the preset brought nvcomp 6, which has no libnvcomp.so.5)
ls .whl3/nvidia_libnvcomp*.whl > /dev/null 2>&1 && python3 -m pip install -q --no-index --no-deps --target /tmp/nvcomp \
  .whl3/nvidia_libnvcomp*.whl && export PYTHONPATH=$PYTHONPATH:/tmp/nvcomp
# the nvcomp wheel keeps its library two folders down (nvidia/nvcomp/lib64), which env.sh's patterns miss
for lib in $(find $HOME/.dw/site /tmp/nvcomp -name 'libnvcomp.so*' -o -name 'libcudf.so' | xargs -n1 dirname | sort -u); do
  export LD_LIBRARY_PATH=$lib:$LD_LIBRARY_PATH
done
python3 -c "import numpy, cupy, cudf; print('cudf', cudf.__version__, 'numpy', numpy.__version__, 'cupy', cupy.__version__)" 2>&1 | tail -2 | tee -a "$OUT/tests.txt"
GPU_TEST_LIMIT=300
run -rs tests/test_cudf_gpu.py
run tests/test_cudf_decode.py tests/test_decode.py tests/test_validate.py
tests_done tests.txt
grep -E "^rc=|passed|failed|SKIPPED" "$OUT/tests.txt" | head -30
VINESTREAM_BACKEND=gpu timeout 120 python3 -m vinestream replay --backend gpu --decoder cudf --out /tmp/o-cudf \
  --no-progress > "$OUT/replay-cudf.txt" 2>&1; echo "replay-cudf rc=$?" | tee -a "$OUT/tests.txt"
tail -4 "$OUT/replay-cudf.txt"
