#!/bin/bash
# Issue 20.1: profile what follows `nsys export` (post_export.py) on a ~1.1M-kernel report.
# usage (repository root, GPU machine, .debs carried): post_export.sh OUTDIR [KERNELS]
set -u
OUTDIR=${1:?usage}; K=${2:-1000000}
W=/tmp/post && rm -rf "$W" && mkdir -p "$W" "$OUTDIR"
. examples/nsys_env.sh
python3 -m compileall -q tuiperf > /dev/null
timeout 300 "$NSYS" profile -t cuda,nvtx,osrt -f true -o "$W/big" \
    python3 examples/export_routes/many_kernels.py --kernels "$K" > "$W/log_profile.txt" 2>&1
"$NSYS" export --type arrowdir --include-json=true -f true -o "$W/e" "$W/big.nsys-rep" > /dev/null 2>&1
PYTHONPATH=$PWD python3 examples/export_routes/post_export.py "$W/e" "$OUTDIR/post_export.txt"
