"""A Dask scheduler preload for the tests: every task that enters the scheduler, pickled to a file.

``dask scheduler --preload tests/integration/dask_capture.py`` with ``FABLINE_TEST_CAPTURE=FILE``:
the test then reads exactly what a client submitted through the scheduler (the task's function and
arguments, as the scheduler holds them) and looks for a secret in it.
"""

from __future__ import annotations

import os
import pickle
from pathlib import Path
from typing import Any

from distributed.diagnostics.plugin import SchedulerPlugin


class Capture(SchedulerPlugin):
    """Appends each new task's run_spec, pickled, to the capture file."""

    def __init__(self, path: str) -> None:
        self.path = path

    def update_graph(self, scheduler: Any, *, keys: Any, tasks: Any = (), **kwargs: Any) -> None:
        with Path(self.path).open("ab") as fh:
            for key in tasks or keys:
                ts = scheduler.tasks.get(key)
                if ts is not None:
                    fh.write(pickle.dumps(ts.run_spec))


def dask_setup(scheduler: Any) -> None:
    """The preload's entry point."""
    scheduler.add_plugin(Capture(os.environ["FABLINE_TEST_CAPTURE"]))
