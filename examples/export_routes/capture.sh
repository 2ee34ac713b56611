#!/bin/bash
# Issue 20.1: capture a ~1M-kernel .nsys-rep, then time each `nsys export` route and
# tuiperf's whole first open through each (interleaved, REPEAT rounds).
# usage (repository root, on the GPU machine, .debs/ carried): capture.sh OUTDIR [KERNELS] [REPEAT]
set -u
OUTDIR=${1:?usage: capture.sh OUTDIR [KERNELS] [REPEAT]}
K=${2:-1000000}
REPEAT=${3:-3}
W=/tmp/routes && rm -rf "$W" && mkdir -p "$W/pack"
P=$W/pack
export PYTHONUNBUFFERED=1
. examples/nsys_env.sh
export TUIPERF_NSYS=$NSYS
{ "$NSYS" --version; nproc; free -g | head -2; python3 -c 'import pyarrow, sys; print("python", sys.version.split()[0], "pyarrow", pyarrow.__version__)'; } > "$P/env.txt" 2>&1
"$NSYS" export --help > "$P/export_help.txt" 2>&1
t=$SECONDS
timeout 300 "$NSYS" profile -t cuda,nvtx,osrt --sample=none --cpuctxsw=none -f true \
    -o "$W/big" python3 examples/export_routes/many_kernels.py --kernels "$K" > "$P/log_profile.txt" 2>&1
echo "profile rc=$? $((SECONDS - t)) s; $(ls -la $W/big.nsys-rep)" | tee -a "$P/times.txt"
R=$W/big.nsys-rep
ms() { python3 -c 'import time; print(int(time.time()*1000))'; }
one() {  # label, command...
    local label=$1; shift
    sync; local a; a=$(ms)
    "$@" > "$W/out_$label.txt" 2>&1; local rc=$?
    local b; b=$(ms)
    echo "$label rc=$rc $((b - a)) ms" | tee -a "$P/times.txt"
}
for i in $(seq "$REPEAT"); do
    (( SECONDS < ${ROUTES_LIMIT_S:-400} )) || { echo "stop rounds at ${SECONDS}s" | tee -a "$P/times.txt"; break; }
    echo "round $i" >> "$P/times.txt"
    rm -rf "$W/e_"*
    one sqlite "$NSYS" export --type sqlite -f true -o "$W/e_s.sqlite" "$R"
    one arrowdir "$NSYS" export --type arrowdir -f true -o "$W/e_a" "$R"
    one parquetdir "$NSYS" export --type parquetdir -f true -o "$W/e_p" "$R"
    one sqlite_nojson "$NSYS" export --type sqlite --include-json=false -f true -o "$W/e_s2.sqlite" "$R"
    one arrow_json "$NSYS" export --type arrowdir --include-json=true -f true -o "$W/e_aj" "$R"
    rm -rf "$W/cache"
    one tuiperf_rep env TUIPERF_CACHE_DIR="$W/cache" PYTHONPATH=$PWD python3 -m tuiperf summary "$R" --report cuda_gpu_kern_sum --format csv
    rm -rf "$W/cache"
    one tuiperf_sqlite env TUIPERF_CACHE_DIR="$W/cache" PYTHONPATH=$PWD python3 -m tuiperf summary "$W/e_s.sqlite" --report cuda_gpu_kern_sum --format csv
    rm -rf "$W/cache"
    one tuiperf_arrowdir env TUIPERF_CACHE_DIR="$W/cache" PYTHONPATH=$PWD python3 -m tuiperf summary "$W/e_a" --report cuda_gpu_kern_sum --format csv
    rm -rf "$W/cache"
    one tuiperf_parquetdir env TUIPERF_CACHE_DIR="$W/cache" PYTHONPATH=$PWD python3 -m tuiperf summary "$W/e_p" --report cuda_gpu_kern_sum --format csv
    one tuiperf_reopen env TUIPERF_CACHE_DIR="$W/cache" PYTHONPATH=$PWD python3 -m tuiperf summary "$W/e_p" --report cuda_gpu_kern_sum --format csv
done
if (( SECONDS < 480 )); then  # where Python backtraces land in arrowdir / parquetdir exports
    timeout 60 "$NSYS" profile -t cuda,nvtx,osrt --cpuctxsw=none --sample=process-tree --cudabacktrace=all \
        --python-backtrace=cuda -f true -o "$W/pybt" python3 examples/graphs/programs.py pybt --steps 2 > "$P/log_pybt.txt" 2>&1
    for ty in arrowdir parquetdir; do
        "$NSYS" export --type $ty --include-json=true -f true -o "$W/pybt_$ty" "$W/pybt.nsys-rep" >> "$P/log_pybt.txt" 2>&1
    done
    python3 - "$W/pybt_arrowdir" "$W/pybt_parquetdir" > "$P/pybt_routes.txt" 2>&1 <<'PY'
import glob, os, sys
import pyarrow as pa, pyarrow.parquet as pq, pyarrow.ipc as ipc
for d in sys.argv[1:]:
    for f in sorted(glob.glob(os.path.join(d, "*NVTX_EVENTS*"))):
        t = pq.read_table(f) if f.endswith(".parquet") else ipc.open_file(f).read_all() if open(f, "rb").read(6) == b"ARROW1" else ipc.open_stream(f).read_all()
        print(f, t.schema)
        if "jsonText" in t.column_names:
            js = [v for v in t.column("jsonText").to_pylist() if v]
            print("jsonText non-null:", len(js), js[:1])
PY
fi
head -5 "$W"/out_tuiperf_*.txt > "$P/tuiperf_heads.txt" 2>&1
du -sh "$W"/e_* "$R" >> "$P/times.txt"
ls "$W/e_a" "$W/e_p" > "$P/export_files.txt" 2>&1
"$NSYS" stats --report cuda_gpu_kern_sum --format csv -o "$P/stats_big" "$W/e_s.sqlite" > /dev/null 2>&1
cp "$W"/out_tuiperf_*.txt "$P/" 2>/dev/null
mkdir -p "$OUTDIR" && tar -C "$P" -cJf "$OUTDIR/routes.tar.xz" . && ls -la "$OUTDIR"
