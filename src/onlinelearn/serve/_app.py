"""The HTTP side of ``onlinelearn serve``: the Starlette application of a
:class:`~onlinelearn.serve.ModelServer` and the uvicorn runner behind the command."""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import time
from urllib.parse import parse_qsl

from ._parse import BadRequest, Row
from ._server import DEFAULT_MAX_BODY, MAX_BATCH_ROWS, ModelServer
from ._stream import DEFAULT_BATCH, DRAIN_BYTES, Lines, Stream, _resolve, job_lines


def _dumps(obj) -> bytes:
    """JSON as Starlette's JSONResponse writes it."""
    return json.dumps(
        obj, ensure_ascii=False, allow_nan=False, indent=None, separators=(",", ":")
    ).encode("utf-8")


class _Endpoint:
    """A plain ASGI endpoint (no Starlette request or response objects): ``POST /predict``
    and ``POST /learn`` take this road, a few tens of microseconds shorter per request."""

    def __init__(self, handler):
        self.handler = handler

    async def __call__(self, scope, receive, send):
        status, payload = await self.handler(scope, receive)
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [
                    (b"content-length", str(len(payload)).encode()),
                    (b"content-type", b"application/json"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": payload})


class _Query:
    """The query string of a request: ``get`` (the last value) and ``getlist``."""

    __slots__ = ("pairs",)

    def __init__(self, raw: bytes):
        self.pairs = parse_qsl(raw.decode("latin-1"), keep_blank_values=True) if raw else []

    def get(self, name, default=""):
        for k, v in reversed(self.pairs):
            if k == name:
                return v
        return default

    def getlist(self, name):
        return [v for k, v in self.pairs if k == name]

    def truthy(self, name):
        return self.get(name, "0").lower() in ("1", "true", "yes")


def _header(scope, name: bytes, default=None):
    for k, v in scope["headers"]:
        if k == name:
            return v.decode("latin-1")
    return default


def _release_read_if_taken(lock):
    def done(fut):
        if not fut.cancelled() and fut.exception() is None:
            lock.release_read()

    return done


def make_app(server: ModelServer):
    """The ASGI application of ``server``: Starlette, with ``POST /predict`` and
    ``POST /learn`` as plain ASGI endpoints."""
    from starlette.applications import Starlette
    from starlette.concurrency import run_in_threadpool
    from starlette.requests import ClientDisconnect
    from starlette.responses import JSONResponse, Response
    from starlette.routing import Route

    def error(status, reason):
        return JSONResponse({"error": reason}, status_code=status)

    async def body_of(scope, receive) -> bytes:
        length = _header(scope, b"content-length")
        if length is not None:
            try:
                declared = int(length)
            except ValueError:
                raise BadRequest("invalid Content-Length") from None
            if declared > server.max_body:
                raise BadRequest(f"body of {declared} bytes is larger than {server.max_body}", 413)
        chunks, size = [], 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                raise BadRequest("client disconnected")
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > server.max_body:
                raise BadRequest(f"body larger than {server.max_body} bytes", 413)
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        return chunks[0] if len(chunks) == 1 else b"".join(chunks)

    async def read_lock():
        """Wait for the read lock in a worker thread; released again if this request is
        cancelled meanwhile (the thread goes on and takes it)."""
        fut = asyncio.get_running_loop().run_in_executor(None, server.lock.acquire_read)
        try:
            await asyncio.shield(fut)
        except asyncio.CancelledError:
            fut.add_done_callback(_release_read_if_taken(server.lock))
            raise

    def waiter():
        """(future, waker): the writer's call of waker() resolves the future in this loop."""
        loop = asyncio.get_running_loop()
        fut = loop.create_future()
        return fut, lambda: loop.call_soon_threadsafe(_resolve, fut)

    async def rows_of(scope, receive, labelled):
        """``(q, row, parsed)`` of a POST: its query ``q``, and the body's :class:`Row` when it
        holds one row (read straight to the row, else parsed and then taken), else None and
        ``parsed = (X, y, sample_weight)``; ``y`` and the weights are None unless
        ``labelled``."""
        body = await body_of(scope, receive)
        ctype = _header(scope, b"content-type", "text/plain")
        q = _Query(scope["query_string"])
        fmt = q.get("format"), tuple(q.getlist("q"))
        row = server.parse_row(body, ctype, labelled, *fmt)
        if row is not None:
            return q, row, None
        X, y, w = await run_in_threadpool(server.parse, body, ctype, labelled, *fmt)
        if X.shape[0] == 1:
            return q, Row.of(X, y, w), None
        return q, None, (X, y, w)

    async def predict(scope, receive):
        try:
            q, row, parsed = await rows_of(scope, receive, False)
            proba = q.truthy("proba")
            if row is None:
                return 200, _dumps(await run_in_threadpool(server.predict, parsed[0], proba))
            # one row: the one-row step, in this thread (_road); when the writer holds the
            # model, a worker thread waits for the read lock
            out = server.predict_row(row, proba)
            if out is None:
                await read_lock()
                out = server.predict_row(row, proba, locked=True)
        except BadRequest as exc:
            return exc.status, _dumps({"error": str(exc)})
        return 200, _dumps(out)

    async def learn(scope, receive):
        try:
            _, row, parsed = await rows_of(scope, receive, True)
        except BadRequest as exc:
            return exc.status, _dumps({"error": str(exc)})
        job = server.learn_row_now(row) if row is not None else None
        if job is None:
            fut, wake = waiter()
            job = server.submit_row(row, wake) if row is not None else server.submit(*parsed, wake)
            await fut
        if job.error is not None:
            return 422, _dumps({"error": job.error})
        return 200, _dumps(job.result)

    async def learn_stream(request):
        q = request.query_params
        try:
            kind = server.stream_format(request.headers.get("content-type", "text/plain"),
                                        q.get("format", ""))  # fmt: skip
            batch = q.get("batch", str(DEFAULT_BATCH))
            if not (batch.isdigit() and 1 <= int(batch) <= MAX_BATCH_ROWS):
                raise BadRequest(f"batch must be an integer in 1..{MAX_BATCH_ROWS}, got {batch!r}")
            batch = int(batch)
        except BadRequest as exc:
            return error(exc.status, str(exc))
        predictions = q.get("predictions", "0").lower() in ("1", "true", "yes")
        stream = Stream(server, kind, tuple(q.getlist("q")), batch, predictions, run_in_threadpool)
        lines = Lines(job_lines(batch), server.max_body)
        chunks = request.stream()
        try:
            async for chunk in chunks:
                for first, part in lines.feed(chunk):
                    await stream.send(first, part)
                if lines.too_long is not None and not stream.stopped:
                    flushed = lines.flush()
                    if flushed is not None:
                        await stream.send(*flushed)
                    n = lines.too_long
                    stream.fail(n, 413, f"line {n}: longer than {server.max_body} bytes")
                if stream.stopped:
                    break
            else:
                last = lines.end()
                if last is not None:
                    await stream.send(*last)
        except ClientDisconnect:  # the complete lines received are learned; no one to answer
            flushed = lines.flush()
            if flushed is not None:
                await stream.send(*flushed)
            await stream.finish()
            return Response(status_code=400)
        await stream.finish()
        status, out = stream.reply(lines.lines)
        if status != 200:  # read (and drop) what the client still sends, so it gets the reply
            with contextlib.suppress(ClientDisconnect):
                dropped = 0
                async for chunk in chunks:
                    dropped += len(chunk)
                    if dropped > DRAIN_BYTES:
                        break
        return JSONResponse(out, status_code=status)

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

    hot = {"/predict": _Endpoint(predict), "/learn": _Endpoint(learn)}
    star = Starlette(
        routes=[
            Route("/predict", hot["/predict"], methods=["POST"]),
            Route("/learn", hot["/learn"], methods=["POST"]),
            Route("/learn/stream", learn_stream, methods=["POST"]),
            Route("/model", model, methods=["GET"]),
            Route("/health", health, methods=["GET"]),
            Route("/metrics", metrics, methods=["GET"]),
        ],
        lifespan=lifespan,
    )

    async def app(scope, receive, send):
        if scope["type"] == "http" and scope["method"] == "POST":
            endpoint = hot.get(scope["path"])
            if endpoint is not None:
                return await endpoint(scope, receive, send)
        return await star(scope, receive, send)

    app.starlette = star
    return app


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
