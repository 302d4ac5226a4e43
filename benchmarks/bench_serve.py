"""``onlinelearn serve`` under load, driven by ``wrk`` (a real load generator, not Python
threads): requests/s and p50/p99 latency of /predict and /learn, and rows/s of the row stream.

* ``/predict`` and ``/learn`` with single rows and 1,000-row batches, with 1, 8 and 64
  connections (``wrk -c``; its threads ``-t min(2, c)``), ``--seconds`` each;
* ``POST /learn/stream``: ``wrk -c 1`` sending a 10,000-row stream per request, and one
  client process sending ``--stream-rows`` rows as one chunked stream (the producer's case: one
  connection, rows pushed as they come);
* exactness: the model after the chunked stream is compared, every array of its model file,
  with ``partial_fit`` on the same rows in calls of ``batch`` lines and with one ``partial_fit``
  per row; after 300 single-row ``/learn`` requests, with one ``partial_fit`` per row.

The model is PA-I trained on the shipped DNA data (180 features, 3 classes); the bodies are
svmlight lines of DNA rows.  wrk, the clients and the server share this machine's cores (the
load average is printed before and after): the figures are a floor of what a server with cores
of its own does.  Issue 31's targets are printed beside the figures.  uvicorn parses HTTP with
``httptools`` when it is installed (``pip install httptools`` or ``uvicorn[standard]``) and with
the pure-Python ``h11`` otherwise; the one in use is printed.

    python benchmarks/bench_serve.py [--seconds 5] [--clients 1 8 64] [--stream-rows 300000]
                                     [--batch 1000] [--json out.json]

Needs ``wrk`` on PATH (Debian: ``apt-get install -y wrk``).
"""

from __future__ import annotations

import argparse
import http.client
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

#: issue 31's serving targets
TARGET_PREDICT_RPS = 5000
TARGET_STREAM_ROWS = 100000

_LUA = """
wrk.method = "POST"
local f = io.open("{body}", "rb")
wrk.body = f:read("*a")
f:close()
wrk.headers["Content-Type"] = "text/plain"
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    "JSON {{\\"requests\\": %d, \\"duration_us\\": %d, \\"errors\\": %d, \\"non2xx\\": %d, " ..
    "\\"p50_us\\": %d, \\"p99_us\\": %d}}\\n",
    summary.requests, summary.duration, e.connect + e.read + e.write + e.timeout, e.status,
    latency:percentile(50), latency:percentile(99)))
end
"""


def _lines(X, y) -> bytes:
    out = []
    for i in range(X.shape[0]):
        r = X[i]
        feats = " ".join(f"{j + 1}:{v:g}" for j, v in zip(r.indices, r.data, strict=True))
        out.append(f"{y[i]} {feats}")
    return ("\n".join(out) + "\n").encode()


def _request(port, method, path, body=None):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    try:
        conn.request(method, path, body=body, headers={"Content-Type": "text/plain"})
        r = conn.getresponse()
        return r.status, r.read()
    finally:
        conn.close()


def _wrk(port, path, body_file, connections, seconds, work):
    """One wrk run: requests/s, p50/p99 latency, errors."""
    script = Path(work) / f"case{time.monotonic_ns()}.lua"
    script.write_text(_LUA.format(body=body_file))
    cmd = ["wrk", f"-t{min(2, connections)}", f"-c{connections}", f"-d{max(1, round(seconds))}s",
           "--timeout", "60s", "-s", str(script), f"http://127.0.0.1:{port}{path}"]  # fmt: skip
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    line = next(ln for ln in out.splitlines() if ln.startswith("JSON "))
    r = json.loads(line[5:])
    secs = r["duration_us"] / 1e6
    return {
        "requests_per_s": r["requests"] / secs,
        "p50_ms": r["p50_us"] / 1e3,
        "p99_ms": r["p99_us"] / 1e3,
        "requests": r["requests"],
        "errors": r["errors"] + r["non2xx"],
    }


def _stream_client(argv):
    """(in a subprocess) POST the rows of ``body_file`` ``reps`` times as one chunked stream
    of 64 KiB pieces; prints the reply and the wall time as JSON."""
    port, body_file, reps, query = int(argv[0]), argv[1], int(argv[2]), argv[3]
    block = Path(body_file).read_bytes()

    def pieces():
        for _ in range(reps):
            for k in range(0, len(block), 1 << 16):
                yield block[k : k + (1 << 16)]

    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=3600)
    t0 = time.perf_counter()
    conn.request("POST", "/learn/stream" + query, body=pieces(),
                 headers={"Content-Type": "text/plain"}, encode_chunked=True)  # fmt: skip
    r = conn.getresponse()
    reply = json.loads(r.read())
    wall = time.perf_counter() - t0
    reply.pop("predictions", None)
    print(json.dumps({"status": r.status, "reply": reply, "seconds": wall}))


def _model_at(port, work, name):
    from onlinelearn.model_io import load_model

    status, data = _request(port, "GET", "/model")
    assert status == 200
    path = Path(work) / name
    path.write_bytes(data)
    return load_model(path)


def _file_arrays(est, work):
    from onlinelearn.model_io import save_model

    path = Path(work) / f"cmp{time.monotonic_ns()}.npz"
    save_model(est, path)
    with np.load(path, allow_pickle=False) as f:
        return {k: f[k] for k in f.files}


def _same_file(a, b, work) -> bool:
    fa, fb = _file_arrays(a, work), _file_arrays(b, work)
    if fa.keys() != fb.keys():
        return False
    for k, a in fa.items():
        nan = a.dtype.kind in "fc"
        if a.dtype != fb[k].dtype or not np.array_equal(a, fb[k], equal_nan=nan):
            return False
    return True


def _same_weights(a, b) -> bool:
    return (
        np.array_equal(a.coef_, b.coef_)
        and np.array_equal(a.intercept_, b.intercept_)
        and (a.t_, a.n_updates_) == (b.t_, b.n_updates_)
    )


def _quiet(port):
    """Wait until the writer has nothing queued and no row is being learned (wrk's cancelled
    requests may still be applied after it stops)."""
    last = None
    for _ in range(200):
        m = json.loads(_request(port, "GET", "/metrics")[1])
        now = (m["rows_learned"], m["rows_refused"])
        if m["queued_requests"] == 0 and now == last:
            return
        last = now
        time.sleep(0.25)


def _loadavg() -> str:
    try:
        return " ".join(f"{v:.2f}" for v in os.getloadavg())
    except OSError:  # pragma: no cover
        return "?"


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--stream-client"]:
        return _stream_client(argv[1:])
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=5.0, help="per wrk case (default 5)")
    ap.add_argument("--clients", type=int, nargs="+", default=[1, 8, 64])
    ap.add_argument("--stream-rows", type=int, default=300000,
                    help="rows of the chunked stream (default 300,000)")  # fmt: skip
    ap.add_argument("--batch", type=int, default=1000, help="the stream's ?batch= (default 1000)")
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    if shutil.which("wrk") is None:
        sys.exit("bench_serve needs wrk on PATH (Debian: apt-get install -y wrk)")

    from onlinelearn import PassiveAggressiveClassifier
    from onlinelearn.datasets import load_dna
    from onlinelearn.model_io import save_model

    http_impl = "httptools" if importlib.util.find_spec("httptools") else "h11"
    print(f"load average before: {_loadavg()} ({os.cpu_count()} cores); uvicorn's HTTP parser: "
          f"{http_impl}")  # fmt: skip
    X, y = load_dna("train")
    X = X.tocsr()
    results = {"http": http_impl, "loadavg_before": _loadavg(), "cases": []}
    with tempfile.TemporaryDirectory() as work:
        model = Path(work) / "dna.npz"
        save_model(PassiveAggressiveClassifier(variant="PA-I").fit(X, y), model)
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "onlinelearn",
                "serve",
                str(model),
                "--port",
                "0",
                "--snapshot-seconds",
                "3600",
                "--snapshot-every",
                "100000000",
                "--snapshot",
                str(Path(work) / "snap.npz"),
            ],  # fmt: skip
            stdout=subprocess.PIPE,
            text=True,
        )
        port = int(proc.stdout.readline().rsplit(":", 1)[1])
        try:
            bodies = {"1 row": _lines(X[:1], y[:1]), "1000 rows": _lines(X[:1000], y[:1000])}
            files = {}
            for name, body in bodies.items():
                files[name] = Path(work) / f"{name.replace(' ', '_')}.txt"
                files[name].write_bytes(body)
            stream_file = Path(work) / "stream.txt"
            stream_file.write_bytes(_lines(X, y) * 5)  # 10,000 rows
            for path in ("/predict", "/learn"):  # warm up (compilation) outside the timing
                for f in files.values():
                    _wrk(port, path, f, 1, 1, work)
            _wrk(port, "/learn/stream", stream_file, 1, 1, work)

            print(f"\n{'endpoint':14} {'batch':>10} {'conns':>6} {'req/s':>10} {'rows/s':>11} "
                  f"{'p50 ms':>9} {'p99 ms':>9}")  # fmt: skip
            figures = {}
            for path in ("/predict", "/learn"):
                for name in bodies:
                    n_rows = 1 if name == "1 row" else 1000
                    for c in args.clients:
                        r = _wrk(port, path, files[name], c, args.seconds, work)
                        r.update(endpoint=path, batch=name, connections=c)
                        results["cases"].append(r)
                        figures[(path, name, c)] = r["requests_per_s"]
                        print(f"{path:14} {name:>10} {c:>6} {r['requests_per_s']:>10.1f} "
                              f"{r['requests_per_s'] * n_rows:>11.0f} {r['p50_ms']:>9.2f} "
                              f"{r['p99_ms']:>9.2f}" + (f"  errors {r['errors']}"
                                                        if r["errors"] else ""))  # fmt: skip
            r = _wrk(port, "/learn/stream", stream_file, 1, args.seconds, work)
            r.update(endpoint="/learn/stream", batch="10000 rows", connections=1)
            results["cases"].append(r)
            wrk_stream = r["requests_per_s"] * 10000
            print(f"{'/learn/stream':14} {'10000 rows':>10} {1:>6} {r['requests_per_s']:>10.1f} "
                  f"{wrk_stream:>11.0f} {r['p50_ms']:>9.2f} {r['p99_ms']:>9.2f}")  # fmt: skip

            # one producer, one chunked stream; then exactness against partial_fit
            _quiet(port)
            start = _model_at(port, work, "start.npz")
            reps = max(1, -(-args.stream_rows // X.shape[0]))
            one = Path(work) / "dna.txt"
            one.write_bytes(_lines(X, y))
            out = subprocess.run(
                [
                    sys.executable,
                    __file__,
                    "--stream-client",
                    str(port),
                    str(one),
                    str(reps),
                    f"?batch={args.batch}",
                ],  # fmt: skip
                capture_output=True,
                text=True,
                check=True,
            ).stdout
            s = json.loads(out)
            n = reps * X.shape[0]
            assert s["status"] == 200 and s["reply"]["learned"] == n, s
            stream_rows = n / s["seconds"]
            print(f"\none chunked stream of {n:,} rows (batch={args.batch}): "
                  f"{stream_rows:,.0f} rows/s learned ({s['seconds']:.2f} s)")  # fmt: skip
            got = _model_at(port, work, "after.npz")
            offline = start
            for lo in range(0, n, args.batch):  # the stream's calls: batch lines each
                rows = np.arange(lo, min(n, lo + args.batch)) % X.shape[0]
                offline.partial_fit(X[rows], y[rows])
            exact_calls = _same_file(got, offline, work)
            per_row = _load(work, "start.npz")
            for i in range(n):
                per_row.partial_fit(X[i % X.shape[0]], y[i % X.shape[0] : i % X.shape[0] + 1])
            exact_rows = _same_file(got, per_row, work)
            exact_weights = _same_weights(got, per_row)

            # single-row /learn: one partial_fit per request, the whole model
            _quiet(port)
            start = _model_at(port, work, "start1.npz")
            for i in range(300):
                status, _ = _request(port, "POST", "/learn", _lines(X[i : i + 1], y[i : i + 1]))
                assert status == 200
                start.partial_fit(X[i], y[i : i + 1])
            exact_single = _same_file(_model_at(port, work, "after1.npz"), start, work)
        finally:
            proc.terminate()
            proc.wait(timeout=60)

    predict8 = figures.get(("/predict", "1 row", 8))
    results.update(
        stream_rows_per_s=stream_rows, wrk_stream_rows_per_s=wrk_stream,
        exact_stream_calls=exact_calls, exact_stream_rows=exact_rows,
        exact_stream_weights=exact_weights,
        exact_single_rows=exact_single, loadavg_after=_loadavg(),
    )  # fmt: skip

    def verdict(ok):
        return "met" if ok else "NOT met"

    print("\nissue 31, serving:")
    if predict8 is not None:
        print(
            f"  single-row /predict, 8 connections: {predict8:,.0f} requests/s "
            f"(target >= {TARGET_PREDICT_RPS:,}: {verdict(predict8 >= TARGET_PREDICT_RPS)})"
        )
    print(
        f"  row stream: {stream_rows:,.0f} rows/s learned on one chunked connection, "
        f"{wrk_stream:,.0f} with wrk (target >= {TARGET_STREAM_ROWS:,}: "
        f"{verdict(max(stream_rows, wrk_stream) >= TARGET_STREAM_ROWS)})"
    )
    print(
        f"  the stream's model file == partial_fit in calls of {args.batch} lines: {exact_calls}; "
        f"== one partial_fit per row: {exact_rows} (weights and counters: {exact_weights})"
    )
    print(f"  300 single-row /learn: model file == one partial_fit per row: {exact_single}")
    print(f"load average after: {_loadavg()}")  # fmt: skip
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))


def _load(work, name):
    from onlinelearn.model_io import load_model

    return load_model(Path(work) / name)


if __name__ == "__main__":
    main()
