"""``onlinelearn serve`` under load: requests/s and p50/p99 latency of /predict and /learn.

Single rows and 1,000-row batches, with 1, 8 and 64 concurrent clients (threads, each with its
own keep-alive connection), against one server process on this machine.  The model is PA-I
trained on the shipped DNA data (180 features, 3 classes); the request bodies are svmlight lines
of DNA rows.  Clients and server share the machine's cores, so the figures are a floor of what
a server with cores of its own does.

    python benchmarks/bench_serve.py [--seconds 5] [--json out.json]
"""

from __future__ import annotations

import argparse
import http.client
import json
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np


def _lines(X, y) -> bytes:
    out = []
    for i in range(X.shape[0]):
        r = X[i]
        feats = " ".join(f"{j + 1}:{v:g}" for j, v in zip(r.indices, r.data, strict=True))
        out.append(f"{y[i]} {feats}")
    return ("\n".join(out) + "\n").encode()


def _client(port, path, body, until, lat, errors):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
    while time.perf_counter() < until:
        t0 = time.perf_counter()
        conn.request("POST", path, body=body, headers={"Content-Type": "text/plain"})
        r = conn.getresponse()
        r.read()
        if r.status != 200:
            errors.append(r.status)
        lat.append(time.perf_counter() - t0)
    conn.close()


def run_case(port, path, body, clients, seconds):
    lat, errors = [], []
    until = time.perf_counter() + seconds
    threads = [
        threading.Thread(target=_client, args=(port, path, body, until, lat, errors))
        for _ in range(clients)
    ]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    lat = np.asarray(lat)
    return {
        "requests_per_s": len(lat) / wall,
        "p50_ms": float(np.percentile(lat, 50) * 1e3),
        "p99_ms": float(np.percentile(lat, 99) * 1e3),
        "requests": len(lat),
        "errors": len(errors),
    }


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=5.0, help="per case (default 5)")
    ap.add_argument("--clients", type=int, nargs="+", default=[1, 8, 64])
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)

    from onlinelearn import PassiveAggressiveClassifier
    from onlinelearn.datasets import load_dna
    from onlinelearn.model_io import save_model

    X, y = load_dna("train")
    X = X.tocsr()
    with tempfile.TemporaryDirectory() as d:
        model = Path(d) / "dna.npz"
        save_model(PassiveAggressiveClassifier(variant="PA-I").fit(X, y), model)
        proc = subprocess.Popen(
            [sys.executable, "-m", "onlinelearn", "serve", str(model), "--port", "0",
             "--snapshot-seconds", "3600", "--snapshot-every", "100000000"],  # fmt: skip
            stdout=subprocess.PIPE,
            text=True,
        )
        port = int(proc.stdout.readline().rsplit(":", 1)[1])
        try:
            bodies = {"1 row": _lines(X[:1], y[:1]), "1000 rows": _lines(X[:1000], y[:1000])}
            for path in ("/predict", "/learn"):  # warm up (compilation) outside the timing
                for body in bodies.values():
                    run_case(port, path, body, 1, 0.5)
            rows = []
            print(f"{'endpoint':10} {'batch':>10} {'clients':>8} {'req/s':>10} {'rows/s':>11} "
                  f"{'p50 ms':>9} {'p99 ms':>9}")  # fmt: skip
            for path in ("/predict", "/learn"):
                for name, body in bodies.items():
                    n_rows = 1 if name == "1 row" else 1000
                    for c in args.clients:
                        r = run_case(port, path, body, c, args.seconds)
                        r.update(endpoint=path, batch=name, clients=c)
                        rows.append(r)
                        print(f"{path:10} {name:>10} {c:>8} {r['requests_per_s']:>10.1f} "
                              f"{r['requests_per_s'] * n_rows:>11.0f} {r['p50_ms']:>9.2f} "
                              f"{r['p99_ms']:>9.2f}" + (f"  errors {r['errors']}"
                                                        if r["errors"] else ""))  # fmt: skip
        finally:
            proc.terminate()
            proc.wait(timeout=60)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
