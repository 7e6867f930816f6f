"""The standard input of the command a writable simulated device is running.

An exec channel's input (``ssh leaf 'sudo config apply-patch /dev/stdin' < patch.json``) or the
text piped into ``tee``; set by the server or the shell, read by the configuration handlers. A
context variable: each SSH session runs in its own asyncio task.
"""

from __future__ import annotations

import contextvars

STDIN: contextvars.ContextVar[str | None] = contextvars.ContextVar("fabline_sim_stdin", default=None)
