"""``onlinelearn serve``: a real server in a subprocess, talked to over HTTP.

What is checked against an independent computation: predictions equal the model's own
``predict``; rows learned through ``POST /learn`` give the model that ``partial_fit`` on the same
rows in the same order gives (exact); bad requests get a 4xx and leave the model as it was; a
SIGKILL loses at most the rows since the last snapshot and a restart resumes from it; SIGTERM
saves everything learned.
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

if os.environ.get("CI") == "true":  # the [dev] extra installs them: missing is a failure
    import starlette  # noqa: F401
    import uvicorn  # noqa: F401
else:
    pytest.importorskip("starlette", reason="onlinelearn serve needs the [serve] extra")
    pytest.importorskip("uvicorn", reason="onlinelearn serve needs the [serve] extra")

from onlinelearn import PassiveAggressiveClassifier  # noqa: E402
from onlinelearn.datasets import load_dna  # noqa: E402
from onlinelearn.model_io import load_model, save_model  # noqa: E402


def _svm_lines(X, y=None) -> bytes:
    X = X.tocsr()
    out = []
    for i in range(X.shape[0]):
        row = X[i]
        feats = " ".join(f"{j + 1}:{v:.17g}" for j, v in zip(row.indices, row.data, strict=True))
        out.append(f"{y[i]} {feats}" if y is not None else feats)
    return ("\n".join(out) + "\n").encode()


class Server:
    def __init__(self, model, *args):
        self.model = model
        self.args = args
        self.proc = None
        self.start()

    def start(self):
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "onlinelearn",
                "serve",
                str(self.model),
                "--port",
                "0",
                *self.args,
            ],  # fmt: skip
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        line = self.proc.stdout.readline()
        if "listening on" not in line:
            self.proc.kill()
            raise AssertionError(f"server did not start: {line!r} {self.proc.stderr.read()}")
        self.port = int(line.rsplit(":", 1)[1])

    def request(self, method, path, body=None, ctype="text/plain"):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        try:
            headers = {"Content-Type": ctype} if body is not None else {}
            conn.request(method, path, body=body, headers=headers)
            r = conn.getresponse()
            data = r.read()
        finally:
            conn.close()
        if r.getheader("content-type", "").startswith("application/json"):
            return r.status, json.loads(data)
        return r.status, data

    def model_now(self, tmp_path):
        status, data = self.request("GET", "/model")
        assert status == 200
        path = tmp_path / f"got{time.monotonic_ns()}.npz"
        path.write_bytes(data)
        return load_model(path)

    def stop(self, sig=signal.SIGTERM):
        self.proc.send_signal(sig)
        self.proc.wait(timeout=60)


@pytest.fixture(scope="module")
def dna():
    X, y = load_dna("train")
    return X.tocsr(), np.asarray(y)


@pytest.fixture(scope="module")
def base_model(dna, tmp_path_factory):
    X, y = dna
    est = PassiveAggressiveClassifier(random_state=0).partial_fit(X[:300], y[:300])
    path = tmp_path_factory.mktemp("serve") / "base.npz"
    save_model(est, path)
    return path


@pytest.fixture(scope="module")
def server(base_model, tmp_path_factory):
    model = tmp_path_factory.mktemp("srv") / "m.npz"
    model.write_bytes(base_model.read_bytes())
    s = Server(model, "--snapshot-every", "1000000", "--max-body-bytes", "200000")
    yield s
    s.stop()


def _same_model(a, b):
    np.testing.assert_array_equal(a.coef_, b.coef_)
    np.testing.assert_array_equal(a.intercept_, b.intercept_)
    assert a.t_ == b.t_


def test_predict_equals_the_model(server, dna, base_model):
    X, y = dna
    est = load_model(base_model)
    rows = X[300:400]
    want = est.predict(rows).tolist()
    assert server.request("POST", "/predict", _svm_lines(rows, y[300:400])) == (
        200, {"predictions": want})  # fmt: skip
    assert server.request("POST", "/predict", _svm_lines(rows))[1]["predictions"] == want
    dense = {"rows": rows.toarray().tolist()}
    got = server.request("POST", "/predict", json.dumps(dense), "application/json")
    assert got == (200, {"predictions": want})
    sparse = {"rows": [{str(j + 1): v for j, v in zip(r.indices, r.data, strict=True)}
                       for r in rows]}  # fmt: skip
    got = server.request("POST", "/predict", json.dumps(sparse), "application/json")
    assert got == (200, {"predictions": want})
    status, health = server.request("GET", "/health")
    assert status == 200 and health["status"] == "ok" and health["n_features"] == X.shape[1]


@pytest.mark.parametrize(
    "path, body, ctype, status",
    [
        ("/predict", b"", "text/plain", 400),
        ("/predict", b"1 1:nan\n", "text/plain", 400),
        ("/predict", b"1 1:inf\n", "text/plain", 400),
        ("/predict", b"1 999:1\n", "text/plain", 400),
        ("/predict", b"1 x:1\n", "text/plain", 400),
        ("/learn", b"1:1 2:1\n", "text/plain", 400),
        ("/learn", b"1.5 1:1\n", "text/plain", 400),
        ("/learn", b"{", "application/json", 400),
        ("/learn", b'{"rows": [[1, 2]], "labels": [1]}', "application/json", 400),
        ("/learn", b'{"rows": [{"1": 1}]}', "application/json", 400),
        ("/predict", b'{"rows": [{"0": 1}]}', "application/json", 400),
        ("/predict", b'{"rows": [{"1": "a"}]}', "application/json", 400),
        ("/predict", b"1 1:1\n" * 50000, "text/plain", 413),
    ],
)
def test_bad_requests_change_nothing(server, tmp_path, path, body, ctype, status):
    before = server.model_now(tmp_path)
    metrics = server.request("GET", "/metrics")[1]
    got_status, reply = server.request("POST", path, body, ctype)
    assert got_status == status, reply
    assert isinstance(reply["error"], str) and "\n" not in reply["error"] and reply["error"]
    _same_model(server.model_now(tmp_path), before)
    assert server.request("GET", "/metrics")[1]["rows_learned"] == metrics["rows_learned"]


def test_learning_equals_partial_fit_in_order(server, dna, tmp_path):
    X, y = dna
    start = server.model_now(tmp_path)
    m0 = server.request("GET", "/metrics")[1]
    offline = start
    mistakes = 0
    for lo in range(400, 700, 60):
        rows, labels = X[lo : lo + 60], y[lo : lo + 60]
        want_wrong = 0  # progressive: each row predicted just before it is learned
        for i in range(60):
            want_wrong += int(offline.predict(rows[i])[0] != labels[i])
            offline.partial_fit(rows[i], labels[i : i + 1])
        status, reply = server.request("POST", "/learn", _svm_lines(rows, labels))
        assert (status, reply) == (200, {"learned": 60, "mistakes": want_wrong})
        mistakes += want_wrong
    _same_model(server.model_now(tmp_path), offline)
    m = server.request("GET", "/metrics")[1]
    assert m["rows_learned"] - m0["rows_learned"] == 300
    assert m["progressive_mistakes"] - m0["progressive_mistakes"] == mistakes
    assert m["t_"] == offline.t_


def test_concurrent_clients(server, dna, tmp_path):
    """8 writers and 8 readers at once: every row is learned once, every reply is whole."""
    X, y = dna
    m0 = server.request("GET", "/metrics")[1]
    errors = []

    def writer(k):
        for lo in range(700 + 100 * k, 800 + 100 * k, 20):
            s, r = server.request("POST", "/learn", _svm_lines(X[lo : lo + 20], y[lo : lo + 20]))
            if s != 200 or r["learned"] != 20:
                errors.append((s, r))

    def reader():
        for _ in range(10):
            s, r = server.request("POST", "/predict", _svm_lines(X[:50]))
            if s != 200 or len(r["predictions"]) != 50:
                errors.append((s, r))

    threads = [threading.Thread(target=writer, args=(k,)) for k in range(8)]
    threads += [threading.Thread(target=reader) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    m = server.request("GET", "/metrics")[1]
    assert m["rows_learned"] - m0["rows_learned"] == 800
    assert m["t_"] - m0["t_"] == 800


def test_kill_and_restart_resume_from_the_last_snapshot(base_model, dna, tmp_path):
    X, y = dna
    model = tmp_path / "live.npz"
    model.write_bytes(base_model.read_bytes())
    s = Server(model, "--snapshot-every", "10", "--snapshot-seconds", "3600")
    try:
        for lo in range(300, 325, 5):  # 25 rows: snapshots after rows 10 and 20
            assert s.request("POST", "/learn", _svm_lines(X[lo : lo + 5], y[lo : lo + 5]))[0] == 200
    finally:
        s.stop(signal.SIGKILL)
    offline = load_model(base_model).partial_fit(X[300:320], y[300:320])
    _same_model(load_model(model), offline)  # lost the last 5 rows, no more

    s.start()  # the same command again: resumes from the snapshot
    try:
        assert s.request("POST", "/learn", _svm_lines(X[320:325], y[320:325]))[0] == 200
        offline.partial_fit(X[320:325], y[320:325])
        _same_model(s.model_now(tmp_path), offline)
    finally:
        s.stop(signal.SIGTERM)  # a clean stop saves everything learned
    # uvicorn shuts down gracefully, then ends by the signal it caught (status -SIGTERM)
    assert s.proc.returncode in (0, -signal.SIGTERM), s.proc.stderr.read()
    _same_model(load_model(model), offline)
    assert not [p for p in os.listdir(tmp_path) if p.startswith(".") or p.endswith(".tmp")]


def test_vw_lines_hashed_as_the_reader_does(tmp_path, server):
    """Vowpal Wabbit lines (?format=vw or text/x-vw) are hashed into the model's 2**b columns
    exactly as onlinelearn.io.vw reads them, importance weights included; a model whose width is
    not a power of two refuses them."""
    import io as _io

    from onlinelearn.io.vw import load_vw

    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(40)]

    def line(label, imp=None):
        a = " ".join(rng.choice(words, size=5))
        b = " ".join(f"{w}:{rng.uniform(0.5, 2):.3f}" for w in rng.choice(words, size=3))
        head = f"{label}" + (f" {imp}" if imp is not None else "")
        return f"{head} |a {a} |b {b}"

    train = "\n".join(line(int(rng.integers(1, 4))) for _ in range(60)) + "\n"
    X, y = load_vw(_io.BytesIO(train.encode()), n_bits=10)
    est = PassiveAggressiveClassifier(random_state=0).partial_fit(X, y)
    model = tmp_path / "vw.npz"
    save_model(est, model)
    more = "\n".join(line(int(rng.integers(1, 4)), float(rng.integers(1, 4))) for _ in range(30))
    Xm, ym, wm = load_vw(_io.BytesIO(more.encode() + b"\n"), n_bits=10, return_weights=True)
    s = Server(model, "--snapshot-every", "1000000")
    try:
        status, reply = s.request("POST", "/learn?format=vw", more.encode())
        assert status == 200 and reply["learned"] == 30, reply
        offline = load_model(model).partial_fit(Xm, ym, sample_weight=wm)
        _same_model(s.model_now(tmp_path), offline)
        unlabelled = b"\n".join(b"|" + ln.split(b"|", 1)[1] for ln in more.encode().split(b"\n"))
        got = s.request("POST", "/predict", unlabelled, "text/x-vw")
        assert got == (200, {"predictions": offline.predict(Xm).tolist()})
        assert s.request("POST", "/learn?format=vw", b"|a x\n")[0] == 400  # no label
        assert s.request("POST", "/predict?format=csv", b"1 1:1\n")[0] == 400
    finally:
        s.stop()
    status, reply = server.request("POST", "/predict?format=vw", b"|a x y\n")
    assert status == 400 and "2**b" in reply["error"]


class _RefusingProba(PassiveAggressiveClassifier):
    def predict_proba(self, X):
        raise NotImplementedError("no probabilities here")


def test_probabilities_a_model_cannot_give_are_a_422(dna):
    """``/predict?proba=1`` of a model without ``predict_proba`` (one row on the one-row step,
    several on the batch path), or of one whose ``predict_proba`` refuses: a 422 that says
    why, and the read lock is free again for the predictions after it."""
    from onlinelearn import PassiveAggressiveRegressor
    from onlinelearn.serve import BadRequest, ModelServer
    from onlinelearn.serve._parse import Row

    X, y = dna
    reg = PassiveAggressiveRegressor().partial_fit(X[:200], y[:200].astype(np.float64))
    clf = _RefusingProba().partial_fit(X[:200], y[:200])
    cases = [
        (reg, "predict_row", "PassiveAggressiveRegressor has no predict_proba"),
        (reg, "predict", "PassiveAggressiveRegressor has no predict_proba"),
        (clf, "predict", "no probabilities here"),
    ]
    for est, method, message in cases:
        server = ModelServer(est, snapshot_path=None)
        try:
            arg = Row.of(X, None, None, 200) if method == "predict_row" else X[200:203]
            with pytest.raises(BadRequest, match=message) as info:
                getattr(server, method)(arg, proba=True)
            assert info.value.status == 422
            got = getattr(server, method)(arg)["predictions"]
            assert got == est.predict(X[200:201] if method == "predict_row" else arg).tolist()
        finally:
            server.close()
