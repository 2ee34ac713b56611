"""Issue 35 item 6: base names that tell kernels apart. Summary mode showed three different
cutlass GEMMs of vit_range as `Kernel2<…>` three times; `base_names` keeps the template
argument that differs. Names are read from the fixtures with sqlite3, not through tuiperf."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest

from tests.conftest import nsys_path
from tuiperf.model.ncu.base_names import base_names, readable_arg, template_args
from tuiperf.model.ncu.names import base_name


def kernel_names(nsys_dir: Path, name: str) -> list[str]:
    con = sqlite3.connect(f"file:{nsys_path(nsys_dir, name)}?mode=ro", uri=True)
    try:
        sql = (
            "SELECT DISTINCT s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k "
            "JOIN StringIds s ON s.id = k.demangledName"
        )
        return [r[0] for r in con.execute(sql)]
    finally:
        con.close()


def test_the_three_cutlass_gemms_of_vit_range_are_told_apart(nsys_dir: Path) -> None:
    names = kernel_names(nsys_dir, "vit_range")
    gemms = [n for n in names if n.startswith("void cutlass::Kernel2<")]
    assert len(gemms) == 3 and {base_name(n) for n in gemms} == {"Kernel2<…>"}  # the bug
    m = base_names(names)
    shown = [m[n] for n in gemms]
    assert len(set(shown)) == 3
    for n, s in zip(gemms, shown, strict=True):
        layout = re.search(r"_(nn|nt|tn)_align\d", n)
        assert layout is not None and layout.group(0)[1:] in s, s  # nn_align2 ...
        assert s.startswith("Kernel2<") and s.endswith(">") and len(s) < 30


@pytest.mark.parametrize("report", ["vit_range", "vit_amp", "lstm", "cnn_osrt"])
def test_every_kernel_of_a_fixture_keeps_a_name_of_its_own(nsys_dir: Path, report: str) -> None:
    names = kernel_names(nsys_dir, report)
    m = base_names(names)
    assert set(m) == set(names)
    assert len(set(m.values())) == len(names)
    # a name whose base name no other name shares keeps it
    counts: dict[str, int] = {}
    for n in names:
        counts[base_name(n)] = counts.get(base_name(n), 0) + 1
    for n in names:
        if counts[base_name(n)] == 1:
            assert m[n] == base_name(n)


def test_elementwise_kernels_show_their_functor() -> None:
    fill = "void at::native::vectorized_elementwise_kernel<(int)4, at::native::FillFunctor<float>, std::array<char *, (unsigned long)1>>(int, T2, T3)"  # noqa: E501
    add = "void at::native::vectorized_elementwise_kernel<(int)4, at::native::CUDAFunctor_add<float>, std::array<char *, (unsigned long)3>>(int, T2, T3)"  # noqa: E501
    wide = fill.replace("(int)4", "(int)8")
    m = base_names([fill, add, wide])
    # arg 1 tells fill from add; fill and wide differ only in arg 0: both are needed
    assert m[add] == "vectorized_elementwise_kernel<4, CUDAFunctor_add<float>, …>"
    assert m[fill] == "vectorized_elementwise_kernel<4, FillFunctor<float>, …>"
    assert m[wide] == "vectorized_elementwise_kernel<8, FillFunctor<float>, …>"
    m2 = base_names([fill, add])
    assert m2[fill] == "vectorized_elementwise_kernel<…, FillFunctor<float>, …>"


def test_names_that_differ_only_in_their_parameters_stay_one_base_name() -> None:
    a, b = "void k<4>(int)", "void k<4>(float)"
    assert base_names([a, b]) == {a: "k<…>", b: "k<…>"}
    assert base_names(["nvjet_tst_64x8", "cudaLaunchKernel"]) == {
        "nvjet_tst_64x8": "nvjet_tst_64x8",
        "cudaLaunchKernel": "cudaLaunchKernel",
    }


def test_template_arguments_and_their_readable_form() -> None:
    assert template_args("void ns::k<4, ns::F<float>>(int)") == ["4", "ns::F<float>"]
    assert template_args("void foo(int)") == [] and template_args("plain") == []
    lam = (
        "at::native::direct_copy_kernel_cuda(at::TensorIteratorBase &)::[lambda() (instance 3)]"
        "::operator ()() const::[lambda() (instance 7)]::operator ()() const::"
        "[lambda(float) (instance 1)]"
    )
    assert readable_arg(lam) == "direct_copy_kernel_cuda::lambda(float)"
    assert readable_arg("(int)128") == "128"
    assert (
        readable_arg(
            "at::native::<unnamed>::masked_scale_kernel<bool, c10::Half, float>(at::Tensor &)"
        )
        == "masked_scale_kernel<bool, Half, float>"
    )
