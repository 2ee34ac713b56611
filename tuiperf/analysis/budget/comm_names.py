"""Names of communication kernels (NCCL and its kin), shared by the step budget, the
communication analysis and diff."""

from __future__ import annotations

import re

#: a communication kernel (NCCL, RCCL, and collectives by name)
COMM_KERNEL = re.compile(
    r"nccl|rccl|all_?reduce|all_?gather|reduce_?scatter|all_?to_?all|sendrecv", re.IGNORECASE
)
