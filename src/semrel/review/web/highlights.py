"""Chunk shading computed off the request path: the model takes about a second per long chunk
on a CPU, so the page shows the texts at once and fetches the shading after. One worker
thread computes, results are kept by text hash, and the next tasks are prepared ahead."""

from __future__ import annotations

import threading
from collections import OrderedDict
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Callable, Sequence

from ..highlight import shades
from ..tasks import Task

Spans = Sequence[tuple[int, int, float]]
Segments = list[tuple[str, float]]
KEEP = 512


class Busy(Exception):
    """As many requests as may wait for shadings wait already: one more would hold a thread that decisions need."""


def segments(text: str, spans: Spans) -> Segments:
    """The text cut into (piece, strength) in order, strength 0 for unshaded pieces, so a page
    can build it from text nodes without computing offsets (Python and JavaScript count
    characters differently)."""
    out: Segments = []
    at = 0
    for start, end, strength in shades(spans):
        if start < at:
            continue
        if start > at:
            out.append((text[at:start], 0.0))
        out.append((text[start:end], round(strength, 3)))
        at = end
    if at < len(text):
        out.append((text[at:], 0.0))
    return out


class Highlights:
    def __init__(self, compute: Callable[[Task], Spans], waiting: int):
        """`waiting`: the requests that may wait for a shading at once (fewer than the server's threads)."""
        self.compute = compute
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="highlight")
        self.futures: OrderedDict[str, Future] = OrderedDict()
        self.lock = threading.Lock()
        self.waiting = threading.BoundedSemaphore(waiting)

    def request(self, task: Task) -> Future:
        """The future shading of `task` (started now unless already known)."""
        with self.lock:
            future = self.futures.get(task.hash)
            if future is None:
                future = self.futures[task.hash] = self.pool.submit(lambda: segments(task.chunk, self.compute(task)))
                while len(self.futures) > KEEP:
                    self.futures.popitem(last=False)
            return future

    def wait(self, task: Task) -> Segments:
        """The shading of `task`, waited for; Busy where `waiting` requests wait already (each shading takes about a second
        of the one worker, so a stream of requests for other chunks would hold every server thread)."""
        future = self.request(task)
        if future.done():
            return future.result()
        if not self.waiting.acquire(blocking=False):
            raise Busy
        try:
            return future.result()
        finally:
            self.waiting.release()

    def close(self) -> None:
        self.pool.shutdown(wait=False, cancel_futures=True)
