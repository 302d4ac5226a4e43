"""A background thread that reads ahead: the blocks of a file are read and parsed while the
consumer learns from the current one (:func:`onlinelearn.io.iter_svmlight_chunks` with
``prefetch=True``)."""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator


class _Raised:
    """An exception of the reading thread, to be raised again in the consumer's."""

    __slots__ = ("exc",)

    def __init__(self, exc: BaseException):
        self.exc = exc


_END = object()


def _prefetched(items: Iterator, depth: int = 2) -> Iterator:
    """The items of ``items``, produced by a background thread at most ``depth`` items ahead.

    For the blocks of a file: reading, decompressing and the compiled parser release the GIL,
    so the next blocks are read and parsed while the consumer learns from the current one (as
    Vowpal Wabbit's parser thread does).  An exception of the thread is raised here, at its
    place in the sequence; closing this generator stops the thread and waits for it, so the
    file can be closed after it."""
    q: queue.Queue = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def put(item) -> bool:
        while not stop.is_set():
            try:
                q.put(item, timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    def work():
        try:
            for item in items:
                if not put(item):
                    return
            put(_END)
        except BaseException as exc:  # noqa: BLE001 - handed to the consumer
            put(_Raised(exc))
        finally:
            if stop.is_set() and hasattr(items, "close"):
                items.close()

    thread = threading.Thread(target=work, name="svmlight-reader", daemon=True)
    thread.start()
    try:
        while True:
            item = q.get()
            if item is _END:
                return
            if isinstance(item, _Raised):
                raise item.exc
            yield item
    finally:
        stop.set()
        thread.join()
