"""A file stream's next batches, read and tokenized ahead of the trainer.

`Prefetcher` uses one background thread of the trainer's process (the Rust tokenizer and torch
release the GIL): enough for a trial on CPU, which has its cores busy training.
`ProcessPrefetcher` uses worker processes, for a trial on a GPU with spare CPUs. Worker w of W
serves batches w, w + W, w + 2W, ... of the sequential read from a start position: each reads
the stream in full (the shuffle buffer needs every example in order) and tokenizes only its own
batches, so tokenizing, the costly part, is split W ways. Either way a request at another
position than the next (a resumed trial) starts over there, and no batch differs from the
stream's own.
"""

import multiprocessing
import os
import queue
import weakref
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import numpy as np

from orchestrator.data.files import DataError

__all__ = ["Prefetcher", "ProcessPrefetcher"]

DEPTH = 4  # batches each worker process holds ready


class Prefetcher:
    """The next batch (the next position, same count) made in a background thread while the
    trainer uses this one; any other request is served directly."""

    def __init__(self, take: Callable[[int, int], np.ndarray]) -> None:
        self._take = take
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="orch-prefetch")
        self._next: tuple[int, int, Future] | None = None

    def take(self, position: int, count: int) -> np.ndarray:
        if self._next is not None and self._next[:2] == (position, count):
            batch = self._next[2].result()
        else:
            if self._next is not None:
                self._next[2].exception()  # the stream is not thread-safe: let that read end first
            batch = self._take(position, count)
        self._next = (position + count, count, self._pool.submit(self._take, position + count, count))
        return batch


def _serve(stream: Any, start: int, count: int, worker: int, workers: int, out: Any) -> None:
    """A worker process: this worker's batches of the read from `start`, in order, into `out`
    (which blocks when DEPTH are waiting); an error is sent on for the trainer to raise."""
    parent = os.getppid()
    position, index = start, 0
    try:
        while True:
            pairs = stream.read(position, count)
            if index % workers == worker:
                _put(out, stream.encode(pairs), parent)
            position, index = position + count, index + 1
    except Exception as error:  # DataError, a broken file: the trainer's to raise
        _put(out, error, parent)


def _put(out: Any, item: Any, parent: int) -> None:
    """Wait for room in `out`; exit when the trainer is gone (killed: nobody will read)."""
    while True:
        try:
            out.put(item, timeout=1.0)
            return
        except queue.Full:
            if os.getppid() != parent:
                raise SystemExit(0) from None


def _stop(processes: list) -> None:
    for process in processes:
        process.terminate()
    for process in processes:
        process.join(timeout=10)


class ProcessPrefetcher:
    """Batches of `stream` (a picklable `FileStream`) made by `workers` processes, DEPTH ahead
    each. The processes end with the prefetcher, or at `close`."""

    def __init__(self, stream: Any, workers: int) -> None:
        self._stream, self._workers = stream, workers
        self._context = multiprocessing.get_context("spawn")  # fork is unsafe in Ray's threaded workers
        self._queues: list = []
        self._processes: list = []
        self._next: tuple[int, int] | None = None
        self._index = 0
        self._finalizer: weakref.finalize | None = None

    def take(self, position: int, count: int) -> np.ndarray:
        if self._next != (position, count):
            self._start(position, count)
        worker = self._index % self._workers
        result = self._get(worker)
        if isinstance(result, Exception):
            self.close()
            raise result
        self._index += 1
        self._next = (position + count, count)
        return result

    def close(self) -> None:
        if self._finalizer is not None:
            self._finalizer()
        self._next = None

    def _get(self, worker: int) -> Any:
        while True:
            try:
                return self._queues[worker].get(timeout=1.0)
            except queue.Empty:
                process = self._processes[worker]
                if not process.is_alive():
                    self.close()
                    raise DataError(
                        f"a data prefetch process ended without a word (exit code {process.exitcode}: "
                        "killed by a signal or for memory); rerun the sweep to resume the trial"
                    ) from None

    def _start(self, position: int, count: int) -> None:
        self.close()
        self._queues = [self._context.Queue(DEPTH) for _ in range(self._workers)]
        self._processes = [
            self._context.Process(
                target=_serve,
                args=(self._stream, position, count, worker, self._workers, self._queues[worker]),
                daemon=True,
                name=f"orch-prefetch-{worker}",
            )
            for worker in range(self._workers)
        ]
        for process in self._processes:
            process.start()
        self._finalizer = weakref.finalize(self, _stop, self._processes)
        self._index = 0
