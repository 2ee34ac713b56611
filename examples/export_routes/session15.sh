#!/bin/bash
# Issue 37 (2026-12-06, fourth session): is the H100 VM's slow viewer import its numpy and
# pyarrow compiled from source on every start (no bytecode there)? Times `import numpy,
# pyarrow` before and after compiling those packages' bytecode (as a pip install would have),
# then runs session14.sh (first screen, phases, after nsys, summary rounds) with it.
# usage (repository root; .debs/, .whl/, OLD_TREE carried): session15.sh OUTDIR OLD [BUDGET]
set -u
OUTDIR=${1:?usage}; OLD=${2:?usage}; BUDGET=${3:-520}
mkdir -p "$OUTDIR"
imports() {
    for i in 1 2 3; do
        python3 -X importtime -c "import numpy, pyarrow" 2>&1 | python3 -c '
import re, sys
tot = sum(int(m[1]) for m in (re.match(r"import time:\s+(\d+) \|", l) for l in sys.stdin) if m)
print(f"'"$1"' round '"$i"': import numpy, pyarrow {tot / 1000:.1f} ms")'
    done
}
imports "no bytecode" | tee -a "$OUTDIR/bytecode.txt"
DIRS=$(python3 -c "import os, numpy, pyarrow; print(os.path.dirname(numpy.__file__), os.path.dirname(pyarrow.__file__))")
echo "compiling $DIRS" | tee -a "$OUTDIR/bytecode.txt"
python3 -m compileall -q -j0 $DIRS > /dev/null
imports "bytecode" | tee -a "$OUTDIR/bytecode.txt"
exec bash examples/export_routes/session14.sh "$OUTDIR" "$OLD" "$BUDGET"
