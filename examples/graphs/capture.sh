#!/bin/bash
# Capture the programs of programs.py on one GPU (CUDA graphs in both trace modes,
# torch.compile warm-up, Python backtraces, a tiny ncu report) and pack the results.
#
# usage (repository root, on the GPU machine, libdw/libelf .debs in .debs/):
#     examples/graphs/capture.sh OUTDIR
# writes OUTDIR/graphs.tar (<name>.sqlite.xz, stats_<name>_<report>.csv, analyze_<name>.txt,
# log_<name>.txt, env.txt, ncu_api_extras.json, small.ncu-rep.xz) and OUTDIR/scratch.tar.xz
# (the nsys report scripts and the bundled ncu_report module, to read, not to commit).
# Captures stop starting after CAPTURE_LIMIT_S seconds (default 400).
# Its pybt/pysampling runs hold no Python frames (--python-backtrace needs CPU sampling, CUDA
# backtraces and `nsys export --include-json`): capture_pybt_json.sh makes the kept pybt report.
set -u
OUTDIR=${1:?usage: capture.sh OUTDIR}
LIMIT=${CAPTURE_LIMIT_S:-400}
W=/tmp/graphs
P=$W/pack
S=$W/scratch
rm -rf "$W" && mkdir -p "$P" "$S"
PROG=examples/graphs/programs.py
export PYTHONUNBUFFERED=1 TORCHINDUCTOR_CACHE_DIR=/tmp/inductor_cache

. examples/nsys_env.sh
NCU=$(command -v ncu || find /opt /usr/local -name ncu -type f 2>/dev/null | head -1)
NCUPY=$(find / -name ncu_report.py -not -path '*/proc/*' 2>/dev/null | head -1)

{
    date -u
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
    nvidia-smi | head -4
    echo "nsys $NSYS"; "$NSYS" --version
    echo "ncu $NCU"; "$NCU" --version
    echo "ncu_report.py $NCUPY"
    python3 -c 'import sys, torch; print("python", sys.version.split()[0]); print("torch", torch.__version__, "cuda", torch.version.cuda); print(torch.cuda.get_device_name(0))'
    uname -r
} > "$P/env.txt" 2>&1
cat "$P/env.txt"

# item 4 and 5 sources to read (scratch, not committed)
"$NSYS" profile --help > "$P/nsys_profile_help.txt" 2>&1
REP=$(dirname "$NSYS")/reports
[ -e "$REP/cuda_gpu_trace.py" ] || REP=$(dirname "$(find / -name cuda_gpu_trace.py -not -path '/proc/*' 2>/dev/null | head -1)")
echo "reports dir: $REP" | tee -a "$P/env.txt"
[ -e "$REP/cuda_gpu_trace.py" ] && mkdir -p "$S/reports" && cp -r "$REP"/. "$S/reports/"
find "$(dirname "$NSYS")/.." -name 'nsysstats*' 2>/dev/null | head -5 | tee -a "$P/env.txt" | xargs -r -I{} cp -r {} "$S/"
[ -n "$NCUPY" ] && cp "$NCUPY" "$S/"

left() { (( SECONDS < LIMIT )) || { echo "SKIP $1: past ${LIMIT}s"; return 1; }; }

nsys_one() {  # name profile-timeout reports program [flags...]
    local n=$1 to=$2 reps=$3 prog=$4 t=$SECONDS
    shift 4
    left "nsys $n" || return
    echo "== $n: nsys profile $* python3 $PROG $prog" | tee "$P/log_$n.txt"
    timeout "$to" "$NSYS" profile "$@" -f true -o "$W/$n" python3 $PROG $prog >> "$P/log_$n.txt" 2>&1
    echo "profile rc=$?" | tee -a "$P/log_$n.txt"
    [ -e "$W/$n.nsys-rep" ] || return
    timeout 90 "$NSYS" export --type sqlite -f true -o "$W/$n.sqlite" "$W/$n.nsys-rep" >> "$P/log_$n.txt" 2>&1
    echo "export rc=$?" >> "$P/log_$n.txt"
    cp "$W/$n.sqlite" "$P/$n.sqlite"
    [ -n "$reps" ] && timeout 90 "$NSYS" stats --report "$reps" --format csv -o "$P/stats_$n" "$W/$n.sqlite" > /dev/null 2>> "$P/log_$n.txt"
    echo "$n: $((SECONDS - t)) s" | tee -a "$P/log_$n.txt"
}

BASE=(-t cuda,nvtx,osrt --sample=none --cpuctxsw=none)
GREPS=cuda_gpu_kern_sum,cuda_api_sum,cuda_gpu_trace,nvtx_sum
nsys_one graphs_default 90 $GREPS "graphs --steps 10" "${BASE[@]}"
nsys_one graphs_node 90 $GREPS "graphs --steps 10" "${BASE[@]}" --cuda-graph-trace=node
nsys_one pybt 90 cuda_api_sum,cuda_gpu_kern_sum "pybt --steps 4" "${BASE[@]}" --python-backtrace=cuda
if ! grep -q 'profile rc=0' "$P/log_pybt.txt"; then
    mv "$P/log_pybt.txt" "$P/log_pybt_try1.txt"
    nsys_one pybt 90 cuda_api_sum "pybt --steps 4" -t cuda,nvtx,osrt --python-backtrace=cuda
fi
nsys_one pysampling 90 "" "pybt --steps 4" -t cuda,nvtx,osrt --cpuctxsw=none --python-sampling=true --python-sampling-frequency=1000

if left ncu; then
    t=$SECONDS
    timeout 150 "$NCU" --set full --clock-control none -c 3 -f -o "$W/small" python3 $PROG tiny > "$P/log_ncu.txt" 2>&1
    echo "ncu rc=$? $((SECONDS - t)) s" | tee -a "$P/log_ncu.txt"
    timeout 90 python3 examples/graphs/ncu_api.py "$W/small.ncu-rep" "$P/ncu_api_extras.json" "$(dirname "$NCUPY")" >> "$P/log_ncu.txt" 2>&1
    echo "ncu_api rc=$?" | tee -a "$P/log_ncu.txt"
    cp "$W/small.ncu-rep" "$P/" 2>/dev/null
fi

nsys_one compile 150 cuda_gpu_kern_sum,cuda_api_sum,nvtx_sum "compile --steps 8" "${BASE[@]}"

for n in graphs_default graphs_node compile; do
    [ -e "$W/$n.sqlite" ] && left "analyze $n" && timeout 60 "$NSYS" analyze "$W/$n.sqlite" > "$P/analyze_$n.txt" 2>&1
done

ls -la "$P"
ls "$P"/*.sqlite "$P"/*.ncu-rep 2>/dev/null | xargs -r -P 8 -n 1 xz -9
tar cf "$OUTDIR/graphs.tar" -C "$P" .
tar cJf "$OUTDIR/scratch.tar.xz" -C "$S" .
ls -la "$OUTDIR"
echo "total $SECONDS s"
