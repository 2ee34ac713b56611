#!/bin/bash
# Issue 20.1: the viewer's first screen of a fresh ~1.1M-kernel .nsys-rep (ahead_tui.py),
# this tree against OLD_TREE. The GPU machine has no Textual: carry its wheels in .whl/
# (textual, rich, mdit-py-plugins, platformdirs; see the device README) with .debs/.
# usage (repository root, GPU machine): ahead_tui.sh OUTDIR OLD_TREE [KERNELS] [ROUNDS]
set -u
OUTDIR=${1:?usage}; OLD=${2:?usage}; K=${3:-1000000}; ROUNDS=${4:-5}
W=/tmp/ahead_tui && rm -rf "$W" && mkdir -p "$W" "$OUTDIR"
export PYTHONUNBUFFERED=1
. examples/nsys_env.sh
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site || exit 1
which tmux || { echo "no tmux here"; exit 1; }
python3 -m compileall -q tuiperf "$OLD/tuiperf" /tmp/site > /dev/null
timeout 300 "$NSYS" profile -t cuda,nvtx,osrt -f true -o "$W/big" \
    python3 examples/export_routes/many_kernels.py --kernels "$K" > "$W/log_profile.txt" 2>&1
python3 examples/export_routes/ahead_tui.py "$W/big.nsys-rep" "$OLD" "$NSYS" "$OUTDIR/ahead_tui.txt" "$ROUNDS"
