#!/usr/bin/env bash
# Session 29's device call: cuDF from the wheels the earlier calls of the lease brought ($HOME/.dw, see
# ../shared/hooks/device-wheels), then every device test group, the cuDF decoder's tests, this session's API /
# resume / convert / bench tests on the GPU backend, and a GPU replay of the bundled sample through cuDF.
set -u
H=$HOME/.dw
if [ ! -f $H/site/env.sh ]; then
  mkdir -p $H/w && cat $H/recv/part.* | tar x -C $H/w && \
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target $H/site $H/w/*.whl && \
  S=$H/site && SP=$(python3 -c 'import site;print(site.getsitepackages()[0])') && \
  { echo "export PYTHONPATH=$S\${PYTHONPATH:+:\$PYTHONPATH}"
    echo "export LD_LIBRARY_PATH=$(ls -d $S/nvidia/cu13/lib $S/*/lib64 $S/*/lib $SP/nvidia/*/lib $SP/nvidia/cu13/lib 2>/dev/null | tr '\n' ':')\${LD_LIBRARY_PATH:-}"
    if [ -f $S/nvidia/cu13/lib/libnvJitLink.so.13 ]; then echo "export LD_PRELOAD=$S/nvidia/cu13/lib/libnvJitLink.so.13"; fi
  } > $S/env.sh
fi
source .ci/gpu-lib.sh
gv_setup
. $H/site/env.sh
export PYTHONPATH=$PWD:/tmp/site:$PYTHONPATH
python3 -c "import cudf; print('cudf', cudf.__version__)" 2>&1 | tail -1 | tee -a "$OUT/tests.txt"
git log --oneline -1 2>/dev/null | tee -a "$OUT/tests.txt"
grep -c "MAX_TS_MS" stream/events/cudf_decode.py | sed 's/^/cudf_decode MAX_TS_MS lines: /' | tee -a "$OUT/tests.txt"
GPU_TEST_LIMIT=${LIMIT:-330}
all_test_groups
run tests/test_cudf_gpu.py tests/test_cudf_decode.py tests/test_decode.py tests/test_validate.py
run tests/test_api.py tests/test_replay_resume.py tests/test_parquet_connectors.py tests/test_bench_structures.py \
    tests/test_convert.py
tests_done tests.txt
grep -E "^rc=|passed|failed" "$OUT/tests.txt"
VINESTREAM_BACKEND=gpu timeout 120 python3 -m vinestream replay --backend gpu --decoder cudf --out /tmp/o-cudf \
  --no-progress > "$OUT/replay-cudf.txt" 2>&1; echo "replay-cudf rc=$?" | tee -a "$OUT/tests.txt"
tail -4 "$OUT/replay-cudf.txt"
