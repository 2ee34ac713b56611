"""The memory chart of an Nsight Compute kernel (the Memory Workload Analysis chart as
text): the kernel's requests into L1/TEX and shared memory, bytes and throughput on the
L1/TEX <-> L2, L2 <-> DRAM and L2 <-> system / peer memory links, and the hit rates of
the two caches. Numbers are the report's metrics; only sector counts become bytes (32 B
per sector, as ncu counts them)."""

from __future__ import annotations

from dataclasses import dataclass

from tuiperf.model.fmt import clean
from tuiperf.model.ncu.metrics import KernelMetrics
from tuiperf.report.roofline import si

SECTOR = 32  # bytes per L2 sector

#: link -> (read bytes, write bytes, read bytes/s, write bytes/s); a name that ends with
#: `@sectors` is a sector count (x 32 bytes; its rate is sectors/s)
LINKS = {
    "L1/TEX-L2": ("l1tex__m_xbar2l1tex_read_bytes.sum", "l1tex__m_l1tex2xbar_write_bytes.sum",
                  "l1tex__m_xbar2l1tex_read_bytes.sum.per_second",
                  "l1tex__m_l1tex2xbar_write_bytes.sum.per_second"),
    "L2-DRAM": ("dram__bytes_read.sum", "dram__bytes_write.sum",
                "dram__bytes_read.sum.per_second", "dram__bytes_write.sum.per_second"),
    "L2-System": ("lts__t_sectors_srcunit_tex_aperture_sysmem_op_read_lookup_miss.sum@sectors",
                  "lts__t_sectors_srcunit_tex_aperture_sysmem_op_write.sum@sectors",
                  "lts__t_sectors_srcunit_tex_aperture_sysmem_op_read_lookup_miss.sum.per_second"
                  "@sectors",
                  "lts__t_sectors_srcunit_tex_aperture_sysmem_op_write.sum.per_second@sectors"),
    "L2-Peer": ("lts__t_sectors_srcunit_tex_aperture_peer_op_read_lookup_miss.sum@sectors",
                "lts__t_sectors_srcunit_tex_aperture_peer_op_write.sum@sectors",
                "lts__t_sectors_srcunit_tex_aperture_peer_op_read_lookup_miss.sum.per_second"
                "@sectors",
                "lts__t_sectors_srcunit_tex_aperture_peer_op_write.sum.per_second@sectors"),
}  # fmt: skip
REQUESTS = {
    "global ld": "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "global st": "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
    "local ld": "l1tex__t_requests_pipe_lsu_mem_local_op_ld.sum",
    "local st": "l1tex__t_requests_pipe_lsu_mem_local_op_st.sum",
}
SHARED = {
    "wavefronts": "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum",
    "bank conflicts": "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum",
}
HIT_RATES = {"L1/TEX": "l1tex__t_sector_hit_rate.pct", "L2": "lts__t_sector_hit_rate.pct"}


@dataclass(frozen=True)
class Link:
    name: str
    read: float | None  # bytes over the kernel
    write: float | None
    read_rate: float | None  # bytes/s
    write_rate: float | None


@dataclass(frozen=True)
class MemoryChart:
    kernel_id: int
    requests: dict[str, float | None]
    shared: dict[str, float | None]
    hit_rates: dict[str, float | None]  # percent
    links: dict[str, Link]


def _bytes(km: KernelMetrics, kid: int, spec: str) -> float | None:
    name, _, kind = spec.partition("@")
    v = km.value(kid, name)
    return None if v is None else v * (SECTOR if kind == "sectors" else 1)


def memory_chart(km: KernelMetrics, kid: int) -> MemoryChart:
    links = {
        name: Link(name, *(_bytes(km, kid, spec) for spec in specs))
        for name, specs in LINKS.items()
    }
    return MemoryChart(
        kid,
        {k: km.value(kid, m) for k, m in REQUESTS.items()},
        {k: km.value(kid, m) for k, m in SHARED.items()},
        {k: km.value(kid, m) for k, m in HIT_RATES.items()},
        links,
    )


# --- text --------------------------------------------------------------------------------


def _n(v: float | None, unit: str = "") -> str:
    return "n/a" if v is None else si(v, unit)


def _pct(v: float | None) -> str:
    return "n/a" if v is None else f"{v:.1f}%"


def _box(lines: list[str], width: int, glyphs: str) -> list[str]:
    h, v, tl, tr, bl, br = (glyphs[i] for i in range(6))
    out = [tl + h * (width - 2) + tr]
    out += [v + " " + line[: width - 4].ljust(width - 4) + " " + v for line in lines]
    out.append(bl + h * (width - 2) + br)
    return out


def _link_lines(link: Link, up: str, down: str) -> list[str]:
    return [
        f"  {up} read  {_n(link.read, 'B'):>8}  {_n(link.read_rate, 'B/s'):>10}",
        f"  {down} write {_n(link.write, 'B'):>8}  {_n(link.write_rate, 'B/s'):>10}",
    ]


def chart_lines(
    km: KernelMetrics, kid: int, width: int = 80, ascii_only: bool = False
) -> list[str]:
    """The chart in at most 22 lines of `width` (>= 64) characters."""
    c = memory_chart(km, kid)
    glyphs = "-|++++" if ascii_only else "─│┌┐└┘"
    up, down, side = ("^", "v", "<->") if ascii_only else ("▲", "▼", "◀─▶")
    k = km.kernel(kid)
    box_w = min(32, max((width - 8) // 2, 26))
    r = c.requests
    head = f"Memory chart [{kid}] {clean(k.name or k.display_name)}"
    out = [head[:width]]
    out.append(f"Kernel: global ld {_n(r['global ld'])} st {_n(r['global st'])} requests,"
               f" local ld {_n(r['local ld'])} st {_n(r['local st'])}"[:width])  # fmt: skip
    out.append(f"  {down}")
    l1 = _box([f"L1/TEX cache    hit {_pct(c.hit_rates['L1/TEX'])}"], box_w, glyphs)
    sh = c.shared
    smem = _box(["Shared memory", f"{_n(sh['wavefronts'])} wavefronts",
                 f"{_n(sh['bank conflicts'])} bank conflicts"], box_w, glyphs)  # fmt: skip
    out += _beside(l1, smem, box_w, "   ")
    out += _link_lines(c.links["L1/TEX-L2"], up, down)
    l2 = _box([f"L2 cache        hit {_pct(c.hit_rates['L2'])}"], box_w, glyphs)
    sysm, peer = c.links["L2-System"], c.links["L2-Peer"]
    other = _box([f"System rd {_n(sysm.read, 'B')} wr {_n(sysm.write, 'B')}",
                  f"Peer   rd {_n(peer.read, 'B')} wr {_n(peer.write, 'B')}"], box_w,
                 glyphs)  # fmt: skip
    out += _beside(l2, other, box_w, side)
    out += _link_lines(c.links["L2-DRAM"], up, down)
    out += _box(["Device memory (DRAM)"], box_w, glyphs)
    return [line.rstrip()[:width] for line in out]


def _beside(left: list[str], right: list[str], width: int, joint: str) -> list[str]:
    """Two boxes side by side, `joint` between their first text rows."""
    rows = max(len(left), len(right))
    out = []
    for i in range(rows):
        a = left[i] if i < len(left) else " " * width
        b = right[i] if i < len(right) else ""
        mid = f" {joint} " if i == 1 else " " * (len(joint) + 2)
        out.append(a + mid + b)
    return out
