"""The `nsys analyze` text parser the parity tests use reads the references right."""

from __future__ import annotations

from tests.support.analysis import reference


def test_parser_reads_every_rule_of_a_reference() -> None:
    ref = reference("cnn_osrt")
    assert set(ref) >= {
        "cuda_memcpy_async",
        "cuda_memcpy_sync",
        "cuda_memset_sync",
        "cuda_api_sync",
        "gpu_gaps",
        "gpu_time_util",
    }
    rows = ref["cuda_memcpy_async"]["rows"]
    assert len(rows) == 50 and ref["cuda_memcpy_async"]["truncated"]
    assert rows[0] == [
        "1,860,535",
        "7,727,917,457",
        "Pageable",
        "Device",
        "9.634",
        "12,197",
        "0",
        "1",
        "",
        "7",
        "cudaMemcpyAsync_v3020",
    ]
    assert ref["cuda_memcpy_sync"]["rows"] == []
