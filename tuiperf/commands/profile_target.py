"""The program `tuiperf profile` runs: its command line read, checked, and the report named."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from tuiperf.errors import UsageError

#: `python`, `python3`, `python3.12`, `/usr/bin/python3` ...
_PYTHON = re.compile(r"python(\d+(\.\d+)?)?$")
#: interpreter options that take the next word as their value
_FLAGS_WITH_VALUE = ("-X", "-W")
#: a main script that mentions these drives its steps with tuiperf.torch.profile_steps
_STEP_HOOK = re.compile(r"tuiperf\.torch|from\s+tuiperf\s+import\s+torch|profile_steps")


@dataclass(frozen=True)
class Target:
    """The user's command, and where it is a Python program, its parts."""

    argv: list[str]  # what runs (a bare `train.py` gets this interpreter in front)
    python: str | None = None  # the interpreter, for a Python program
    flags: tuple[str, ...] = ()  # interpreter options before the script
    script: Path | None = None
    module: str | None = None  # `python -m MODULE`
    args: tuple[str, ...] = ()  # the program's own arguments

    @property
    def name(self) -> str:
        """A short name for the report: the script's stem, the module's or the command's."""
        if self.script is not None:
            raw = self.script.stem
        elif self.module is not None:
            raw = self.module.rsplit(".", 1)[-1]
        else:
            raw = Path(self.argv[0]).name
        return re.sub(r"[^A-Za-z0-9_-]+", "_", raw).strip("_") or "program"

    def torch_argv(self) -> list[str]:
        """The same program run under torch.profiler by tuiperf/torch.py's `main`, loaded by
        its path: the program's Python needs torch, not tuiperf (`-m tuiperf.torch` would)."""
        if self.python is None:
            raise UsageError(
                f"{self.argv[0]}: without nsys, tuiperf profile runs Python programs only "
                "(python SCRIPT ARGS, python -m MODULE ARGS or SCRIPT.py ARGS)"
            )
        main = ["-m", self.module] if self.module is not None else [str(self.script)]
        return [self.python, *self.flags, "-c", _BOOT.format(path=str(_TORCH_PY)), *main,
                *self.args]  # fmt: skip


#: tuiperf.torch's source file, and the `python -c` code that runs its `main`
_TORCH_PY = Path(__file__).resolve().parents[1] / "torch.py"
_BOOT = (
    "import importlib.util as u, sys; s = u.spec_from_file_location('tuiperf_torch_run', "
    "{path!r}); m = u.module_from_spec(s); s.loader.exec_module(m); "
    "sys.exit(m.main(sys.argv[1:]))"
)


def parse_target(cmd: list[str]) -> Target:
    """Read `python [OPTIONS] SCRIPT ARGS`, `python -m MODULE ARGS`, `SCRIPT.py ARGS` or any
    other command (run as it is, by nsys only)."""
    if not cmd:
        raise UsageError("no program given: tuiperf profile [OPTIONS] -- python train.py ARGS")
    first = cmd[0]
    if first.endswith(".py"):
        # absolute: found through a relative PATH entry, sys.executable is relative too
        python = os.path.abspath(sys.executable)
        return Target([python, *cmd], python, (), Path(first), None, tuple(cmd[1:]))
    if not _PYTHON.match(os.path.basename(first)):
        return Target(list(cmd))
    flags: list[str] = []
    i = 1
    while i < len(cmd) and cmd[i].startswith("-") and cmd[i] != "-":
        a = cmd[i]
        if a == "-m":
            if i + 1 >= len(cmd):
                raise UsageError(f"{first} -m: no module named")
            return Target(list(cmd), first, tuple(flags), None, cmd[i + 1], tuple(cmd[i + 2 :]))
        if a.startswith("-c"):
            raise UsageError("tuiperf profile runs a script or -m MODULE, not python -c")
        flags.append(a)
        if a in _FLAGS_WITH_VALUE and i + 1 < len(cmd):
            flags.append(cmd[i + 1])
            i += 1
        i += 1
    if i >= len(cmd) or cmd[i] == "-":
        raise UsageError(f"{shlex.join(cmd)}: no script to run")
    return Target(list(cmd), first, tuple(flags), Path(cmd[i]), None, tuple(cmd[i + 1 :]))


def check_target(t: Target) -> None:
    """One clear line, before anything runs, when the script or the command is missing."""
    if t.script is not None and not t.script.is_file():
        why = "is a directory" if t.script.is_dir() else "no such file"
        raise UsageError(f"{t.script}: {why}")
    exe = t.python or t.argv[0]
    if shutil.which(exe) is None:
        raise UsageError(f"{exe}: command not found")


def uses_step_hook(t: Target) -> bool:
    """Whether the main script names tuiperf.torch / profile_steps (read as text, not run)."""
    if t.script is None:
        return False
    try:
        return _STEP_HOOK.search(t.script.read_text(errors="replace")) is not None
    except OSError:
        return False


def report_base(folder: Path, name: str) -> Path:
    """`folder/tuiperf_<name>_<n>` for the first n no file of that stem uses yet (so no
    report, nor its export, is ever overwritten)."""
    taken = {p.name.split(".", 1)[0] for p in folder.glob(f"tuiperf_{name}_*")}
    n = 1
    while f"tuiperf_{name}_{n}" in taken:
        n += 1
    return folder / f"tuiperf_{name}_{n}"
