#!/bin/bash
# Issue 37 (2026-12-06, fourth session, fourth call): the first screen from the cache on the
# H100 VM without pyarrow 25's pandas import (1a13f14) against BEFORE (d42da43), numpy's and
# pyarrow's bytecode compiled; phases of this tree with the pandas probe (when, from where).
# usage (repository root; .debs/, .whl/, BEFORE carried): session18.sh OUTDIR BEFORE
set -u
OUTDIR=${1:?usage}; BEFORE=$(realpath "${2:?usage}")
W=/tmp/s18 && rm -rf "$W" && mkdir -p "$W" "$OUTDIR"
export PYTHONUNBUFFERED=1
exec > >(tee -a "$OUTDIR/log.txt") 2>&1
. examples/nsys_env.sh
command -v tmux > /dev/null || export PATH=$PATH:/tmp/dw/usr/bin
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site || exit 1
DIRS=$(python3 -c "import os, numpy, pyarrow; print(os.path.dirname(numpy.__file__), os.path.dirname(pyarrow.__file__))")
python3 -m compileall -q -j0 tuiperf "$BEFORE/tuiperf" /tmp/site $DIRS > /dev/null
python3 -c "import pyarrow, pandas; print('pyarrow', pyarrow.__version__, 'pandas', pandas.__version__)"
timeout 200 "$NSYS" profile -t cuda,nvtx,osrt -f true -o "$W/big" \
    python3 examples/export_routes/many_kernels.py --kernels 1000000 > /dev/null 2>&1
ls -la "$W/big.nsys-rep" || exit 1
export TUIPERF_NSYS=$NSYS
ROOT=$PWD
timeout 200 python3 bench/first_screen.py "$W/big.nsys-rep" --cache-dir "$W/fs" --rounds 12 \
    --poll 0.01 --tree before="$BEFORE" --tree this="$ROOT" 2>&1 | tee "$OUTDIR/first_screen.txt"
echo "first screen done at $SECONDS s"
for i in 1 2 3 4 5; do
    out="$OUTDIR/phases.txt"; n=$(cat "$out" 2>/dev/null | wc -l)
    tmux kill-server 2>/dev/null
    tmux new-session -d -s ph -x 160 -y 48 "cd $ROOT && LANG=C.UTF-8 PANDAS_PROBE=$OUTDIR/pandas.txt PYTHONPATH=$ROOT/examples/export_routes/pandas_probe:$ROOT:$PYTHONPATH python3 examples/export_routes/phases.py $out $W/big.nsys-rep --cache-dir $W/fs/this"
    for _ in $(seq 100); do sleep 0.1; [ "$(cat "$out" 2>/dev/null | wc -l)" -gt "$n" ] && break; done
    sleep 2; tmux kill-server 2>/dev/null
done
cat "$OUTDIR/phases.txt"; grep "^at" "$OUTDIR/pandas.txt"
echo "done at $SECONDS s"
