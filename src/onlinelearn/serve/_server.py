"""The model server of ``onlinelearn serve``, without HTTP: the model, its readers-writer lock,
the writer thread that applies the learn requests in arrival order, the snapshots and the
counters of ``/metrics``.  A single-row request goes to the model's one-row step (``_road``);
a stream's blocks of rows (``_stream``) are learned in order, call by call."""

from __future__ import annotations

import math
import os
import queue
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ._lock import _RWLock
from ._parse import Row, _one_line, _plain_list, _probabilities_of, _RequestParsing
from ._road import Road, _plain
from ._stream import _StreamParsing

#: the largest request body accepted (bytes); larger bodies get 413
DEFAULT_MAX_BODY = 16 * 2**20
#: the most rows the writer applies in one call
MAX_BATCH_ROWS = 20000


@dataclass
class _Job:
    """A learn request in the writer's queue: a batch ``X`` (CSR) with labels ``y`` and
    weights ``w``, one ``row`` for the one-row step, or a block of a stream (``stream`` set,
    ``lines`` the line of each row in the stream)."""

    X: object = None
    y: np.ndarray | None = None
    w: np.ndarray | None = None
    row: Row | None = None
    stream: object = None
    lines: np.ndarray | None = None
    done: threading.Event = field(default_factory=threading.Event)
    result: dict | None = None
    error: str | None = None
    #: the line of the stream at which the block stopped (with ``error``)
    error_line: int | None = None
    #: called by the writer thread once the job is done (an event loop's wake-up)
    waker: Callable | None = None

    @property
    def n(self) -> int:
        return 1 if self.row is not None else self.X.shape[0]

    def labels(self):
        return np.array([self.row.label]) if self.row is not None else self.y


def _is_regressor(est) -> bool:
    # scikit-learn >= 1.6 says it in the estimator's tags (``_estimator_type`` is gone in 1.9)
    from sklearn.base import is_regressor

    return bool(is_regressor(est)) or getattr(est, "_estimator_type", None) == "regressor"


class ModelServer(_RequestParsing, _StreamParsing):
    """The model, its lock, the writer thread and the counters (no HTTP here)."""

    def __init__(
        self,
        estimator,
        snapshot_path=None,
        snapshot_every: int | None = 10000,
        snapshot_seconds: float | None = 60.0,
        max_body: int = DEFAULT_MAX_BODY,
    ):
        for name, v in (("snapshot_every", snapshot_every), ("snapshot_seconds", snapshot_seconds)):
            if v is not None and not (v > 0 and math.isfinite(v)):
                raise ValueError(f"{name} must be a positive number or None, got {v!r}")
        from onlinelearn.registry import spec_of_estimator

        spec = spec_of_estimator(estimator)
        if spec is not None and spec.task == "ranking":
            raise ValueError(
                f"serve takes classifiers and regressors; {type(estimator).__name__} is a "
                "label-ranking model (multi-label rows are not served yet)"
            )
        if not hasattr(estimator, "n_features_in_"):
            raise ValueError("the model must be fitted (it has no n_features_in_)")
        self.estimator = estimator
        self.n_features = int(estimator.n_features_in_)
        self.regressor = _is_regressor(estimator)
        self.road = Road(estimator)
        self.snapshot_path = snapshot_path
        self.snapshot_every = snapshot_every
        self.snapshot_seconds = snapshot_seconds
        self.max_body = int(max_body)
        self.lock = _RWLock()
        self._queue: queue.Queue = queue.Queue()
        self._stats_lock = threading.Lock()
        self.started = time.monotonic()
        self.rows_learned = 0
        self.rows_refused = 0
        self.mistakes = 0
        self.squared_error = 0.0
        self.rows_predicted = 0
        self.learn_seconds = 0.0
        self.snapshots = 0
        self._since_snapshot = 0
        self._last_snapshot = time.monotonic()
        self._writer = threading.Thread(target=self._write_loop, name="onlinelearn-writer")
        self._stop = object()
        self._writer.start()

    # -- reading ------------------------------------------------------------------------------

    def predict(self, X, proba: bool = False) -> dict:
        self.lock.acquire_read()
        try:
            est = self.estimator
            out = {"predictions": _plain_list(est.predict(X))}
            if proba:
                with _probabilities_of(est):
                    P = est.predict_proba(X)
                out["classes"] = _plain_list(est.classes_)
                out["probabilities"] = np.asarray(P).tolist()
        finally:
            self.lock.release_read()
        with self._stats_lock:
            self.rows_predicted += X.shape[0]
        return out

    def predict_row(self, row: Row, proba: bool = False, locked: bool = False) -> dict | None:
        """``predict`` of one row on the model's one-row step; None at once when a writer
        holds or waits for the lock, unless the caller already holds a read lock
        (``locked``: released here).  Call it from one thread only (``_road``)."""
        if not locked and not self.lock.try_acquire_read():
            return None
        try:
            out = self.road.predict(row, proba)
        finally:
            self.lock.release_read()
        with self._stats_lock:
            self.rows_predicted += 1
        return out

    def model_bytes(self) -> bytes:
        from onlinelearn.model_io import save_model

        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "model.npz")
            self.lock.acquire_read()
            try:
                save_model(self.estimator, path)
            finally:
                self.lock.release_read()
            with open(path, "rb") as f:
                return f.read()

    def metrics(self) -> dict:
        with self._stats_lock:
            n = self.rows_learned
            elapsed = time.monotonic() - self.started
            m = {
                "model": type(self.estimator).__name__,
                "rows_learned": n,
                "rows_refused": self.rows_refused,
                "rows_predicted": self.rows_predicted,
                "uptime_seconds": elapsed,
                "learn_rows_per_second": n / self.learn_seconds if self.learn_seconds else None,
                "rows_per_second": n / elapsed if elapsed > 0 else None,
                "snapshots": self.snapshots,
                "queued_requests": self._queue.qsize(),
            }
            if self.regressor:
                m["progressive_mse"] = self.squared_error / n if n else None
            else:
                m["progressive_mistakes"] = self.mistakes
                m["progressive_error"] = self.mistakes / n if n else None
        for name in ("t_", "n_updates_", "n_mistakes_"):
            v = getattr(self.estimator, name, None)
            if isinstance(v, int | np.integer):
                m[name] = int(v)
        return m

    # -- writing ------------------------------------------------------------------------------

    def submit(self, X, y, sample_weight=None, waker=None) -> _Job:
        """Queue a batch; ``waker`` (if given) is called by the writer when it is done."""
        job = _Job(X, y, sample_weight, waker=waker)
        self._queue.put(job)
        return job

    def submit_row(self, row: Row, waker=None) -> _Job:
        """Queue one labelled row for the one-row step."""
        job = _Job(row=row, waker=waker)
        self._queue.put(job)
        return job

    def submit_block(self, stream, X, y, w, lines, waker=None) -> _Job:
        """Queue a block of a stream (``_stream.Stream``): its rows, learned in calls of
        ``stream.batch`` lines, unless an earlier block of the stream failed."""
        job = _Job(X, y, w, stream=stream, lines=lines, waker=waker)
        self._queue.put(job)
        return job

    def _learn(self, X, y, w=None):
        """Progressive validation, as one transaction of the estimator: each row predicted as
        ``/predict`` would have answered just before it was learned, then the update."""
        est = self.estimator
        if hasattr(est, "partial_fit_predict"):
            if getattr(est, "average", False) is True:
                # what /predict would have answered row by row: the averaged hypothesis
                try:
                    return np.asarray(
                        est.partial_fit_predict(X, y, sample_weight=w, predict_with="average")
                    )
                except TypeError as exc:
                    if "predict_with" not in str(exc):
                        raise
            else:
                return np.asarray(est.partial_fit_predict(X, y, sample_weight=w))
        before = np.asarray(est.predict(X))
        if w is None:
            est.partial_fit(X, y)
        else:
            est.partial_fit(X, y, sample_weight=w)
        return before

    def _apply(self, jobs):
        t0 = time.perf_counter()
        self.lock.acquire_write()
        try:
            outcome = []  # per job: (predictions of the rows learned, error)
            i = 0
            while i < len(jobs):
                job = jobs[i]
                if job.row is not None:
                    outcome.append(self._apply_row(job))
                elif job.stream is not None:
                    outcome.append(self._apply_block(job))
                else:  # consecutive batches: one call
                    k = i + 1
                    while k < len(jobs) and jobs[k].row is None and jobs[k].stream is None:
                        k += 1
                    outcome += self._apply_batches(jobs[i:k])
                    i = k
                    continue
                i += 1
        finally:
            self.lock.release_write()
        self._account(jobs, outcome, time.perf_counter() - t0)

    def _account(self, jobs, outcome, seconds):
        """The counters, the jobs' results, and their wake-ups."""
        learned = 0
        with self._stats_lock:
            self.learn_seconds += seconds
            for job, (pred, error) in zip(jobs, outcome, strict=True):
                if error is not None:
                    job.error = error
                    # a stream's block: the row it stopped at (the rows after it were not tried)
                    self.rows_refused += 1 if job.stream is not None else job.n
                    if job.stream is None:
                        continue
                if pred is None:  # a block after a failed one: not tried
                    continue
                n = len(pred)
                learned += n
                self.rows_learned += n
                y = job.labels()[:n]
                if self.regressor:
                    se = float(np.sum((np.asarray(pred, dtype=np.float64) - y) ** 2))
                    self.squared_error += se
                    job.result = {"learned": n, "squared_error": se}
                else:
                    wrong = int(np.sum(np.asarray(pred) != y))
                    self.mistakes += wrong
                    job.result = {"learned": n, "mistakes": wrong}
                if job.stream is not None and job.stream.predictions:
                    job.result["predictions"] = [_plain(p) for p in np.asarray(pred).tolist()]
        self._since_snapshot += learned
        for job in jobs:
            job.done.set()
            if job.waker is not None:
                job.waker()

    def learn_row_now(self, row: Row) -> _Job | None:
        """Learn one row in the calling thread, as the writer would have, when nothing is
        queued or being learned (so the arrival order holds), no snapshot falls due with it
        and the write lock is free at once; otherwise None (then :meth:`submit_row`).  Spares
        a one-row request two thread switches."""
        if self._queue.unfinished_tasks or self._snapshot_due(1):
            return None
        if not self.lock.try_acquire_write():
            return None
        t0 = time.perf_counter()
        try:
            if self._queue.unfinished_tasks:
                return None
            job = _Job(row=row)
            outcome = self._apply_row(job)
        finally:
            self.lock.release_write()
        self._account([job], [outcome], time.perf_counter() - t0)
        return job

    def _snapshot_due(self, more: int) -> bool:
        return (
            self.snapshot_path is not None
            and self.snapshot_every is not None
            and self._since_snapshot + more >= self.snapshot_every
        )

    def _apply_batches(self, jobs):
        """Batches of rows, as one call when the model takes them all, else one by one (only
        the refused request fails)."""
        import scipy.sparse as sp

        try:
            X = sp.vstack([j.X for j in jobs], format="csr") if len(jobs) > 1 else jobs[0].X
            y = np.concatenate([j.y for j in jobs])
            w = None
            if any(j.w is not None for j in jobs):
                w = np.concatenate([np.ones(j.X.shape[0]) if j.w is None else j.w for j in jobs])
            pred = self._learn(X, y, w)
            parts = np.split(pred, np.cumsum([j.X.shape[0] for j in jobs])[:-1])
            return [(p, None) for p in parts]
        except Exception:  # the batch was refused as a whole: one request at a time
            outcome = []
            for j in jobs:
                try:
                    outcome.append((self._learn(j.X, j.y, j.w), None))
                except Exception as exc:  # noqa: BLE001 - reported to the client
                    outcome.append((None, _one_line(exc)))
            return outcome

    def _apply_row(self, job):
        try:
            return [self.road.learn(job.row, self._learn)], None
        except Exception as exc:  # noqa: BLE001 - reported to the client
            return None, _one_line(exc)

    def _apply_block(self, job):
        """A stream's block: its rows in calls of ``batch`` lines (one row: the one-row
        step), in order; a refused call is applied row by row up to the refused row, the
        stream then stops there."""
        stream = job.stream
        if stream.refused:
            return None, None
        X, y, w, lines = job.X, job.y, job.w, job.lines
        n = X.shape[0]
        calls = (lines - 1) // stream.batch
        cuts = [0, *(np.flatnonzero(np.diff(calls)) + 1).tolist(), n]
        preds = []
        for a, b in zip(cuts[:-1], cuts[1:], strict=True):
            if b - a > 1:
                try:
                    part = None if w is None else w[a:b]
                    preds.append(np.asarray(self._learn(X[a:b], y[a:b], part)))
                    continue
                except Exception:  # noqa: BLE001 - found again row by row below
                    pass
            for i in range(a, b):
                try:
                    preds.append(np.asarray([self.road.learn(Row.of(X, y, w, i), self._learn)]))
                except Exception as exc:  # noqa: BLE001 - reported to the client
                    stream.refused = True
                    job.error_line = int(lines[i])
                    done = np.concatenate(preds) if preds else np.empty(0)
                    return done, f"line {int(lines[i])}: {_one_line(exc)}"
        return (np.concatenate(preds) if preds else np.empty(0)), None

    def _write_loop(self):
        wait = min(1.0, self.snapshot_seconds or 1.0)
        while True:
            try:
                job = self._queue.get(timeout=wait)
            except queue.Empty:
                self._maybe_snapshot()
                continue
            if job is self._stop:
                break
            jobs, rows = [job], job.n
            stop = False
            while rows < MAX_BATCH_ROWS:
                try:
                    more = self._queue.get_nowait()
                except queue.Empty:
                    break
                if more is self._stop:
                    stop = True
                    break
                jobs.append(more)
                rows += more.n
            self._apply(jobs)
            for _ in jobs:
                self._queue.task_done()
            self._maybe_snapshot()
            if stop:
                break

    def _maybe_snapshot(self, force: bool = False):
        if self.snapshot_path is None or self._since_snapshot == 0:
            return
        due = force
        if self.snapshot_every is not None and self._since_snapshot >= self.snapshot_every:
            due = True
        if (
            self.snapshot_seconds is not None
            and time.monotonic() - self._last_snapshot >= self.snapshot_seconds
        ):
            due = True
        if due:
            self.snapshot()

    def snapshot(self):
        """Write the model to ``snapshot_path`` (atomically); called by the writer thread."""
        from onlinelearn.model_io import save_model

        if self.snapshot_path is None:
            return
        # the writer thread, or the event loop's learn_row_now under the write lock
        self.lock.acquire_read()
        try:
            save_model(self.estimator, self.snapshot_path)
        finally:
            self.lock.release_read()
        self._since_snapshot = 0
        self._last_snapshot = time.monotonic()
        with self._stats_lock:
            self.snapshots += 1

    def close(self):
        """Apply what is queued, stop the writer and take a last snapshot."""
        if self._writer.is_alive():
            self._queue.put(self._stop)
            self._writer.join()
        self._maybe_snapshot(force=True)
