"""``onlinelearn serve MODEL``: a model behind HTTP that keeps learning from feedback.

An ASGI application (Starlette, run by uvicorn; ``pip install 'onlinelearn[serve]'``):

========================  ==============================================================
``POST /predict``         rows as ``text/plain`` svmlight lines (a leading label is optional
                          and ignored), Vowpal Wabbit lines (``?format=vw``, ``&q=ab`` for
                          pairs, or ``Content-Type: text/x-vw``; hashed as ``--format vw``
                          hashes them) or JSON ``{"rows": [...]}``; returns
                          ``{"predictions": [...]}``, and ``"probabilities"`` with
                          ``?proba=1`` when the model has ``predict_proba``
``POST /learn``           labelled rows (svmlight lines, or JSON ``{"rows": [...],
                          "labels": [...]}``); the model learns them online and the reply
                          says how many it got wrong before learning (progressive validation)
``GET /model``            the current model file (the format of ``onlinelearn.model_io``)
``GET /health``           ``{"status": "ok", ...}``
``GET /metrics``          rows seen, progressive-validation error, updates, rows/s, ...
========================  ==============================================================

JSON rows are dense lists of ``n_features_in_`` numbers or sparse objects ``{"index": value}``
with 1-based indices, as in svmlight.

Consistency.  One writer thread applies the learn requests in the order they arrived, taking
whatever is queued as one batch (one compiled ``partial_fit`` call; when the batch is refused,
the requests are applied one by one so that only the bad one fails).  Readers and the writer
share a readers-writer lock: a prediction sees the model before or after an update, never half
of one.  A request is parsed and checked (finite values, width, labels) before it is queued, so
a bad request gets a 4xx with a one-line reason and changes nothing; a learn request the model
refuses gets a 422 and, by the library's transaction rule, leaves the model as it was.

Durability.  The model is written (atomically: a temporary file renamed over the old one) every
``snapshot_every`` learned rows and every ``snapshot_seconds`` seconds when something was
learned, and on shutdown (SIGTERM or SIGINT).  After a SIGKILL, starting the same command again
resumes from the last snapshot, having lost at most the rows of one interval.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import math
import os
import queue
import tempfile
import threading
import time
from dataclasses import dataclass, field

import numpy as np

__all__ = ["ModelServer", "make_app", "run"]

#: the largest request body accepted (bytes); larger bodies get 413
DEFAULT_MAX_BODY = 16 * 2**20
#: the most rows the writer applies in one call
MAX_BATCH_ROWS = 20000


class _Body(io.BytesIO):
    """A request body as a binary stream whose name the parser's errors quote."""

    name = "body"


class BadRequest(ValueError):
    """A request the server refuses with a 4xx and one line of reason."""

    def __init__(self, reason: str, status: int = 400):
        super().__init__(reason)
        self.status = status


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


class ModelServer:
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

    # -- parsing (no lock: nothing of the model is touched) ---------------------------------

    def parse(self, body: bytes, content_type: str, labelled: bool, fmt: str = "", quadratic=()):
        """``(X, y, sample_weight)`` of a request body; ``y`` is None for unlabelled rows,
        ``sample_weight`` None unless Vowpal Wabbit lines give importance weights.

        ``fmt``: ``'vw'`` (or a ``text/x-vw`` content type) reads Vowpal Wabbit lines hashed
        into the model's ``2**b`` columns (``onlinelearn.io.vw``; ``quadratic``: the ``-q``
        pairs); otherwise JSON by content type, else svmlight lines."""
        if not body.strip():
            raise BadRequest('empty body: send svmlight lines or JSON {"rows": [...]}')
        w = None
        if fmt == "vw" or content_type.startswith("text/x-vw"):
            X, y, w = self._parse_vw(body, labelled, quadratic)
        elif fmt not in ("", "svmlight"):
            raise BadRequest(f"unknown format {fmt!r}: svmlight, vw or a JSON body")
        elif content_type.startswith("application/json"):
            X, y = self._parse_json(body, labelled)
        else:
            X, y = self._parse_lines(body, labelled)
        if X.shape[0] == 0:
            raise BadRequest("no rows in the body")
        data = X.data if hasattr(X, "data") else X
        if not np.all(np.isfinite(data)):
            raise BadRequest("non-finite feature value (NaN or inf)")
        if y is not None and self.regressor and not np.all(np.isfinite(y)):
            raise BadRequest("non-finite target value")
        return X, y, w

    def _parse_vw(self, body: bytes, labelled: bool, quadratic):
        from onlinelearn.io.vw import load_vw

        bits = self.n_features.bit_length() - 1
        if self.n_features != 1 << bits:
            raise BadRequest(
                f"the model has {self.n_features} features, not 2**b: it was not trained on "
                "hashed (VW) rows"
            )
        try:
            X, y, w = load_vw(
                _Body(body if body.endswith(b"\n") else body + b"\n"),
                n_bits=bits,
                interactions=list(quadratic) or None,
                label_dtype=None,
                return_weights=True,
            )
        except ValueError as exc:
            raise BadRequest(_one_line(exc)) from None
        if not labelled:
            return X, None, None
        missing = np.flatnonzero(np.isnan(y))
        if missing.size:
            raise BadRequest(f"line {missing[0] + 1}: a learn row needs a label")
        if not self.regressor:
            if not np.all(y == np.round(y)):
                raise BadRequest("labels of a classifier must be integers")
            y = y.astype(np.int64)
        return X, y, (None if np.all(w == 1.0) else w)

    def _parse_lines(self, body: bytes, labelled: bool):
        from onlinelearn.io import load_svmlight

        lines = body.replace(b"\r\n", b"\n").split(b"\n")
        fixed = []
        has_label = []
        for line in lines:
            s = line.strip()
            if not s or s.startswith(b"#"):
                continue
            first = s.split(None, 1)[0]
            unlabelled = b":" in first
            has_label.append(not unlabelled)
            fixed.append(b"0 " + s if unlabelled else s)
        if labelled and not all(has_label):
            raise BadRequest(f"line {has_label.index(False) + 1}: a learn row needs a label")
        try:
            X, y = load_svmlight(
                _Body(b"\n".join(fixed) + b"\n"),
                n_features=self.n_features,
                label_dtype=np.float64 if (self.regressor or not labelled) else np.int64,
            )
        except ValueError as exc:
            raise BadRequest(_one_line(exc)) from None
        return X, (y if labelled else None)

    def _parse_json(self, body: bytes, labelled: bool):
        import scipy.sparse as sp

        try:
            doc = json.loads(body)
        except (ValueError, UnicodeDecodeError) as exc:
            raise BadRequest(f"invalid JSON: {_one_line(exc)}") from None
        if not isinstance(doc, dict) or not isinstance(doc.get("rows"), list):
            raise BadRequest('JSON body must be an object with a list "rows"')
        rows = doc["rows"]
        indptr, indices, values = [0], [], []
        for i, row in enumerate(rows):
            if isinstance(row, dict):
                items = []
                for k, v in row.items():
                    try:
                        j = int(k)
                    except ValueError:
                        msg = f"row {i}: feature index {k!r} is not an integer"
                        raise BadRequest(msg) from None
                    if not 1 <= j <= self.n_features:
                        raise BadRequest(f"row {i}: feature index {j} outside 1..{self.n_features}")
                    items.append((j - 1, v))
                items.sort()
            elif isinstance(row, list):
                if len(row) != self.n_features:
                    raise BadRequest(
                        f"row {i}: {len(row)} values, the model has {self.n_features} features"
                    )
                items = [(j, v) for j, v in enumerate(row) if v != 0]
            else:
                raise BadRequest(f"row {i}: a row is a list of numbers or an object index: value")
            for j, v in items:
                if isinstance(v, bool) or not isinstance(v, int | float):
                    raise BadRequest(f"row {i}: value {v!r} is not a number")
                indices.append(j)
                values.append(float(v))
            indptr.append(len(indices))
        X = sp.csr_matrix(
            (np.asarray(values, dtype=np.float64), np.asarray(indices, dtype=np.int32), indptr),
            shape=(len(rows), self.n_features),
        )
        y = None
        if labelled:
            labels = doc.get("labels")
            if not isinstance(labels, list) or len(labels) != len(rows):
                raise BadRequest('a learn body needs "labels", one per row')
            try:
                y = np.asarray(labels, dtype=np.float64 if self.regressor else np.int64)
            except (TypeError, ValueError):
                raise BadRequest("labels must be numbers (integers for a classifier)") from None
            if y.ndim != 1:
                raise BadRequest("labels must be a flat list")
        return X, y

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


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def _plain_list(a) -> list:
    out = np.asarray(a).tolist()
    return [int(v) if isinstance(v, float) and v.is_integer() else v for v in out]


def make_app(server: ModelServer):
    """The Starlette application of ``server``."""
    from starlette.applications import Starlette
    from starlette.concurrency import run_in_threadpool
    from starlette.requests import ClientDisconnect
    from starlette.responses import JSONResponse, Response
    from starlette.routing import Route

    def error(status, reason):
        return JSONResponse({"error": reason}, status_code=status)

    async def body_of(request) -> bytes:
        length = request.headers.get("content-length")
        if length is not None:
            try:
                declared = int(length)
            except ValueError:
                raise BadRequest("invalid Content-Length") from None
            if declared > server.max_body:
                raise BadRequest(f"body of {declared} bytes is larger than {server.max_body}", 413)
        chunks, size = [], 0
        try:
            async for chunk in request.stream():
                size += len(chunk)
                if size > server.max_body:
                    raise BadRequest(f"body larger than {server.max_body} bytes", 413)
                chunks.append(chunk)
        except ClientDisconnect:
            raise BadRequest("client disconnected") from None
        return b"".join(chunks)

    def fmt_of(request):
        q = request.query_params
        return q.get("format", ""), tuple(q.getlist("q"))

    async def predict(request):
        try:
            body = await body_of(request)
            ctype = request.headers.get("content-type", "text/plain")
            X, _, _ = await run_in_threadpool(server.parse, body, ctype, False, *fmt_of(request))
            proba = request.query_params.get("proba", "0").lower() in ("1", "true", "yes")
            out = await run_in_threadpool(server.predict, X, proba)
        except BadRequest as exc:
            return error(exc.status, str(exc))
        return JSONResponse(out)

    async def learn(request):
        try:
            body = await body_of(request)
            ctype = request.headers.get("content-type", "text/plain")
            X, y, w = await run_in_threadpool(server.parse, body, ctype, True, *fmt_of(request))
        except BadRequest as exc:
            return error(exc.status, str(exc))
        job = server.submit(X, y, w)
        await run_in_threadpool(job.done.wait)
        if job.error is not None:
            return error(422, job.error)
        return JSONResponse(job.result)

    async def model(request):
        data = await run_in_threadpool(server.model_bytes)
        return Response(
            data,
            media_type="application/octet-stream",
            headers={"Content-Disposition": 'attachment; filename="model.npz"'},
        )

    async def health(request):
        return JSONResponse(
            {
                "status": "ok",
                "model": type(server.estimator).__name__,
                "n_features": server.n_features,
            }
        )

    async def metrics(request):
        return JSONResponse(server.metrics())

    @contextlib.asynccontextmanager
    async def lifespan(app):
        try:
            yield
        finally:
            await asyncio.get_running_loop().run_in_executor(None, server.close)

    return Starlette(
        routes=[
            Route("/predict", predict, methods=["POST"]),
            Route("/learn", learn, methods=["POST"]),
            Route("/model", model, methods=["GET"]),
            Route("/health", health, methods=["GET"]),
            Route("/metrics", metrics, methods=["GET"]),
        ],
        lifespan=lifespan,
    )


def run(
    model_path,
    host: str = "127.0.0.1",
    port: int = 8000,
    snapshot_every: int | None = 10000,
    snapshot_seconds: float | None = 60.0,
    snapshot_path=None,
    max_body: int = DEFAULT_MAX_BODY,
    log_level: str = "warning",
    ready=None,
):
    """Load ``model_path`` and serve it until SIGTERM/SIGINT (then a last snapshot).

    Snapshots go to ``snapshot_path`` (default: ``model_path`` itself, so that starting the
    same command again resumes from the last snapshot).  ``ready(host, port)`` is called once
    the socket listens (the port chosen by the system when ``port=0``).
    """
    try:
        import uvicorn
    except ImportError:  # pragma: no cover - depends on the installation
        raise ImportError(
            "onlinelearn serve needs the [serve] extra: pip install 'onlinelearn[serve]'"
        ) from None
    from onlinelearn.model_io import load_model

    est = load_model(model_path)
    server = ModelServer(
        est,
        snapshot_path=model_path if snapshot_path is None else snapshot_path,
        snapshot_every=snapshot_every,
        snapshot_seconds=snapshot_seconds,
        max_body=max_body,
    )
    try:
        app = make_app(server)
        config = uvicorn.Config(
            app, host=host, port=port, log_level=log_level, lifespan="on", access_log=False
        )
        userver = uvicorn.Server(config)
        if ready is not None:
            _announce_when_listening(userver, ready)
        userver.run()
    finally:
        server.close()


def _announce_when_listening(userver, ready):
    def watch():
        while not userver.started:
            if userver.should_exit:
                return
            time.sleep(0.02)
        for s in userver.servers:
            for sock in s.sockets:
                host, port = sock.getsockname()[:2]
                ready(host, port)
                return

    threading.Thread(target=watch, daemon=True).start()
