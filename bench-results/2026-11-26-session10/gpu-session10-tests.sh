#!/usr/bin/env bash
# Session 10, closing lease, call A (about 4 minutes): cuGraph's wheels, brought by the chunk calls before it
# (../shared/hooks/device-wheels), assembled and installed into $HOME/.dw/site (kept for call B of the same
# lease); then the device tests of everything merged this session, every group in parallel, the structure
# contract in three parts.
set -u
GPU_TEST_LIMIT=230; source .ci/gpu-lib.sh
gpu_setup
H=$HOME/.dw
if [ ! -f $H/site/env.sh ] && [ -d $H/recv ]; then
  ( mkdir -p $H/w && cat $H/recv/part.* | tar x -C $H/w && python3 -m pip install -q --no-index --no-deps --no-compile \
      --no-cache-dir --target $H/site $H/w/*.whl && S=$H/site && SP=$(python3 -c 'import site;print(site.getsitepackages()[0])') && {
    echo "export PYTHONPATH=$S\${PYTHONPATH:+:\$PYTHONPATH}"
    echo "export LD_LIBRARY_PATH=$(ls -d $S/nvidia/cu13/lib $S/*/lib64 $S/*/lib $SP/nvidia/*/lib $SP/nvidia/cu13/lib 2>/dev/null | tr '\n' ':')\${LD_LIBRARY_PATH:-}"
    if [ -f $S/nvidia/cu13/lib/libnvJitLink.so.13 ]; then echo "export LD_PRELOAD=$S/nvidia/cu13/lib/libnvJitLink.so.13"; fi
  } > $S/env.sh ) > "$OUT/cugraph-install.txt" 2>&1 &
fi
all_test_groups
tests_done
echo "t=$SECONDS" | tee -a "$OUT/tests.txt"
[ -f $H/site/env.sh ] && (. $H/site/env.sh && python3 -c "import pylibcugraph; print('pylibcugraph', pylibcugraph.__version__)") 2>&1 | tail -1 | tee -a "$OUT/tests.txt"
