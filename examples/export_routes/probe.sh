#!/bin/bash
# usage: [WORK=DIR SRCS="EXPORTS..."] probe.sh [all] — the first pandas import of each first open (summary -r kern; with `all` also summary and convert), in a venv with pyarrow 25 + pandas at /tmp/v25 and the pandas probe (pandas_probe/)
cd /work/main
SRCS=${SRCS:-"../shared/fixtures/nsys/cnn_osrt_arrowdir ${WORK:-/tmp/pp}/vit_range_arrowdir ${WORK:-/tmp/pp}/vit_amp_arrowdir ${WORK:-/tmp/pp}/h100_2gpu_1s_arrowdir"}
cmds=("summary -r kern --top 3")
[ "$1" = all ] && cmds+=("summary" "convert")
for src in $SRCS; do
  for cmd in "${cmds[@]}"; do
    rm -rf ${WORK:-/tmp/pp}/cache ${WORK:-/tmp/pp}/probe.txt
    PYTHONPATH=/work/main:examples/export_routes/pandas_probe PANDAS_PROBE=${WORK:-/tmp/pp}/probe.txt /tmp/v25/bin/python -m tuiperf $cmd $src --cache-dir ${WORK:-/tmp/pp}/cache -q > /dev/null 2>${WORK:-/tmp/pp}/err.txt || { echo "FAIL $src $cmd"; tail -2 ${WORK:-/tmp/pp}/err.txt; }
    if [ -s ${WORK:-/tmp/pp}/probe.txt ]; then echo "== $(basename $src) [$cmd]: $(head -1 ${WORK:-/tmp/pp}/probe.txt)"; grep -A1 'tuiperf/' ${WORK:-/tmp/pp}/probe.txt | grep -v '^--' | tail -4; else echo "== $(basename $src) [$cmd]: no pandas"; fi
  done
done
