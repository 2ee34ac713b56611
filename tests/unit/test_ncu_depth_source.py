"""Source hot spots of the fp32/bf16 pair through ncu_report's source APIs, instruction by
instruction and line by line equal to ncu's own `--page source` CSV exports."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support import needs
from tests.support.ncu_depth import DTYPES, report, source_lines, source_sass
from tuiperf.cli import main
from tuiperf.load.ncu.source import SourceHotSpots, read_hot_spots
from tuiperf.report.source import hot_spot_lines

needs.module("ncu_report")


@pytest.fixture(scope="module")
def paths(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("ncu-depth")
    return {d: report(d, tmp) for d in DTYPES}


@pytest.fixture(scope="module")
def hots(paths: dict[str, Path]) -> dict[str, dict[int, SourceHotSpots]]:
    return {d: read_hot_spots(p, list(range(5))) for d, p in paths.items()}


def _opcode(sass: str) -> str:
    """The instruction's opcode (after its predicate). The operands are not compared: the
    2026.3 reader's disassembler and the 2025.3 CLI that wrote the page spell some
    differently (`LDGSTS.E.LTC128B [R187], desc[…], P0` vs `… desc[…], P0, [R187]`;
    `R88.gsb0` vs `R88, gsb0`; named branch targets)."""
    return next(t for t in sass.split() if not t.startswith("@"))


@pytest.mark.parametrize("dtype", DTYPES)
def test_every_instruction_is_ncus(dtype: str, hots: dict[str, dict[int, SourceHotSpots]]) -> None:
    pages = source_sass(dtype)
    assert len(pages) == 5
    for kid, (name, rows) in enumerate(pages):
        hs = hots[dtype][kid]
        assert name.startswith(hs.name) or hs.name in name
        ours = {s.address: s for s in hs.sass}
        for address, want in rows.items():
            s = ours.get(address)
            if s is None:  # never executed, never sampled
                assert want.samples == want.executed == 0, (kid, hex(address))
                continue
            assert (s.samples, s.not_issued) == (want.samples, want.not_issued), hex(address)
            assert (s.executed or 0) == want.executed, hex(address)
            assert _opcode(s.sass) == _opcode(want.sass), hex(address)
        assert set(ours) <= set(rows)
        assert hs.samples == sum(r.samples for r in rows.values()) > 0


@pytest.mark.parametrize("dtype", DTYPES)
def test_source_lines_are_ncus(dtype: str, hots: dict[str, dict[int, SourceHotSpots]]) -> None:
    want = source_lines(dtype)
    triton = hots[dtype][4]
    got = {(x.file, x.line): (x.text, x.samples, x.not_issued) for x in triton.lines}
    assert got and set(got) <= set(want)
    for key, (text, samples, not_issued) in got.items():
        assert (samples, not_issued) == want[key][1:], key
        assert text == want[key][0].strip(), key
    assert sum(w[1] for k, w in want.items() if k not in got) == 0  # lines without samples
    for kid in range(4):  # library kernels: no line info, as ncu warns
        assert hots[dtype][kid].lines == [] and all(s.line is None for s in hots[dtype][kid].sass)


def test_hot_lines_come_first_and_rules_link_to_instructions(
    hots: dict[str, dict[int, SourceHotSpots]],
) -> None:
    gemm, triton = hots["fp32"][0], hots["fp32"][4]
    lines = hot_spot_lines(triton, 80)
    text = "\n".join(lines)
    assert max(len(line) for line in lines) <= 80
    top = max(triton.lines, key=lambda x: x.samples)
    first = next(line for line in lines if line.strip().startswith(f"{top.samples:,}"))
    assert top.text[:20] in first
    assert "Source lines (" in text and "SASS, most samples first:" in text
    # the GEMM's uncoalesced-shared rule names the instructions with excessive wavefronts
    link = next(x for x in gemm.links if x.rule_id == "UncoalescedSharedAccess")
    assert link.metric == "derived__memory_l1_wavefronts_shared_excessive"
    assert sum(v for _, v in link.addresses) == pytest.approx(50331648)  # ncu's rule total
    gtext = "\n".join(hot_spot_lines(gemm, 80))
    assert "OPT UncoalescedSharedAccess" in gtext and "No source line info" in gtext


def test_source_from_the_cli(paths: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["ncu", str(paths["bf16"]), "--source", "-k", "triton", "--width", "100",
               "--no-cache"])  # fmt: skip
    out = capsys.readouterr().out
    assert rc == 0 and "Source hot spots [4] triton_poi_fused_add_gelu_mul_0" in out
    assert "libdevice.erf" in out


def test_source_of_a_csv_export_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.support.ncu_depth import text

    csv_path = tmp_path / "raw.csv"
    csv_path.write_text(text("fp32_raw.csv"))
    rc = main(["ncu", str(csv_path), "--source", "--no-cache"])
    err = capsys.readouterr().err
    assert rc != 0 and len(err.strip().splitlines()) == 1 and ".ncu-rep" in err
