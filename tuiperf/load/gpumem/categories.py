"""What an allocation is for, told from its stack where the stack says it (PyTorch's own
memory profiler knows more, but its categories are not in the snapshot):

- `optimizer`: made inside `torch/optim/` (optimizer state: exp_avg, momentum buffers…)
- `backward`: made by the autograd engine (gradients and backward temporaries); its
  thread has no Python stack, so this needs C++ frames (`context="all"`) or
  torch.profiler's `autograd::engine::evaluate_function` ranges
- `parameters`: made by `Module._apply` (`model.cuda()`, `model.to(device)`)
- `activations`: made inside a module's forward (`Module._call_impl`)
- "" when the stack says none of these.
"""

from __future__ import annotations

OPTIMIZER = "optimizer"
BACKWARD = "backward"
PARAMETERS = "parameters"
ACTIVATIONS = "activations"
UNKNOWN = ""
CATEGORIES = (OPTIMIZER, BACKWARD, PARAMETERS, ACTIVATIONS, UNKNOWN)

_MODULE = "/torch/nn/modules/module.py"


def of_frames(frames: tuple[tuple[str, int, str], ...]) -> str:
    """The category of a snapshot stack (frames as (file, line, function))."""
    files = [f[0] for f in frames if type(f) is tuple and len(f) == 3]
    names = [f[2] for f in frames if type(f) is tuple and len(f) == 3]
    if any("/torch/optim/" in p for p in files):
        return OPTIMIZER
    if any("autograd::Engine" in n or "evaluate_function" in n for n in names) or any(
        "/torch/autograd/" in p for p in files
    ):
        return BACKWARD
    in_module = [n for p, n in zip(files, names) if p.endswith(_MODULE)]
    if "_apply" in in_module:
        return PARAMETERS
    if "_call_impl" in in_module or "_wrapped_call_impl" in in_module:
        return ACTIVATIONS
    return UNKNOWN


def of_range(name: str) -> str:
    """The category of a torch.profiler range that made an allocation."""
    if name.startswith("Optimizer."):
        return OPTIMIZER
    if name.startswith("autograd::engine"):
        return BACKWARD
    return UNKNOWN
