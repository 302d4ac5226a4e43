"""The HTTP side of ``onlinelearn serve``: the Starlette application of a
:class:`~onlinelearn.serve.ModelServer` and the uvicorn runner behind the command."""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time

from ._parse import BadRequest
from ._server import DEFAULT_MAX_BODY, ModelServer


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
