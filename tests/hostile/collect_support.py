"""Running fabline on hostile input without letting a regression hang or exhaust the machine.

Every case runs ``python -m fabline`` in a child process with a wall-clock timeout and an
address-space limit, so a bug that would read ``/dev/zero`` forever or block on a FIFO fails the
test instead of stopping CI.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

#: Address space a fabline child may use (its threads' stacks count too): far below the
#: gigabytes the unbounded behaviours reached, far above what a correct run needs.
CHILD_MEMORY = 2 * 1024**3


@dataclass(frozen=True)
class Ran:
    """A finished child: exit code and both streams."""

    code: int
    out: str
    err: str


#: Python code that limits its own address space, then runs ``fabline`` (a ``preexec_fn`` would
#: be unsafe: the tests run the simulator's thread in this process).
BOUNDED = (
    "import resource, runpy, sys; "
    f"resource.setrlimit(resource.RLIMIT_AS, ({CHILD_MEMORY}, {CHILD_MEMORY})); "
    "sys.argv = ['fabline', *sys.argv[1:]]; "
    "runpy.run_module('fabline', run_name='__main__')"
)


def fabline(
    *args: str | Path, timeout: float = 60.0, cwd: Path | None = None, env: dict[str, str] | None = None
) -> Ran:
    """Run ``fabline ARGS`` in a bounded child process.

    Raises:
        subprocess.TimeoutExpired: The child ran past ``timeout`` (it is killed first).
    """
    full_env = {**os.environ, "COLUMNS": "200", **(env or {})}
    done = subprocess.run(
        [sys.executable, "-c", BOUNDED, *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
        env=full_env,
        check=False,
    )
    return Ran(done.returncode, done.stdout, done.stderr)


def write(path: Path, text: str) -> Path:
    """Write dedented text (creating folders) and return the path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"), "utf-8")
    return path


def one_line_error(ran: Ran) -> str:
    """The single ``fabline: error:`` line of a run that exited 2 (asserts the shape)."""
    assert ran.code == 2, (ran.code, ran.err[-2000:])
    lines = [line for line in ran.err.splitlines() if line.strip()]
    assert len(lines) == 1, ran.err[-2000:]
    assert lines[0].startswith("fabline: error: "), lines[0]
    assert "Traceback" not in ran.err
    return lines[0]
