"""``onlinelearn serve``: single rows on the one-row step, and ``POST /learn/stream``.

Checked against an independent computation, on a real server in a subprocess:

* a single-row ``/predict`` answers what the model's own ``predict`` gives, in every row
  format (and ``predict_proba`` to rounding: the one-row step's map in Python floats);
* a single-row ``/learn`` leaves the model that ``partial_fit`` on the same one-row batches
  gives, every array of the model file bit for bit (the calibration too);
* a stream leaves the model that ``partial_fit`` on each group of ``batch`` lines gives (the
  whole model file), which for the linear classifiers is also one ``partial_fit`` per row
  (their calibration follows the stream rule of docs/probabilities.md); ``?batch=1`` is one
  ``partial_fit`` per row for every learner; the progressive predictions are the model's
  ``predict`` just before each row;
* a malformed line, a refused row and an over-long line stop the stream there: every row
  before the line is learned, none after; an empty stream learns nothing;
* predictions made while rows are learned are whole, and every row is learned once.
"""

from __future__ import annotations

import http.client
import io
import json
import os
import socket
import threading
import time

import numpy as np
import pytest
import scipy.sparse as sp

if os.environ.get("CI") == "true":  # the [dev] extra installs them: missing is a failure
    import starlette  # noqa: F401
    import uvicorn  # noqa: F401
else:
    pytest.importorskip("starlette", reason="onlinelearn serve needs the [serve] extra")
    pytest.importorskip("uvicorn", reason="onlinelearn serve needs the [serve] extra")

from test_serve import Server, _svm_lines  # noqa: E402

from onlinelearn import PassiveAggressiveClassifier  # noqa: E402
from onlinelearn.datasets import load_dna  # noqa: E402
from onlinelearn.model_io import load_model, save_model  # noqa: E402
from onlinelearn.serve._stream import Lines, job_lines  # noqa: E402

MAX_BODY = 200000


@pytest.fixture(scope="module")
def dna():
    X, y = load_dna("train")
    Xt, yt = load_dna("test")
    return sp.vstack([X, Xt], format="csr"), np.concatenate([y, yt]).astype(np.int64)


@pytest.fixture(scope="module")
def base_model(dna, tmp_path_factory):
    X, y = dna
    est = PassiveAggressiveClassifier(random_state=0).partial_fit(X[:300], y[:300])
    path = tmp_path_factory.mktemp("stream") / "base.npz"
    save_model(est, path)
    return path


@pytest.fixture(scope="module")
def server(base_model, tmp_path_factory):
    model = tmp_path_factory.mktemp("srv") / "m.npz"
    model.write_bytes(base_model.read_bytes())
    s = Server(model, "--snapshot-every", "1000000", "--max-body-bytes", str(MAX_BODY))
    yield s
    s.stop()


def _state(est, tmp_path):
    """Everything a model file holds, after a round trip through one (as /model gives it)."""
    path = tmp_path / f"s{time.monotonic_ns()}.npz"
    save_model(est, path)
    with np.load(path, allow_pickle=False) as f:
        return {k: f[k] for k in f.files}


def _same_file(a, b, tmp_path):
    """Every array of the two models' files equal, after one more round trip through a file
    each (a kernel learner's support-vector pool is compacted by loading, so the server's
    model, which /model gave as a file, and the offline one are compared both loaded)."""
    sa, sb = _state(_copy(a, tmp_path), tmp_path), _state(_copy(b, tmp_path), tmp_path)
    assert sa.keys() == sb.keys()
    for k in sa:
        assert sa[k].dtype == sb[k].dtype, k
        np.testing.assert_array_equal(sa[k], sb[k], err_msg=k)


def _same_weights(a, b):
    np.testing.assert_array_equal(a.coef_, b.coef_)
    np.testing.assert_array_equal(a.intercept_, b.intercept_)
    assert (a.t_, a.n_updates_, a.n_mistakes_) == (b.t_, b.n_updates_, b.n_mistakes_)


def _stream(server, body, query="", ctype="text/plain", chunks=None):
    """POST /learn/stream; ``chunks``: send the body in pieces of that many bytes (chunked
    transfer encoding, the lines cut anywhere)."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=300)
    try:
        path = "/learn/stream" + (f"?{query}" if query else "")
        if chunks is None:
            conn.request("POST", path, body=body, headers={"Content-Type": ctype})
        else:
            pieces = (body[i : i + chunks] for i in range(0, len(body), chunks))
            conn.request("POST", path, body=pieces, headers={"Content-Type": ctype},
                         encode_chunked=True)  # fmt: skip
        r = conn.getresponse()
        return r.status, json.loads(r.read())
    finally:
        conn.close()


def _offline(start, X, y, lines, batch, single_from=None):
    """partial_fit on the rows of each group of ``batch`` lines (one by one from the line
    ``single_from`` on: a refused call's rows before the refused one)."""
    est = start
    calls = (np.asarray(lines) - 1) // batch
    if single_from is not None:
        late = np.asarray(lines) >= single_from
        calls = np.where(late, calls.max(initial=0) + 1 + np.arange(len(calls)), calls)
    for c in np.unique(calls):
        rows = np.flatnonzero(calls == c)
        est.partial_fit(X[rows], y[rows])
    return est


def _progressive(start, X, y):
    """The predictions just before each row, and the model of one partial_fit per row."""
    est = start
    pred = []
    for i in range(X.shape[0]):
        pred.append(int(est.predict(X[i])[0]))
        est.partial_fit(X[i], y[i : i + 1])
    return pred, est


def _copy(est, tmp_path):
    path = tmp_path / f"c{time.monotonic_ns()}.npz"
    save_model(est, path)
    return load_model(path)


# ---------------------------------------------------------------------------- single rows
def test_single_row_predict_equals_the_model(server, dna, tmp_path):
    X, y = dna
    est = server.model_now(tmp_path)
    for i in range(400, 440):
        row = X[i]
        want = est.predict(row).tolist()
        P = est.predict_proba(row)
        labelled, bare = _svm_lines(row, y[i : i + 1]), _svm_lines(row)
        dense = json.dumps({"rows": row.toarray().tolist()})
        sparse = json.dumps({"rows": [{str(j + 1): v for j, v in zip(row.indices, row.data,
                                                                      strict=True)}]})  # fmt: skip
        for body, ctype in ((labelled, "text/plain"), (bare, "text/plain"),
                            (dense, "application/json"), (sparse, "application/json")):  # fmt: skip
            assert server.request("POST", "/predict", body, ctype) == (200, {"predictions": want})
        status, got = server.request("POST", "/predict?proba=1", bare)
        assert status == 200 and got["classes"] == est.classes_.tolist()
        # the one-row step's calibration map in Python floats: predict_proba to rounding
        np.testing.assert_allclose(got["probabilities"], P, rtol=1e-9, atol=1e-15)
        assert np.argmax(got["probabilities"][0]) == np.argmax(P[0])


def test_single_row_learn_equals_one_row_partial_fit(server, dna, tmp_path):
    """300 one-row /learn requests: the model file of partial_fit on each row, bit for bit
    (the calibration's window and map too: refits fall inside)."""
    X, y = dna
    offline = server.model_now(tmp_path)
    for i in range(440, 740):
        want = int(offline.predict(X[i])[0] != y[i])
        body = _svm_lines(X[i], y[i : i + 1])
        if i % 3 == 1:
            body = json.dumps({"rows": [X[i].toarray()[0].tolist()], "labels": [int(y[i])]})
            status, reply = server.request("POST", "/learn", body, "application/json")
        else:
            status, reply = server.request("POST", "/learn", body)
        assert (status, reply) == (200, {"learned": 1, "mistakes": want})
        offline.partial_fit(X[i], y[i : i + 1])
    _same_file(server.model_now(tmp_path), offline, tmp_path)


# ---------------------------------------------------------------------------- streams
@pytest.mark.parametrize("batch", [None, 1, 37])
def test_stream_equals_partial_fit(server, dna, tmp_path, batch):
    X, y = dna
    lo, hi = 740, 2740
    start = server.model_now(tmp_path)
    text = _svm_lines(X[lo:hi], y[lo:hi]).decode().split("\n")[:-1]
    # blank and comment lines are lines too (of the batch's count and of the line numbers)
    body_lines, lines = [], []
    for k, line in enumerate(text):
        if k % 97 == 5:
            body_lines.append("")
        if k % 131 == 7:
            body_lines.append("# a comment")
        body_lines.append(line)
        lines.append(len(body_lines))
    body = ("\n".join(body_lines) + "\n").encode()
    query = "predictions=1" + (f"&batch={batch}" if batch else "")
    status, reply = _stream(server, body, query, chunks=5000 if batch == 37 else None)
    assert status == 200, reply
    assert reply["learned"] == hi - lo and reply["lines"] == len(body_lines)
    pred, per_row = _progressive(_copy(start, tmp_path), X[lo:hi], y[lo:hi])
    assert reply["predictions"] == pred
    assert reply["mistakes"] == int(np.sum(np.asarray(pred) != y[lo:hi]))
    got = server.model_now(tmp_path)
    _same_file(got, _offline(start, X[lo:hi], y[lo:hi], lines, batch or 1000), tmp_path)
    # whatever the batch, the weights and counters are those of one partial_fit per row, and
    # so is the calibration of the Euclidean learners (the stream rule of docs/probabilities)
    _same_weights(got, per_row)
    _same_file(got, per_row, tmp_path)


def test_stream_formats(tmp_path):
    """JSON lines and Vowpal Wabbit lines: the rows /learn reads from the same lines."""
    from onlinelearn.io.vw import load_vw

    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(40)]

    def vw_line(label):
        return f"{label} |a " + " ".join(rng.choice(words, size=5))

    train = "\n".join(vw_line(int(rng.integers(1, 4))) for _ in range(60)) + "\n"
    X, y = load_vw(io.BytesIO(train.encode()), n_bits=10)
    model = tmp_path / "vw.npz"
    save_model(PassiveAggressiveClassifier(random_state=0).partial_fit(X, y), model)
    more = "\n".join(vw_line(int(rng.integers(1, 4))) for _ in range(300)) + "\n"
    Xm, ym = load_vw(io.BytesIO(more.encode()), n_bits=10)
    s = Server(model, "--snapshot-every", "1000000")
    try:
        status, reply = _stream(s, more.encode(), "format=vw&batch=100")
        assert (status, reply["learned"]) == (200, 300), reply
        offline = _offline(load_model(model), Xm, ym, np.arange(1, 301), 100)
        _same_file(s.model_now(tmp_path), offline, tmp_path)
        # JSON lines: the rows as /learn reads them (a column given once, zeros left out)
        start = s.model_now(tmp_path)
        D = Xm.toarray()
        Xd = sp.csr_matrix(D)
        rows = [{"row": {str(j + 1): float(D[i, j]) for j in np.flatnonzero(D[i])},
                 "label": int(ym[i])} for i in range(50)]  # fmt: skip
        two = {"rows": [D[50].tolist(), {}], "labels": [int(ym[50]), 1]}
        body = ("\n".join(json.dumps(r) for r in rows) + "\n" + json.dumps(two) + "\n").encode()
        status, reply = _stream(s, body, "batch=1", "application/x-ndjson")
        assert (status, reply["learned"], reply["lines"]) == (200, 52, 51), reply
        for i in range(50):
            start.partial_fit(Xd[i], ym[i : i + 1])
        # the two rows of one line are one call, even with batch=1
        start.partial_fit(sp.vstack([Xd[50], sp.csr_matrix((1, 1024))], format="csr"),
                          np.array([ym[50], 1]))  # fmt: skip
        _same_file(s.model_now(tmp_path), start, tmp_path)
        assert _stream(s, b"|a x\n", "format=vw")[0] == 400  # no label
    finally:
        s.stop()


@pytest.mark.parametrize(
    "bad, status, words",
    [
        (b"2 3:x", 400, "not a number"),
        (b"2 999:1", 400, "larger than n_features"),
        (b"1:1 2:1", 400, "needs a label"),
        (b"1.5 1:1", 400, "integer"),
        (b"2 1:nan", 400, "non-finite"),
        (None, 422, "overflows"),  # a row the model refuses (its squared norm overflows)
    ],
)
@pytest.mark.parametrize("where", [3, 1500])
def test_a_bad_line_stops_the_stream_there(server, dna, tmp_path, bad, status, words, where):
    """Every row before the bad line is learned (in its calls of batch lines; those of a
    refused call one by one), none after it."""
    X, y = dna
    start = server.model_now(tmp_path)
    m0 = server.request("GET", "/metrics")[1]
    batch = 64
    single_from = None
    if bad is None:
        single_from = (where - 1) // batch * batch + 1  # the first line of the refused call
    offline = _offline(_copy(start, tmp_path), X[: where - 1], y[: where - 1],
                       np.arange(1, where), batch, single_from)  # fmt: skip
    if bad is None:  # 1e300 twice, a label the model gets wrong: a step of 0, refused
        row = b"1:1e300 2:1e300"
        pred = offline.predict(_parse(row))[0]
        bad = b"%d %s" % (1 if pred != 1 else 2, row)
    good = _svm_lines(X[:2000], y[:2000]).split(b"\n")[:-1]
    body = b"\n".join(good[: where - 1] + [bad] + good[where - 1 :]) + b"\n"
    got_status, reply = _stream(server, body, f"batch={batch}")
    assert got_status == status, reply
    assert reply["line"] == where and reply["error"].startswith(f"line {where}: "), reply
    assert words in reply["error"] and "\n" not in reply["error"]
    assert reply["learned"] == where - 1
    _same_file(server.model_now(tmp_path), offline, tmp_path)
    m = server.request("GET", "/metrics")[1]
    assert m["rows_learned"] - m0["rows_learned"] == where - 1


def _parse(features: bytes):
    from onlinelearn.io import load_svmlight

    return load_svmlight(io.BytesIO(b"0 " + features + b"\n"), n_features=180)[0]


def test_empty_streams_learn_nothing(server, tmp_path):
    before = server.model_now(tmp_path)
    for body in (b"", b"\n\n", b"# only a comment\n", b"   \n"):
        status, reply = _stream(server, body)
        assert status == 200 and reply["learned"] == 0 and reply["mistakes"] == 0, reply
    _same_file(server.model_now(tmp_path), before, tmp_path)
    assert _stream(server, b"", "batch=0")[0] == 400
    assert _stream(server, b"", "batch=x")[0] == 400
    assert _stream(server, b"", "format=csv")[0] == 400


def test_a_line_longer_than_the_limit(server, dna, tmp_path):
    """413 naming the line; the lines before it are learned, the rest of the body is read and
    dropped (the client still gets the reply)."""
    X, y = dna
    start = server.model_now(tmp_path)
    head = _svm_lines(X[:10], y[:10])
    huge = b"1 " + b" ".join(b"%d:1" % (j % 180 + 1) for j in range(60000))  # ~350 KB
    body = head + huge + b"\n" + _svm_lines(X[10:20], y[10:20])
    status, reply = _stream(server, body)
    assert status == 413 and reply["line"] == 11 and reply["learned"] == 10, reply
    offline = _offline(start, X[:10], y[:10], np.arange(1, 11), 1000)
    _same_file(server.model_now(tmp_path), offline, tmp_path)
    assert server.request("GET", "/health")[0] == 200


def test_predictions_while_a_stream_is_learned(server, dna, tmp_path):
    """Single-row predictions from 4 clients during a long stream: every reply whole and one of
    the model's labels; the stream's model is exact."""
    X, y = dna
    start = server.model_now(tmp_path)
    body = _svm_lines(X, y) * 3  # 9,558 rows
    errors, done = [], threading.Event()
    counts = []

    def reader(k):
        n = 0
        while not done.is_set():
            s, r = server.request("POST", "/predict", _svm_lines(X[k]))
            if s != 200 or r["predictions"][0] not in (1, 2, 3):
                errors.append((s, r))
            n += 1
        counts.append(n)

    threads = [threading.Thread(target=reader, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    try:
        status, reply = _stream(server, body, chunks=1 << 16)
    finally:
        done.set()
        for t in threads:
            t.join()
    assert status == 200 and reply["learned"] == 3 * X.shape[0], reply
    assert not errors and sum(counts) >= 4
    n = X.shape[0]
    lines = np.arange(1, 3 * n + 1)
    offline = _offline(start, X[np.arange(3 * n) % n], np.tile(y, 3), lines, 1000)
    _same_file(server.model_now(tmp_path), offline, tmp_path)


def test_a_client_that_disconnects_gets_its_complete_lines_learned(server, dna, tmp_path):
    X, y = dna
    m0 = server.request("GET", "/metrics")[1]
    body = _svm_lines(X[:25], y[:25])
    cut = body.rindex(b"\n", 0, len(body) - 1)  # the end of line 24
    sock = socket.create_connection(("127.0.0.1", server.port))
    head = (b"POST /learn/stream HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n")  # fmt: skip
    piece = body[: cut + 10]
    sock.sendall(head + b"%x\r\n" % len(piece) + piece + b"\r\n")
    time.sleep(0.5)
    sock.close()
    for _ in range(100):
        m = server.request("GET", "/metrics")[1]
        if m["rows_learned"] - m0["rows_learned"] >= 24:
            break
        time.sleep(0.05)
    assert m["rows_learned"] - m0["rows_learned"] == 24


@pytest.mark.parametrize("seed", range(5))
def test_lines_cut_anywhere(seed):
    """The line splitter: whatever the chunks, the parts are the body's lines, job by job."""
    rng = np.random.default_rng(seed)
    lines = [b"x" * int(rng.integers(0, 30)) for _ in range(int(rng.integers(0, 300)))]
    body = b"\n".join(lines) + (b"\n" if rng.random() < 0.5 else b"")
    per = job_lines(int(rng.integers(1, 50)))
    cut = Lines(per, 1000)
    parts = []
    pos = 0
    while pos < len(body):
        step = int(rng.integers(1, 80))
        parts += cut.feed(body[pos : pos + step])
        pos += step
    last = cut.end()
    if last is not None:
        parts.append(last)
    first = 1
    for k, (no, part) in enumerate(parts):
        assert no == first
        n = part.count(b"\n")
        assert part.endswith(b"\n") and (n == per or k == len(parts) - 1)
        first += n
    want = body if not body or body.endswith(b"\n") else body + b"\n"
    assert b"".join(p for _, p in parts) == want


# ---------------------------------------------------------------------------- other learners
@pytest.mark.parametrize("name", ["AROW", "PassiveAggressiveRegressor", "KernelPerceptron"])
def test_other_learners_equal_partial_fit(name, dna, tmp_path):
    """AROW (the second-order learners' compiled road) and learners without one (the batch
    path for one row): a one-row /learn and a stream with batch=1 are one partial_fit per row,
    a stream the partial_fit of each group of batch lines, every array of the model file."""
    import onlinelearn

    X, y = dna
    est = getattr(onlinelearn, name)(**({"budget": 100} if name == "KernelPerceptron" else {}))
    if name.endswith("Regressor"):
        y = y.astype(np.float64) / 2.0
    model = tmp_path / "m.npz"
    save_model(est.partial_fit(X[:300], y[:300]), model)
    s = Server(model, "--snapshot-every", "1000000")
    try:
        offline = load_model(model)
        for i in range(300, 360):
            status, reply = s.request("POST", "/learn", _svm_lines(X[i], y[i : i + 1]))
            assert status == 200 and reply["learned"] == 1, reply
            offline.partial_fit(X[i], y[i : i + 1])
        _same_file(s.model_now(tmp_path), offline, tmp_path)
        for batch in (1, 40):
            lo, hi = 360 + (batch > 1) * 200, 560 + (batch > 1) * 200
            status, reply = _stream(s, _svm_lines(X[lo:hi], y[lo:hi]), f"batch={batch}")
            assert status == 200 and reply["learned"] == hi - lo, reply
            offline = _offline(offline, X[lo:hi], y[lo:hi], np.arange(1, hi - lo + 1), batch)
            _same_file(s.model_now(tmp_path), offline, tmp_path)
        got = s.request("POST", "/predict", _svm_lines(X[0]))[1]["predictions"]
        assert got == offline.predict(X[0]).tolist()
    finally:
        s.stop()


class _DictRows(PassiveAggressiveClassifier):
    """A learner whose per-event API is its own (learn_one / predict_one on dict rows), as the
    families other than the linear classifiers have it: the server hands it dict rows."""

    calls = 0
    _event_partial_fit = None  # no compiled road

    def learn_one(self, x, y):
        type(self).calls += 1
        self.partial_fit(self._row(x), np.array([y]))

    def predict_one(self, x):
        return self.predict(self._row(x))[0].item()

    def _row(self, x):
        cols = np.array(list(x), dtype=np.int32)
        return sp.csr_matrix((np.array(list(x.values())), cols, [0, len(cols)]),
                             shape=(1, self.n_features_in_))  # fmt: skip


def test_a_learner_with_its_own_learn_one_gets_dict_rows(dna):
    from onlinelearn.serve import ModelServer
    from onlinelearn.serve._parse import Row

    X, y = dna
    est = _DictRows(random_state=0).partial_fit(X[:300], y[:300])
    ref = PassiveAggressiveClassifier(random_state=0).partial_fit(X[:300], y[:300])
    server = ModelServer(est, snapshot_path=None)
    try:
        assert server.road.dicts and not server.road.entries
        for i in range(300, 340):
            row = Row.of(X, y, None, i)
            assert server.predict_row(row)["predictions"] == ref.predict(X[i]).tolist()
            job = server.learn_row_now(row) or server.submit_row(row)
            job.done.wait()
            assert job.result == {"learned": 1, "mistakes": int(ref.predict(X[i])[0] != y[i])}
            ref.partial_fit(X[i], y[i : i + 1])
        assert _DictRows.calls == 40
        np.testing.assert_array_equal(est.coef_, ref.coef_)
    finally:
        server.close()


def test_concurrent_single_rows(server, dna):
    """8 clients learning single rows and 8 predicting at once (the event loop learns when
    the writer is idle, the writer otherwise): every row learned once, every reply whole."""
    X, y = dna
    m0 = server.request("GET", "/metrics")[1]
    errors = []

    def writer(k):
        for i in range(100 * k, 100 * k + 50):
            s, r = server.request("POST", "/learn", _svm_lines(X[i], y[i : i + 1]))
            if s != 200 or r["learned"] != 1:
                errors.append((s, r))

    def reader(k):
        for i in range(50):
            s, r = server.request("POST", "/predict", _svm_lines(X[k * 50 + i]))
            if s != 200 or r["predictions"][0] not in (1, 2, 3):
                errors.append((s, r))

    threads = [threading.Thread(target=writer, args=(k,)) for k in range(8)]
    threads += [threading.Thread(target=reader, args=(k,)) for k in range(8)]
    threads.append(threading.Thread(target=_stream, args=(server, _svm_lines(X[:500], y[:500]))))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    m = server.request("GET", "/metrics")[1]
    assert m["rows_learned"] - m0["rows_learned"] == 900
    assert m["t_"] - m0["t_"] == 900


def test_readers_get_their_turn_between_writes():
    """A writer that takes the lock again as soon as it lets it go (the writer thread during a
    stream) does not keep a waiting reader out: the readers waiting at a release go first."""
    from onlinelearn.serve._lock import _RWLock

    lock, stop = _RWLock(), threading.Event()

    def writer():
        while not stop.is_set():
            lock.acquire_write()
            time.sleep(0.001)
            lock.release_write()

    waits = []

    def reader():
        for _ in range(20):
            t0 = time.monotonic()
            lock.acquire_read()
            waits.append(time.monotonic() - t0)
            lock.release_read()

    w, r = threading.Thread(target=writer), threading.Thread(target=reader, daemon=True)
    w.start()
    r.start()
    r.join(timeout=30)
    stop.set()
    w.join()
    assert len(waits) == 20 and max(waits) < 5.0, waits
