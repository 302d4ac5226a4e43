"""The readers-writer lock of ``onlinelearn serve``: predictions read the model together, the
writer (or a one-row learn in the event loop) changes it alone."""

from __future__ import annotations

import threading


class _RWLock:
    """Many readers or one writer.  A waiting writer goes before new readers, and the readers
    waiting when a writer releases the lock go before its next write (the writer thread takes
    the lock again at once while a stream keeps it busy: without their turn, they would wait
    for the end of the stream)."""

    def __init__(self):
        self._cond = threading.Condition()
        self._readers = 0
        self._writer = False
        self._waiting_writers = 0
        self._waiting_readers = 0
        self._readers_turn = False

    def _readable(self) -> bool:
        return not self._writer and (self._readers_turn or not self._waiting_writers)

    def acquire_read(self):
        with self._cond:
            self._waiting_readers += 1
            while not self._readable():
                self._cond.wait()
            self._waiting_readers -= 1
            self._readers += 1
            if not self._waiting_readers:
                self._readers_turn = False

    def try_acquire_read(self) -> bool:
        """acquire_read if it would not wait, else False at once."""
        with self._cond:
            if not self._readable():
                return False
            self._readers += 1
            return True

    def release_read(self):
        with self._cond:
            self._readers -= 1
            if self._readers == 0 and self._waiting_writers:  # (only writers wait for readers)
                self._cond.notify_all()

    def acquire_write(self):
        with self._cond:
            self._waiting_writers += 1
            while self._writer or self._readers or self._readers_turn:
                self._cond.wait()
            self._waiting_writers -= 1
            self._writer = True

    def try_acquire_write(self) -> bool:
        """acquire_write if no one holds or waits for the lock, else False at once."""
        with self._cond:
            if self._writer or self._readers or self._waiting_writers or self._readers_turn:
                return False
            self._writer = True
            return True

    def release_write(self):
        with self._cond:
            self._writer = False
            self._readers_turn = self._waiting_readers > 0
            self._cond.notify_all()
