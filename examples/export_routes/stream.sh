#!/bin/bash
# Issue 20.1, probe: how `nsys export --type arrowdir` writes its files (one table at a
# time? when is each complete?), where tuiperf's conversion of that export spends its time
# (cProfile), and a parquetdir copy of the report brought back in parts (for local work).
# usage (repository root, GPU machine, .debs carried): stream.sh OUTDIR [KERNELS]
set -u
OUTDIR=${1:?usage}; K=${2:-1000000}
W=/tmp/stream && rm -rf "$W" && mkdir -p "$W/pack"
P=$W/pack
export PYTHONUNBUFFERED=1
. examples/nsys_env.sh
export TUIPERF_NSYS=$NSYS
t=$SECONDS
timeout 300 "$NSYS" profile -t cuda,nvtx,osrt -f true -o "$W/big" \
    python3 examples/export_routes/many_kernels.py --kernels "$K" > "$P/log_profile.txt" 2>&1
echo "profile rc=$? $((SECONDS - t)) s; $(ls -la $W/big.nsys-rep)" | tee -a "$P/times.txt"
R=$W/big.nsys-rep
for i in 1 2; do
    rm -rf "$W/e"
    python3 examples/export_routes/watch_dir.py "$W/e" "$P/watch_$i.txt" -- \
        "$NSYS" export --type arrowdir --include-json=true -f true -o "$W/e" "$R"
    tail -1 "$P/watch_$i.txt" | tee -a "$P/times.txt"
done
ls -la --full-time "$W/e" > "$P/arrowdir_ls.txt"
python3 - "$W/e" > "$P/arrowdir_format.txt" 2>&1 <<'PY'
import sys, pathlib, pyarrow as pa, pyarrow.ipc as ipc
for p in sorted(pathlib.Path(sys.argv[1]).iterdir()):
    head = p.read_bytes()[:8] if p.is_file() else b""
    tail = p.read_bytes()[-8:] if p.is_file() else b""
    try:
        r = ipc.open_file(p); kind = f"file batches={r.num_record_batches}"
    except Exception as e:
        kind = f"not-file ({type(e).__name__})"
    print(p.name, head, tail, kind)
PY
# tuiperf's conversion of the finished arrowdir, profiled
env TUIPERF_CACHE_DIR="$W/c1" PYTHONPATH=$PWD python3 -m cProfile -o "$W/conv.prof" -m tuiperf summary "$W/e" --report cuda_gpu_kern_sum --format csv > /dev/null
python3 -c "import pstats; s=pstats.Stats('$W/conv.prof'); s.sort_stats('cumulative').print_stats(60); s.sort_stats('tottime').print_stats(40)" > "$P/conv_profile.txt" 2>&1
for i in 1 2 3; do
    rm -rf "$W/c2"; sync; a=$(date +%s%N)
    env TUIPERF_CACHE_DIR="$W/c2" PYTHONPATH=$PWD python3 -m tuiperf summary "$W/e" --report cuda_gpu_kern_sum --format csv > /dev/null
    b=$(date +%s%N); echo "convert arrowdir $(( (b - a) / 1000000 )) ms" | tee -a "$P/times.txt"
done
"$NSYS" export --type parquetdir -f true -o "$W/pq" "$R" > /dev/null 2>&1
mkdir -p "$OUTDIR"; tar -C "$W" -cf "$W/pq.tar" pq && split -b 15M -d "$W/pq.tar" "$OUTDIR/pq.tar.part"
mkdir -p "$OUTDIR" && tar -C "$P" -cJf "$OUTDIR/stream.tar.xz" . && ls -la "$OUTDIR"
