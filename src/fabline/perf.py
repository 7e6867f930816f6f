"""Performance plumbing, in one place: pausing the garbage collector and the fork worker pool.

Checking, diffing, re-parsing and rendering a 100k-GPU fabric allocate millions of small containers
that never form reference cycles; the cyclic collector's rescans of that growing heap cost a third
to a half of those runs (measured: check 10.1 s -> 6.5 s, link-mtu 1.6 s -> 0.4 s, a diff more than
half its time). :func:`paused_gc` (a context manager and a decorator, generators included) turns it
off for such a pass; reference counting still frees everything.

CPU-bound per-device passes go over forked worker processes (:func:`fork_pool`), which inherit the
parent's compiled data by ``fork`` instead of pickling it. :func:`worker_count` is the one rule for
how many: in-line below :data:`PARALLEL_MIN_DEVICES` devices or where fork is unavailable, else one
process per CPU, at most :data:`MAX_JOBS`. This module is the only one that starts worker
processes (``tests/unit/test_layering.py`` holds it to that): the check's, diff's and re-parse's
passes, the design renderer, the report writers (:data:`PARALLEL_MIN_RESULTS`) and the
collection's finisher (:func:`finish_workers`, :func:`fork_executor`) all use one pool, a
``ProcessPoolExecutor`` over ``fork`` whose workers are all started when it is made. A worker
that dies (killed, out of memory) fails the pass with ``BrokenProcessPool`` instead of leaving it
waiting forever, as ``multiprocessing.Pool`` did.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import gc
import inspect
import multiprocessing
import multiprocessing.context
import os
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, NoReturn, TypeVar

F = TypeVar("F", bound=Callable[..., Any])
T = TypeVar("T")
R = TypeVar("R")

#: Below this many devices a check or diff pass runs in-line: forking costs more than it saves.
PARALLEL_MIN_DEVICES = 2000
#: Re-parsing a snapshot costs more per device: it forks from this many devices.
PARALLEL_MIN_REPARSE = 200
#: Below this many results the reports are written in one process.
PARALLEL_MIN_RESULTS = 20_000
#: At most this many worker processes (the per-device passes stop scaling past it: the parent merges).
MAX_JOBS = 4


class _PausedGc(contextlib.ContextDecorator):
    """The collector paused for a ``with`` block, or around each call of a decorated function."""

    def __init__(self) -> None:
        self._was: list[bool] = []

    def __enter__(self) -> _PausedGc:
        self._was.append(gc.isenabled())
        gc.disable()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._was.pop():
            gc.enable()

    def __call__(self, func: F) -> F:
        if inspect.isgeneratorfunction(func):
            # A generator runs between next() calls: pause for its whole iteration.
            @functools.wraps(func)
            def gen(*args: Any, **kwargs: Any) -> Iterator[Any]:
                with paused_gc():
                    yield from func(*args, **kwargs)

            return gen  # type: ignore[return-value]

        @functools.wraps(func)
        def call(*args: Any, **kwargs: Any) -> Any:
            with paused_gc():
                return func(*args, **kwargs)

        return call  # type: ignore[return-value]


def paused_gc() -> _PausedGc:
    """Pause Python's cyclic garbage collector, as a context manager or a decorator.

    ``with paused_gc():`` pauses for a block, ``@paused_gc()`` for each call of a function (for the
    whole iteration of a generator). Nests: the collector comes back on only when the outermost pause ends, and only if it was on.

    Example:
        >>> import gc
        >>> with paused_gc():
        ...     inside = gc.isenabled()
        >>> inside, gc.isenabled()
        (False, True)
        >>> @paused_gc()
        ... def count():
        ...     yield gc.isenabled()
        >>> list(count()), gc.isenabled()
        ([False], True)
    """
    return _PausedGc()


class GcSweeper:
    """The cyclic garbage collector in batches during a collection (:meth:`tick` per device, then :meth:`close`).

    Left on, its full passes rescan everything the run keeps (the manifest's command records, the
    sessions' objects) over and over: about a sixth of the collecting process's CPU. Switched off,
    the reference cycles every SSH session leaves (a few hundred objects per device) would pile
    up. So it is off, and every :data:`EVERY` finished devices one pass frees the cycles and freezes
    what survives, so the next pass looks only at what is new.
    """

    #: Devices between two passes.
    EVERY = 128

    def __init__(self) -> None:
        self.was_enabled = gc.isenabled()
        self.count = 0
        gc.disable()

    def tick(self) -> None:
        """One device finished: every :data:`EVERY` devices, free the cycles and freeze what survives."""
        self.count += 1
        if self.count % self.EVERY == 0:
            gc.collect()
            gc.freeze()

    def close(self) -> None:
        """Unfreeze, and turn the collector back on if it was on."""
        gc.unfreeze()
        if self.was_enabled:
            gc.enable()


def freeze_inherited() -> None:
    """In a forked worker: keep the cyclic collector off the heap inherited from the parent.

    What the worker inherited never changes there; scanning it on every pass is wasted work. The
    collector stays on for what the worker makes itself.
    """
    gc.freeze()
    gc.enable()


def can_fork(*, alone: bool = False) -> bool:
    """Whether worker processes can be forked here.

    Linux only: macOS offers fork, but forking a process with system frameworks loaded is unsafe
    there. With ``alone``, only while this is the process's one thread (a fork copies no other
    thread, whatever locks it held).

    Example:
        >>> can_fork() == (sys.platform == "linux")
        True
    """
    if sys.platform != "linux" or "fork" not in multiprocessing.get_all_start_methods():
        return False
    return not alone or threading.active_count() == 1


def worker_count(n_items: int, jobs: int | None = None, *, minimum: int | None = None) -> int:
    """How many worker processes a pass over ``n_items`` items uses (1 = in-line).

    An explicit ``jobs`` wins (at least 1); otherwise in-line below ``minimum`` items (default
    :data:`PARALLEL_MIN_DEVICES`) or where :func:`can_fork` says no, else one per CPU, at most
    :data:`MAX_JOBS`.

    Example:
        >>> worker_count(10), worker_count(10, jobs=3), worker_count(10, jobs=0)
        (1, 3, 1)
    """
    if jobs is not None:
        return max(1, jobs)
    if n_items < (PARALLEL_MIN_DEVICES if minimum is None else minimum) or not can_fork():
        return 1
    return max(1, min(MAX_JOBS, os.cpu_count() or 1))


def fork_context() -> multiprocessing.context.ForkContext:
    """The ``fork`` start method (workers inherit the parent's memory: nothing is pickled going in)."""
    return multiprocessing.get_context("fork")


def finish_workers() -> int:
    """Worker processes for the collection's finisher: one per core, 1 to :data:`MAX_JOBS`.

    The collecting process mostly waits on devices (one SSH round trip after another): on two
    cores it used about 0.6 of one while the finisher parsed and wrote. With one finishing worker
    (one per *spare* core) the finishing was the collection's critical path: the last device was
    gathered 5 s before the last one was written (64 switches + 256 hosts), with one core idle.

    Example:
        >>> 1 <= finish_workers() <= MAX_JOBS
        True
    """
    return max(1, min(MAX_JOBS, os.cpu_count() or 1))


def _ready() -> int:
    return os.getpid()


def fork_executor(
    processes: int, *, initializer: Callable[..., object] | None = None, initargs: tuple[Any, ...] = ()
) -> ProcessPoolExecutor:
    """``processes`` forked worker processes as an executor, every one started before this returns.

    They are forked here, from the process as it is now: what a pass set up for them is theirs,
    and no worker is forked later from a process running the executor's own thread. Standard
    output is flushed first, so no worker inherits (and writes again) a buffered line.

    Raises:
        OSError: The processes could not be started.
        BrokenProcessPool: A worker died while starting (its ``initializer`` failed).
    """
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError, AttributeError):
            stream.flush()
    executor = ProcessPoolExecutor(
        max_workers=processes, mp_context=fork_context(), initializer=initializer, initargs=initargs
    )
    try:
        executor.submit(_ready).result()  # with fork, the first submission starts every worker
    except BaseException:
        stop_workers(executor)
        raise
    return executor


def stop_workers(executor: ProcessPoolExecutor) -> None:
    """Stop an executor now: end its worker processes, cancel what has not started, wait for its thread."""
    processes = list((getattr(executor, "_processes", None) or {}).values())
    for process in processes:
        if process.is_alive():
            process.terminate()
    # The executor's thread sees its workers gone, fails what was running and ends: none is left.
    executor.shutdown(wait=True, cancel_futures=True)
    for process in processes:
        process.join(5)


#: What a pass says when one of its workers died under it.
WORKER_DIED = "a worker process died (killed, or out of memory?)"


class ForkPool:
    """The worker processes of one pass (:func:`fork_pool`): ``imap``, ``map`` and ``submit``."""

    def __init__(self, executor: ProcessPoolExecutor) -> None:
        self.executor = executor

    def imap(self, fn: Callable[[T], R], items: Iterable[T], chunksize: int = 1) -> Iterator[R]:
        """``fn`` over ``items`` in the workers, results in order as they come (``chunksize`` per task)."""
        try:
            yield from self.executor.map(fn, items, chunksize=chunksize)
        except BrokenProcessPool as exc:
            raise BrokenProcessPool(WORKER_DIED) from exc

    def map(self, fn: Callable[[T], R], items: Iterable[T], chunksize: int = 1) -> list[R]:
        """``fn`` over ``items`` in the workers: every result, in order."""
        return list(self.imap(fn, items, chunksize))

    def submit(self, fn: Callable[..., R], *args: Any) -> Future[R]:
        """``fn(*args)`` in a worker."""
        return self.executor.submit(fn, *args)


@contextlib.contextmanager
def fork_pool(jobs: int) -> Iterator[ForkPool]:
    """A pool of ``jobs`` forked worker processes for the block.

    At the end of the block the workers finish what was submitted and exit; if the block is left
    by an exception (or a generator using the pool is closed), what has not started is cancelled
    and the workers are ended.

    Example:
        >>> import operator
        >>> with fork_pool(2) as pool:
        ...     pool.map(operator.neg, range(4), chunksize=2), pool.submit(operator.add, 2, 3).result()
        ([0, -1, -2, -3], 5)
    """
    executor = fork_executor(jobs)
    try:
        yield ForkPool(executor)
    except BaseException:
        stop_workers(executor)
        raise
    executor.shutdown(wait=True)


# --------------------------------------------------------------------------------------------
# Ending a command-line process

#: Whether this process runs one command line and nothing else (set by the CLI's entry).
_OWN_PROCESS = False
#: What :func:`keep_until_exit` keeps alive.
_KEPT: list[object] = []


class ForkedCall:
    """A function running in a forked child, its pickled return value coming back through a pipe.

    Made by :func:`fork_call`. :meth:`result` waits for the child and returns what the function
    returned, or None when it raised or the child died (the caller then does the work itself, and
    any error is raised and said where it always is). :meth:`cancel` ends the child (SIGTERM).
    """

    def __init__(self, pid: int, read_end: int) -> None:
        self._pid = pid
        self._read_end = read_end
        self._done = False

    def result(self) -> Any:
        """The child's return value (None if it raised or died); waits for the child to end."""
        import pickle

        try:
            with os.fdopen(self._read_end, "rb") as got:
                data = got.read()
        finally:
            self._reap()
        return pickle.loads(data) if data else None  # our own child's bytes, through our own pipe

    def cancel(self) -> None:
        """End the child without waiting for its result."""
        if not self._done:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self._pid, 15)
            with contextlib.suppress(OSError):
                os.close(self._read_end)
            self._reap()

    def _reap(self) -> None:
        if not self._done:
            self._done = True
            with contextlib.suppress(ChildProcessError):
                os.waitpid(self._pid, 0)


def fork_call(func: Callable[[], Any]) -> ForkedCall:
    """Run ``func()`` in a forked child while this process goes on; collect it with ``result()``.

    A plain fork and a pipe, no thread in this process, so a ``func`` that forks its own worker
    pool (a whole check) does so from a one-thread process. The child leaves with ``os._exit``,
    without this process's exit handlers. Only where :func:`can_fork` says so.

    Example:
        >>> call = fork_call(lambda: sum(range(10)))
        >>> call.result()
        45
        >>> fork_call(lambda: 1 / 0).result() is None
        True
    """
    import pickle

    read_end, write_end = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the child
        try:
            os.close(read_end)
            try:
                value = func()
                data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL) if value is not None else b""
            except BaseException:  # the parent does the work again and says the error
                data = b""
            with os.fdopen(write_end, "wb") as out:
                out.write(data)
        finally:
            os._exit(0)
    os.close(write_end)
    return ForkedCall(pid, read_end)


def own_process(own: bool) -> None:
    """Say whether this process runs only the command line being run (the ``fabline`` script,
    ``python -m fabline``), not a caller's program (tests, an embedding application).

    Only then does :func:`keep_until_exit` keep objects and :func:`finish` end the process
    without tearing it down.
    """
    global _OWN_PROCESS  # noqa: PLW0603 - one flag per process
    _OWN_PROCESS = own
    if not own:
        _KEPT.clear()


def keep_until_exit(*objects: object) -> None:
    """Keep ``objects`` alive until the process ends, when it ends by :func:`finish`.

    A large run builds millions of small objects (results, inventory variables, compiled rules);
    freeing them one by one when the command returns took 1.5 s on 100k GPUs and serves nothing
    when the process is about to end. Everything alive is moved out of the cyclic collector's
    sight too (``gc.freeze``): the objects made while it was paused would otherwise all be
    scanned by its next pass. In a caller's process this does nothing.
    """
    if _OWN_PROCESS:
        _KEPT.extend(objects)
        gc.freeze()


def finish(code: int) -> NoReturn:
    """End the command with exit status ``code``.

    In a process that runs only the command line: the output is flushed and the exit handlers
    run, as at a normal exit, then the process ends without freeing what the run built
    (``os._exit``). Otherwise ``SystemExit`` as usual (a caller's process goes on).
    """
    if _OWN_PROCESS:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except (OSError, ValueError):
            sys.exit(code)  # a closed or broken output: the interpreter reports it as it would
        atexit._run_exitfuncs()
        os._exit(code)
    sys.exit(code)


__all__ = [
    "MAX_JOBS",
    "PARALLEL_MIN_DEVICES",
    "PARALLEL_MIN_REPARSE",
    "PARALLEL_MIN_RESULTS",
    "WORKER_DIED",
    "ForkPool",
    "ForkedCall",
    "GcSweeper",
    "can_fork",
    "finish",
    "finish_workers",
    "fork_call",
    "fork_context",
    "fork_executor",
    "fork_pool",
    "freeze_inherited",
    "keep_until_exit",
    "own_process",
    "paused_gc",
    "stop_workers",
    "worker_count",
]
