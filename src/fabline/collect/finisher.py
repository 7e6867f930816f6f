"""Finishing gathered devices: parse the outputs, assemble the state, write the device's files.

The collecting threads only talk SSH. Each gathered device (:class:`~fabline.collect.device.Gathered`:
raw outputs, already redacted, and command records) goes to the finisher, which parses it,
assembles its state and writes ``raw/<device>/`` and ``state/<device>.json`` atomically.

On Linux, the finisher is worker processes (one per core, :func:`~fabline.perf.finish_workers`)
forked before the first SSH session starts (so they share the parsers already imported and no
thread is running when they are made):

- parsing is CPU work; in the collecting process it would hold the interpreter lock the SSH
  sessions need, so on two cores the collection waited on parsing rather than on the network;
- a few writers create the snapshot's files one after another: tens of thousands of small raw
  files created by 32 threads at once cost several times the system time on ext4 (measured in
  ``docs/benchmarks.md``).

Elsewhere, or when a worker process dies, a single thread in the collecting process does the same
work; nothing gathered is dropped either way.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

from fabline.collect.device import DeviceResult, Gathered, finish_device
from fabline.collect.writer import write_device
from fabline.perf import can_fork, finish_workers, fork_executor, freeze_inherited


def finish_and_write(out: Path, gathered: Gathered) -> DeviceResult:
    """Parse and assemble one gathered device, write its files.

    The result goes back without the raw text and with only the state's errors (what the manifest
    and the progress report need): the rest is on disk.
    """
    return write_result(out, finish_device(gathered))


def write_result(out: Path, result: DeviceResult) -> DeviceResult:
    """Write one finished device's files; keep in the result only what the manifest needs.

    Also the client's half of a distributed collection (:mod:`fabline.collect.distributed`), whose
    site collectors send finished devices back.
    """
    result.state_digest = write_device(out, result.name, result.state, result.raw, result.manifest_entry())
    result.raw = {}
    result.state = {"status": result.state.get("status"), "errors": result.state.get("errors", [])}
    return result


def _worker_init(parent: int) -> None:
    # Ctrl-C goes to the whole process group: the parent decides what happens (it finishes what was
    # gathered, then stops), so the worker must not die of the same signal mid-write.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _die_with(parent)
    freeze_inherited()


#: prctl(2) option: the signal the kernel sends this process when its parent dies.
_PR_SET_PDEATHSIG = 1


def _die_with(parent: int) -> None:
    """End this worker when the collecting process dies, even by SIGKILL.

    The worker holds a copy of every pipe the parent had: left behind, it would wait on its task
    queue forever and keep the caller's output pipes open (a killed run then never "ends").
    """
    if sys.platform != "linux":
        return
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(1)


class Finisher:
    """Finishes gathered devices in forked worker processes (a thread where fork is unavailable).

    Create it before any collecting thread starts; :meth:`submit` from any thread; :meth:`close`
    waits for every device submitted.
    """

    def __init__(self, out: Path, processes: int | None = None, use_processes: bool = True) -> None:
        self.out = out
        self._lock = threading.Lock()
        self._thread: ThreadPoolExecutor | None = None
        self._pool: Executor | None = None
        if use_processes and can_fork():
            # The workers start now, while this is still the only thread of the collection.
            with contextlib.suppress(OSError, BrokenProcessPool):
                self._pool = fork_executor(
                    processes or finish_workers(), initializer=_worker_init, initargs=(os.getpid(),)
                )
        self.in_process = self._pool is None
        #: Why the worker process stopped serving, when it did (the run went on in this process).
        self.lost_worker: str | None = None

    def _fallback(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._thread is None:
                self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="fabline-finish")
            return self._thread

    def submit(self, gathered: Gathered) -> Future[DeviceResult]:
        """Queue one gathered device; its future gives the :class:`DeviceResult` once it is written."""
        pool = self._pool
        if pool is None:
            return self._fallback().submit(finish_and_write, self.out, gathered)
        result: Future[DeviceResult] = Future()
        try:
            inner = pool.submit(finish_and_write, self.out, gathered)
        except (BrokenProcessPool, RuntimeError):
            self._broken()
            return self._fallback().submit(finish_and_write, self.out, gathered)

        def relay(done: Future[DeviceResult]) -> None:
            exc = done.exception()
            if isinstance(exc, BrokenProcessPool):
                # The worker died (killed, out of memory): finish this device here instead.
                self._broken()
                again = self._fallback().submit(finish_and_write, self.out, gathered)
                again.add_done_callback(lambda f: _copy(f, result))
                return
            _copy(done, result)

        inner.add_done_callback(relay)
        return result

    def _broken(self) -> None:
        with self._lock:
            pool, self._pool = self._pool, None
            self.in_process = True
            self.lost_worker = "the finishing worker process died (killed, or out of memory?)"
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=False)

    def close(self) -> None:
        """Wait for every submitted device, then stop the workers."""
        if self._pool is not None:
            self._pool.shutdown(wait=True)
        if self._thread is not None:
            self._thread.shutdown(wait=True)


def _copy(source: Future[DeviceResult], target: Future[DeviceResult]) -> None:
    exc = source.exception()
    if exc is not None:
        target.set_exception(exc)
    else:
        target.set_result(source.result())
