"""No call of pyarrow's `DataType.to_pandas_dtype` in tuiperf but one fallback: it imports
pandas in pyarrow <= 25 (is it pandas 1?), 0.35 s of the H100 VM's first screen
(bench/routes.md passes 12-15). A scan of the source, apart from
test_first_screen_imports.py, whose tests mutation testing runs (on mutated copies)."""

from __future__ import annotations

from pathlib import Path

from tuiperf.model import arrays


def test_tuiperf_never_asks_pyarrow_for_a_pandas_dtype() -> None:
    """`DataType.to_pandas_dtype` imports pandas in pyarrow <= 25 (the dev install has a
    newer one, where test_first_screen_imports.py cannot see it): only the fallback for types
    other than numbers, in `arrays.numpy_dtype`, may call it."""
    root = Path(arrays.__file__).parents[1]
    calls = [
        f"{p.relative_to(root)}:{i}"
        for p in sorted(root.rglob("*.py"))
        for i, line in enumerate(p.read_text().splitlines(), 1)
        if ".to_pandas_dtype()" in line and not line.lstrip().startswith("#")
    ]
    assert calls == ["model/arrays.py:" + str(_fallback_line())], calls


def _fallback_line() -> int:
    lines = Path(arrays.__file__).read_text().splitlines()
    return next(i for i, s in enumerate(lines, 1) if "np.dtype(kind.to_pandas_dtype())" in s)
