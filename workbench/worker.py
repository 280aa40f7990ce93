"""A thread that runs tasks handed to it, in order, which a Ctrl-C cannot wedge.

Python raises KeyboardInterrupt in the main thread wherever it looks for pending
signals (as a function starts, after a call returns, at the end of a loop's turn), also
inside `threading`'s own Python code: a `Condition` whose lock was taken but whose
`__enter__` had not returned keeps it taken for good. `concurrent.futures` waits and
submits through such conditions, and `Thread.start` waits on one; after a Ctrl-C there
the worker thread blocked on that lock, and the CLI hung at its exit (about 1
interrupted ingest in 160 under load). Here the calling thread touches only what is
written in C: a `SimpleQueue` hands the tasks over, a raw lock per task says it ended,
and the thread is started with `_thread`, which does not wait for it. An interrupt
lands before or after each of them, never inside."""

from __future__ import annotations

import _thread
import weakref
from collections.abc import Callable
from queue import SimpleQueue

# How often a wait for a task looks for Ctrl-C. A wait with no timeout is not woken by a
# Ctrl-C that the system hands to another thread, so the interrupt would wait for the
# task to end.
WAIT_STEP = 0.05


class Cancelled(Exception):
    """The outcome of a task the worker did not run: its block raised first, or the
    worker was dropped unclosed."""


class Pending:
    """A task handed to a `Worker`, and its outcome once it has run."""

    def __init__(self, task: Callable, args: tuple, kwargs: dict):
        self._call = (task, args, kwargs)
        self._outcome: list[tuple[bool, object]] = []  # appended once, before `_ended` is released
        self._ended = _thread.allocate_lock()
        self._ended.acquire()

    def done(self) -> bool:
        return bool(self._outcome)

    def result(self):
        """The task's result, or its exception raised here; waited for in steps of
        WAIT_STEP seconds, so that a Ctrl-C stops the wait (and only the wait)."""
        while not self._outcome:
            self._ended.acquire(timeout=WAIT_STEP)
        ok, value = self._outcome[0]
        if ok:
            return value
        raise value

    def _run(self, cancelled: bool) -> None:
        task, args, kwargs = self._call
        try:
            if cancelled:
                raise Cancelled(task)
            self._outcome.append((True, task(*args, **kwargs)))
        except BaseException as error:  # the caller sees it in `result`
            self._outcome.append((False, error))
        finally:
            self._ended.release()


class Worker:
    """One thread running the tasks handed to it by `submit`, in order. Used as a
    context manager: on leaving, every task handed over has ended (those not begun are
    not run if the block raised), and so has the thread."""

    def __init__(self):
        self._tasks: SimpleQueue[Pending | None] = SimpleQueue()
        self._cancelled: list[bool] = []  # once not empty, tasks not begun are not run
        self._finished: list[bool] = []  # appended once, before `_ended` is released
        self._closing = False
        self._ended = _thread.allocate_lock()
        self._ended.acquire()
        # The thread holds no reference to the worker: one dropped unclosed (a Ctrl-C
        # as its block began or ended) is collected, and its thread told to end.
        self._dropped = weakref.finalize(self, _cancel, self._tasks, self._cancelled)
        _thread.start_new_thread(_serve, (self._tasks, self._cancelled, self._finished, self._ended))

    def submit(self, task: Callable, *args, **kwargs) -> Pending:
        if self._closing:  # its thread would never run it
            raise RuntimeError("a closed worker takes no task")
        pending = Pending(task, args, kwargs)
        self._tasks.put(pending)
        return pending

    def close(self, wait: bool = True) -> None:
        """No more tasks: the thread ends once those handed over have. `wait` waits for
        that; a Ctrl-C during the wait does not end it (a task may still be using what
        the caller is about to use or close), and is raised once it is over."""
        interrupted, self._closing = False, True
        try:
            self._tasks.put(None)
            self._dropped.detach()  # the tasks handed over run though the worker be dropped
        except KeyboardInterrupt:  # raised once the thread is told
            interrupted = True
        while wait and not self._finished:
            try:
                self._ended.acquire(timeout=WAIT_STEP)
            except KeyboardInterrupt:
                interrupted = True
        if interrupted:
            raise KeyboardInterrupt

    def __enter__(self) -> Worker:
        return self

    def __exit__(self, kind, error, trace) -> None:
        if kind is not None:
            self._cancelled.append(True)
        self.close()


def _serve(tasks: SimpleQueue, cancelled: list, finished: list, ended) -> None:
    try:
        while (pending := tasks.get()) is not None:
            pending._run(cancelled=bool(cancelled))
    finally:
        finished.append(True)
        ended.release()


def _cancel(tasks: SimpleQueue, cancelled: list) -> None:
    cancelled.append(True)
    tasks.put(None)
