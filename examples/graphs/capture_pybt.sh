#!/bin/bash
# Second pass for Python backtraces: `--python-backtrace=cuda` needs CPU sampling and CUDA
# backtraces on (nsys 2025.3.1's help says so), which capture.sh's `--sample=none` run lacked.
# usage (repository root, on the GPU machine): examples/graphs/capture_pybt.sh OUTDIR
set -u
OUTDIR=${1:?usage: capture_pybt.sh OUTDIR}
W=/tmp/pybt2 && rm -rf "$W" && mkdir -p "$W/pack"
P=$W/pack
export PYTHONUNBUFFERED=1
. examples/nsys_env.sh
"$NSYS" export --help > "$P/nsys_export_help.txt" 2>&1
one() {  # name flags...
    local n=$1
    shift
    echo "== $n: nsys profile $*" | tee "$P/log_$n.txt"
    timeout 120 "$NSYS" profile "$@" -f true -o "$W/$n" python3 examples/graphs/programs.py pybt --steps 4 >> "$P/log_$n.txt" 2>&1
    echo "profile rc=$?" | tee -a "$P/log_$n.txt"
    timeout 90 "$NSYS" export --type sqlite -f true -o "$P/$n.sqlite" "$W/$n.nsys-rep" >> "$P/log_$n.txt" 2>&1
    echo "export rc=$?" | tee -a "$P/log_$n.txt"
    python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); print([r[0] for r in c.execute(\"select name from sqlite_master where type='table' and (name like '%CALLCHAIN%' or name like '%PYTHON%')\")]); print('runtime callchainId', c.execute('select count(*), count(callchainId) from CUPTI_ACTIVITY_KIND_RUNTIME').fetchone())" "$P/$n.sqlite" 2>&1 | tee -a "$P/log_$n.txt"
}
one pybt -t cuda,nvtx,osrt --cpuctxsw=none --sample=process-tree --cudabacktrace=all --python-backtrace=cuda
one pybt_sampling -t cuda,nvtx,osrt --cpuctxsw=none --sample=process-tree --cudabacktrace=all:0 --python-backtrace=cuda --python-sampling=true
ls -la "$P"
ls "$P"/*.sqlite | xargs -r -P 4 -n 1 xz -9
tar cf "$OUTDIR/pybt2.tar" -C "$P" .
echo "total $SECONDS s"
