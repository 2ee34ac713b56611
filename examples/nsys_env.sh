# Sourced by the capture scripts (repository root, on the GPU machine, libdw/libelf .debs
# in .debs/, see ../shared's CAPTURE.md): unpacks the libraries nsys needs, exports
# LD_LIBRARY_PATH, and sets NSYS to the nsys bundled with Nsight Compute (else the first
# one found).
mkdir -p /tmp/dw && for f in .debs/*.deb; do dpkg -x "$f" /tmp/dw; done
LD_LIBRARY_PATH=$(dirname "$(find /tmp/dw -name 'libdw.so.1' | head -1)")
export LD_LIBRARY_PATH
NSYS=/opt/nvidia/nsight-compute/2025.3.1/host/target-linux-x64/nsys
[ -x "$NSYS" ] || NSYS=$(find /opt /usr/local -name nsys -type f 2>/dev/null | head -1)
