#!/bin/bash
# The bench back to back: ours (this worktree) and main's start (/work/main/.wt/base, a4f0b6b), alternating,
# each run in its own checkout (import vinestream loads the checkout's code), load averages logged.
OUT=/work/main/.wt/bfscnr/bench-results/2026-11-26-bfscnr
REAL=/work/shared/data/static/coAuthorsDBLP.mtx.gz,/work/shared/data/large/cnr-2000.edges.tsv.gz
for run in 1 2; do
  for who in ours main; do
    dir=/work/main/.wt/bfscnr; [ $who = main ] && dir=/work/main/.wt/base
    echo "$(date -u +%T) $who run $run start load $(cut -d' ' -f1-3 /proc/loadavg)" >> $OUT/algorithms-load.txt
    (cd $dir && /work/main/.venv/bin/python -c "import sys; from vinestream.stream.app.cli import main; sys.exit(main())" \
      bench algorithms --backend cpu --scales 14 --json $OUT/algorithms-$who$run.json --real $REAL > $OUT/algorithms-$who$run.txt 2>&1)
    echo "$(date -u +%T) $who run $run end load $(cut -d' ' -f1-3 /proc/loadavg) rc $?" >> $OUT/algorithms-load.txt
  done
done
