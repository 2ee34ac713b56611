#!/bin/bash
# Issue 37 (2026-12-06, fourth session, second call): where the H100 VM's first screen from
# the cache goes, with numpy's and pyarrow's bytecode compiled: the early open's thread
# stamped (phases.py), the open alone (open_alone.py), and the first screen A/B between
# this tree, NOLZ4 (this tree, small tables stored uncompressed) and OLD (840c157).
# usage (repository root; .debs/, .whl/, NOLZ4, OLD carried): session16.sh OUTDIR NOLZ4 OLD
set -u
OUTDIR=${1:?usage}; NOLZ4=${2:?usage}; OLD=${3:?usage}
W=/tmp/s16 && rm -rf "$W" && mkdir -p "$W" "$OUTDIR"
export PYTHONUNBUFFERED=1
exec > >(tee -a "$OUTDIR/log.txt") 2>&1
. examples/nsys_env.sh
command -v tmux > /dev/null || export PATH=$PATH:/tmp/dw/usr/bin
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site || exit 1
DIRS=$(python3 -c "import os, numpy, pyarrow; print(os.path.dirname(numpy.__file__), os.path.dirname(pyarrow.__file__))")
python3 -m compileall -q -j0 tuiperf "$NOLZ4/tuiperf" "$OLD/tuiperf" /tmp/site $DIRS > /dev/null
timeout 200 "$NSYS" profile -t cuda,nvtx,osrt -f true -o "$W/big" \
    python3 examples/export_routes/many_kernels.py --kernels 1000000 > /dev/null 2>&1
ls -la "$W/big.nsys-rep" || exit 1
export TUIPERF_NSYS=$NSYS
ROOT=$PWD
TREES=("$ROOT" "$NOLZ4")
for tree in "${TREES[@]}"; do  # the entry made once (not timed), then the open alone
    for i in 0 1 2 3; do
        (cd "$tree" && PYTHONPATH=$tree:$PYTHONPATH python3 "$ROOT/examples/export_routes/open_alone.py" "$W/big.nsys-rep" "$W/ph-$(basename "$tree")") | sed "s|^|open alone $(basename "$tree") $i: |"
    done
done
echo "open alone done at $SECONDS s"
for i in 1 2 3 4 5 6; do
    for tree in "${TREES[@]}"; do
        out="$OUTDIR/phases-$(basename "$tree").txt"; n=$(cat "$out" 2>/dev/null | wc -l)
        tmux kill-server 2>/dev/null
        tmux new-session -d -s ph -x 160 -y 48 "cd $tree && LANG=C.UTF-8 PYTHONPATH=$tree:$PYTHONPATH python3 $ROOT/examples/export_routes/phases.py $out $W/big.nsys-rep --cache-dir $W/ph-$(basename "$tree")"
        for _ in $(seq 100); do sleep 0.1; [ "$(cat "$out" 2>/dev/null | wc -l)" -gt "$n" ] && break; done
        sleep 0.3; tmux kill-server 2>/dev/null
    done
done
for f in "$OUTDIR"/phases-*.txt; do echo "== $f"; cat "$f"; done
echo "phases done at $SECONDS s"
timeout 150 python3 bench/first_screen.py "$W/big.nsys-rep" --cache-dir "$W/fs" --rounds 10 \
    --poll 0.01 --tree this="$PWD" --tree nolz4="$NOLZ4" --tree old="$OLD" 2>&1 | tee "$OUTDIR/first_screen.txt"
echo "first screen done at $SECONDS s"
ls -la "$OUTDIR"
