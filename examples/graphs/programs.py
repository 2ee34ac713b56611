"""Small PyTorch loops for the CUDA-graph, compile, Python-backtrace and ncu captures.

They are the source of the reports in tests/data/graphs (captured by capture.sh on one
H200). Each step is an NVTX range `step N`, and each loop reads `loss.item()` once at the
end of a step (the SYNC_LINE marker below shows the exact line).

    graphs    an MLP training step (forward, backward, SGD) captured once into a
              torch.cuda.CUDAGraph, plus a second graph for an eval forward pass;
              every step copies a new batch into the static input and replays both
    compile   a tiny MLP under torch.compile (default mode): step 0 compiles
    pybt      a tiny eager MLP loop; the `.item()` line is the host sync to find
    tiny      three small kernels, for a short `ncu --set full -c 3` capture

usage: python programs.py NAME [--steps N]
With no CUDA device the programs run on the CPU (a smoke test; graphs then run eagerly).
"""

from __future__ import annotations

import argparse
import contextlib
import time
from collections.abc import Iterator

import torch
import torch.nn as nn
import torch.nn.functional as F

CUDA = torch.cuda.is_available()
DEV = torch.device("cuda" if CUDA else "cpu")


@contextlib.contextmanager
def nvtx(name: str) -> Iterator[None]:
    if CUDA:
        torch.cuda.nvtx.range_push(name)
    try:
        yield
    finally:
        if CUDA:
            torch.cuda.nvtx.range_pop()


def mlp(dim: int, depth: int, classes: int) -> nn.Module:
    layers: list[nn.Module] = []
    for _ in range(depth):
        layers += [nn.Linear(dim, dim), nn.GELU()]
    return nn.Sequential(*layers, nn.Linear(dim, classes)).to(DEV)


def graphs(steps: int) -> float:
    dim, batch = 512, 256
    model = mlp(dim, 4, 10)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    static_x = torch.randn(batch, dim, device=DEV)
    static_y = torch.randint(0, 10, (batch,), device=DEV)

    def train_step() -> torch.Tensor:
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(static_x), static_y)
        loss.backward()
        opt.step()
        return loss

    def eval_step() -> torch.Tensor:
        with torch.no_grad():
            return model(static_x).argmax(1)

    if CUDA:
        with nvtx("warmup"):
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                for _ in range(3):
                    train_step()
                    eval_step()
            torch.cuda.current_stream().wait_stream(side)
        with nvtx("capture"):
            g_train, g_eval = torch.cuda.CUDAGraph(), torch.cuda.CUDAGraph()
            opt.zero_grad(set_to_none=True)
            with torch.cuda.graph(g_train):
                static_loss = train_step()
            with torch.cuda.graph(g_eval):
                static_pred = eval_step()
        torch.cuda.synchronize()
    lv = 0.0
    for step in range(steps):
        with nvtx(f"step {step}"):
            with nvtx("data"):
                static_x.copy_(torch.randn(batch, dim, device=DEV))
                static_y.copy_(torch.randint(0, 10, (batch,), device=DEV))
            if CUDA:
                with nvtx("train graph"):
                    g_train.replay()
                with nvtx("eval graph"):
                    g_eval.replay()
                loss, pred = static_loss, static_pred
            else:
                loss, pred = train_step(), eval_step()
            acc = (pred == static_y).float().mean()
            lv = loss.item() + 0 * acc.item()  # SYNC_LINE graphs
    return lv


def compiled(steps: int) -> float:
    dim, batch = 256, 128
    model = mlp(dim, 3, 10)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    fwd = torch.compile(model)
    lv = 0.0
    for step in range(steps):
        with nvtx(f"step {step}"):
            x = torch.randn(batch, dim, device=DEV)
            y = torch.randint(0, 10, (batch,), device=DEV)
            with nvtx("forward"):
                loss = F.cross_entropy(fwd(x), y)
            with nvtx("backward"):
                opt.zero_grad(set_to_none=True)
                loss.backward()
            with nvtx("optimizer"):
                opt.step()
            lv = loss.item()  # SYNC_LINE compile
    return lv


def pybt(steps: int) -> float:
    dim, batch = 256, 64
    model = mlp(dim, 2, 10)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(batch, dim, device=DEV)
    y = torch.randint(0, 10, (batch,), device=DEV)
    lv = 0.0
    for step in range(steps):
        with nvtx(f"step {step}"):
            loss = F.cross_entropy(model(x), y)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            host = x[:4].cpu()  # COPY_LINE pybt
            lv = loss.item() + 0 * float(host[0, 0])  # SYNC_LINE pybt
    return lv


def tiny(steps: int) -> float:
    a = torch.randn(1024, 1024, device=DEV)
    b = torch.randn(1024, 1024, device=DEV)
    c = (a @ b).relu().sum()
    return float(c.item())


PROGRAMS = {"graphs": graphs, "compile": compiled, "pybt": pybt, "tiny": tiny}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("name", choices=sorted(PROGRAMS))
    ap.add_argument("--steps", type=int, default=10)
    a = ap.parse_args()
    torch.manual_seed(0)
    t0 = time.perf_counter()
    lv = PROGRAMS[a.name](a.steps)
    if CUDA:
        torch.cuda.synchronize()
    print(f"{a.name}: {a.steps} steps in {time.perf_counter() - t0:.3f} s, loss {lv:.4f}")


if __name__ == "__main__":
    main()
