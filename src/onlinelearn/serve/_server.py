"""The model server of ``onlinelearn serve``, without HTTP: the model, its readers-writer lock,
the writer thread that applies the learn requests in arrival order, the snapshots and the
counters of ``/metrics``."""

from __future__ import annotations

import math
import os
import queue
import tempfile
import threading
import time
from dataclasses import dataclass, field

import numpy as np

from ._parse import BadRequest, _one_line, _plain_list, _RequestParsing

#: the largest request body accepted (bytes); larger bodies get 413
DEFAULT_MAX_BODY = 16 * 2**20
#: the most rows the writer applies in one call
MAX_BATCH_ROWS = 20000


class _RWLock:
    """Many readers or one writer; a waiting writer goes before new readers."""

    def __init__(self):
        self._cond = threading.Condition()
        self._readers = 0
        self._writer = False
        self._waiting_writers = 0

    def acquire_read(self):
        with self._cond:
            while self._writer or self._waiting_writers:
                self._cond.wait()
            self._readers += 1

    def release_read(self):
        with self._cond:
            self._readers -= 1
            if self._readers == 0:
                self._cond.notify_all()

    def acquire_write(self):
        with self._cond:
            self._waiting_writers += 1
            while self._writer or self._readers:
                self._cond.wait()
            self._waiting_writers -= 1
            self._writer = True

    def release_write(self):
        with self._cond:
            self._writer = False
            self._cond.notify_all()


@dataclass
class _Job:
    X: object
    y: np.ndarray
    w: np.ndarray | None = None
    done: threading.Event = field(default_factory=threading.Event)
    result: dict | None = None
    error: str | None = None


def _is_regressor(est) -> bool:
    return getattr(est, "_estimator_type", None) == "regressor"


class ModelServer(_RequestParsing):
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
                if not hasattr(est, "predict_proba"):
                    raise BadRequest(f"{type(est).__name__} has no predict_proba", status=422)
                try:
                    P = est.predict_proba(X)
                except (AttributeError, NotImplementedError, ValueError) as exc:
                    raise BadRequest(_one_line(exc), status=422) from None
                out["classes"] = _plain_list(est.classes_)
                out["probabilities"] = np.asarray(P).tolist()
        finally:
            self.lock.release_read()
        with self._stats_lock:
            self.rows_predicted += X.shape[0]
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

    def submit(self, X, y, sample_weight=None) -> _Job:
        job = _Job(X, y, sample_weight)
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
        import scipy.sparse as sp

        t0 = time.perf_counter()
        self.lock.acquire_write()
        try:
            try:
                X = sp.vstack([j.X for j in jobs], format="csr") if len(jobs) > 1 else jobs[0].X
                y = np.concatenate([j.y for j in jobs])
                w = None
                if any(j.w is not None for j in jobs):
                    w = np.concatenate(
                        [np.ones(j.X.shape[0]) if j.w is None else j.w for j in jobs]
                    )
                pred = self._learn(X, y, w)
                parts = np.split(pred, np.cumsum([j.X.shape[0] for j in jobs])[:-1])
                outcome = [(p, None) for p in parts]
            except Exception:  # the batch was refused as a whole: one request at a time
                outcome = []
                for j in jobs:
                    try:
                        outcome.append((self._learn(j.X, j.y, j.w), None))
                    except Exception as exc:  # noqa: BLE001 - reported to the client
                        outcome.append((None, _one_line(exc)))
        finally:
            self.lock.release_write()
        seconds = time.perf_counter() - t0
        learned = 0
        with self._stats_lock:
            self.learn_seconds += seconds
            for job, (pred, error) in zip(jobs, outcome, strict=True):
                if error is not None:
                    job.error = error
                    self.rows_refused += job.X.shape[0]
                    continue
                n = job.X.shape[0]
                learned += n
                self.rows_learned += n
                if self.regressor:
                    se = float(np.sum((pred - job.y) ** 2))
                    self.squared_error += se
                    job.result = {"learned": n, "squared_error": se}
                else:
                    wrong = int(np.sum(pred != job.y))
                    self.mistakes += wrong
                    job.result = {"learned": n, "mistakes": wrong}
        self._since_snapshot += learned
        for job in jobs:
            job.done.set()

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
            jobs, rows = [job], job.X.shape[0]
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
                rows += more.X.shape[0]
            self._apply(jobs)
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
        # only the writer thread changes the model, and it is here: no lock needed to read it
        save_model(self.estimator, self.snapshot_path)
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
