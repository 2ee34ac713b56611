#!/bin/bash
# Issue 37 (2026-12-06, fourth session, third call): why the lane index of a 1.1M-kernel
# capture takes 0.3 s on the H100 VM (22 ms here): the machine's CPU quota and throttling,
# the lanes profiled, and the open alone with Arrow's and numpy's thread pools at 1 thread.
# usage (repository root; .debs/, .whl/ carried): session17.sh OUTDIR
set -u
OUTDIR=${1:?usage}
W=/tmp/s17 && rm -rf "$W" && mkdir -p "$W" "$OUTDIR"
export PYTHONUNBUFFERED=1
exec > >(tee -a "$OUTDIR/log.txt") 2>&1
. examples/nsys_env.sh
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site || exit 1
DIRS=$(python3 -c "import os, numpy, pyarrow; print(os.path.dirname(numpy.__file__), os.path.dirname(pyarrow.__file__))")
python3 -m compileall -q -j0 tuiperf /tmp/site $DIRS > /dev/null
nproc; python3 -c "import os; print('cpu_count', os.cpu_count(), 'affinity', len(os.sched_getaffinity(0)))"
cat /sys/fs/cgroup/cpu.max /proc/pressure/cpu 2>&1; lscpu | grep -E "Model name|MHz|^CPU\(s\)|Thread|NUMA node\(s\)"
python3 -c "import numpy, pyarrow as pa; print(numpy.__version__, pa.__version__, pa.cpu_count(), pa.default_memory_pool().backend_name)"
timeout 200 "$NSYS" profile -t cuda,nvtx,osrt -f true -o "$W/big" \
    python3 examples/export_routes/many_kernels.py --kernels 1000000 > /dev/null 2>&1
ls -la "$W/big.nsys-rep" || exit 1
export TUIPERF_NSYS=$NSYS
A="examples/export_routes/open_alone.py $W/big.nsys-rep $W/c"
PYTHONPATH=$PWD:$PYTHONPATH python3 $A | sed "s|^|made: |"
cat /sys/fs/cgroup/cpu.stat 2>&1 | head -6
for i in 1 2 3; do
    PYTHONPATH=$PWD:$PYTHONPATH python3 $A | sed "s|^|default $i: |"
    OMP_NUM_THREADS=1 PYTHONPATH=$PWD:$PYTHONPATH python3 $A | sed "s|^|one thread $i: |"
    ARROW_DEFAULT_MEMORY_POOL=system PYTHONPATH=$PWD:$PYTHONPATH python3 $A | sed "s|^|system pool $i: |"
done
cat /sys/fs/cgroup/cpu.stat 2>&1 | head -6
PYTHONPATH=$PWD:$PYTHONPATH python3 $A profile > "$OUTDIR/profile.txt"
head -1 "$OUTDIR/profile.txt"
OMP_NUM_THREADS=1 PYTHONPATH=$PWD:$PYTHONPATH python3 $A profile > "$OUTDIR/profile_one_thread.txt"
head -1 "$OUTDIR/profile_one_thread.txt"
PYTHONPATH=$PWD:$PYTHONPATH python3 -X importtime -c "import tuiperf.tui.app" 2> "$OUTDIR/importtime.txt"
echo "done at $SECONDS s"
