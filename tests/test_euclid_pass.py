"""The Euclidean fast pass equals the generic pass (which equals the NumPy reference, see
test_core_reference.py) on every step, binary and multiclass, dense and CSR, f32 and f64,
averaged or not, with and without an intercept feature of any value."""

from __future__ import annotations

import itertools
import zlib

import numpy as np
import pytest
import scipy.sparse as sp
from _wide import wide_sparse_problem

from onlinelearn._core import links as L
from onlinelearn._core import state as ST
from onlinelearn._core import steps as S
from onlinelearn._core.euclid_pass import euclid_pass
from onlinelearn._core.euclid_readout import averaged_from_u, u_from_timestamps
from onlinelearn._core.online_loop import averaged_weights, empty_scratch, online_pass
from onlinelearn.shell.validation import CSRBatch

STEPS = [S.CONSERVATIVE, S.PA, S.PA1, S.PA2, S.COPA]


def _fp(values):
    """The float parameters of a pass: ``values`` in the first slots, zeros (no kept dual,
    the uniform average) in the others (the pass reads every slot of ``N_FP``)."""
    fp = np.zeros(ST.N_FP)
    fp[: len(values)] = values
    return fp


def _state(R, K, rng, warm):
    theta = rng.normal(size=(R, K)) if warm else np.zeros((R, K))
    if warm and K > 1:
        theta -= theta.mean(axis=1, keepdims=True)  # COPA keeps columns summing to zero
    A = rng.normal(size=(R, K)) if warm else np.zeros((R, K))
    lastS = np.floor(rng.random((R, K)) * 5) if warm else np.zeros((R, K))
    st = np.zeros(ST.N_ST)
    if warm:
        st[[ST.N_ROUNDS, ST.S_SUM, ST.N_UPDATES, ST.N_MISTAKES]] = [5.0, 5.0, 3.0, 2.0]
    return theta, A, lastS, st


def _run(kernel, batch, y, w, order, state, ip, fp, K):
    theta, A, lastS, st = (a.copy() for a in state)
    n = len(y)
    pred = np.full(n, -1, dtype=np.int64)
    loss = np.full(n, -1.0)
    status = kernel(batch.data, batch.indices, batch.indptr, y, w, order, theta, A, lastS, st,
                    ip, fp, pred, loss, *empty_scratch(K))  # fmt: skip
    return status, theta, A, lastS, st, pred, loss


@pytest.mark.parametrize(
    "step,K,layout,dtype,average,b,warm",
    [
        c
        for c in itertools.product(
            STEPS, [1, 2, 5], ["dense", "csr"], [np.float64, np.float32], [0, 1], [0.0, 1.0, 0.3],
            [False, True],
        )
        if (c[1] == 1) != (c[0] == S.COPA) or c[1] == 5  # 2 columns only for COPA
    ],
)  # fmt: skip
def test_fast_pass_equals_generic_pass(step, K, layout, dtype, average, b, warm):
    rng = np.random.default_rng(zlib.crc32(repr((step, K, layout, average, b, warm)).encode()))
    n, d = 40, 6
    X = (rng.normal(size=(n, d)) * (rng.random((n, d)) < 0.5)).astype(dtype)
    X[2] = 0.0
    y = rng.integers(0, max(K, 2), size=n).astype(np.int64)
    w = rng.uniform(0.0, 2.0, size=n)
    w[5] = 0.0
    order = rng.permutation(n).astype(np.int64)
    batch = CSRBatch(sp.csr_matrix(X) if layout == "csr" else X)
    R = d + (1 if b != 0.0 else 0)
    state = _state(R, K, rng, warm)
    ip = np.zeros(ST.N_IP, dtype=np.int64)
    ip[[ST.IP_LINK, ST.IP_STEP, ST.IP_AVERAGE]] = [L.EUCLID, step, average]
    C = float(rng.choice([1e-3, 0.7, 1e3]))
    fp = _fp([C, rng.choice([0.5, 1.0]), 0.6, 2.0, b, 1.0])
    ref = _run(online_pass, batch, y, w, order, state, ip, fp, K)
    # the fast pass keeps the average as one array U = lastS * theta - A (the same sums)
    theta0, A0, lastS0, st0 = state
    U0 = np.empty_like(A0)
    u_from_timestamps(theta0, A0, lastS0, U0)
    fast = _run(euclid_pass, batch, y, w, order, (theta0, U0, lastS0, st0), ip, fp, K)
    assert fast[0] == ref[0] == 0
    U_ref = ref[3] * ref[1] - ref[2] if average else U0
    for got, want in zip(fast[1:], (ref[1], U_ref, lastS0, *ref[4:]), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    if average:
        # and the averaged weights read out from either state agree
        avg_fast, avg_ref = np.empty_like(ref[1]), np.empty_like(ref[1])
        averaged_from_u(fast[1], fast[2], fast[4], avg_fast)
        averaged_weights(ref[1], ref[2], ref[3], ref[4], ip, fp, avg_ref)
        np.testing.assert_allclose(avg_fast, avg_ref, rtol=1e-10, atol=1e-12)
    # something was updated: the comparison is not vacuous
    assert fast[4][ST.N_UPDATES] > state[3][ST.N_UPDATES]


def test_u_average_equals_the_mean_of_the_iterates_through_growth_and_merge():
    """avg w = sum_t t^2 w_t / sum_t t^2 after each round (the default average_power=2), checked
    against iterates recorded row by row,
    across a binary -> multiclass growth; and merge_models of two shards gives the weighted mean
    of their averages."""
    import onlinelearn
    from onlinelearn.shell.linear_state import merge_models

    rng = np.random.default_rng(3)
    X = rng.normal(size=(90, 5))
    y = np.where(np.arange(90) < 40, rng.integers(0, 2, size=90), rng.integers(0, 4, size=90))
    est = onlinelearn.PassiveAggressiveClassifier(average=True)
    last = onlinelearn.PassiveAggressiveClassifier(average=False)
    total = np.zeros((4, 6))
    t_sum = 0.0  # the default weighs round t by t^2 (average_power=2.0)
    for i in range(90):
        est.partial_fit(X[i : i + 1], y[i : i + 1])
        last.partial_fit(X[i : i + 1], y[i : i + 1])
        W = np.hstack([last.coef_, last.intercept_[:, None]])
        if W.shape[0] == 1:  # binary: one vector w for classes (0, 1) -> columns (-w/2, w/2)
            W = np.vstack([-0.5 * W, 0.5 * W, np.zeros((2, 6))])
        elif W.shape[0] == 3:
            W = np.vstack([W, np.zeros((1, 6))])
        total += (i + 1.0) ** 2 * W
        t_sum += (i + 1.0) ** 2
        if est.coef_.shape[0] == 4:
            got = np.hstack([est.coef_, est.intercept_[:, None]])
            np.testing.assert_allclose(got, total / t_sum, rtol=1e-10, atol=1e-12)
    assert est.coef_.shape[0] == 4
    a = onlinelearn.Perceptron(average=True).partial_fit(X[:45], y[:45] % 3)
    b = onlinelearn.Perceptron(average=True).partial_fit(X[45:], y[45:] % 3)
    m = merge_models([a, b])
    u = np.array([a.n_updates_, b.n_updates_], dtype=float)
    want = (u[0] * a.coef_ + u[1] * b.coef_) / u.sum()
    np.testing.assert_allclose(m.coef_, want, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize(
    "step,K,layout",
    [(S.PA1, 1, "csr"), (S.PA1, 5, "csr"), (S.CONSERVATIVE, 5, "csr"), (S.COPA, 5, "csr"),
     (S.PA1, 5, "dense")],
)  # fmt: skip
def test_prefetching_pass_equals_generic_pass(step, K, layout):
    """A theta and a U large enough to switch the prefetches on (U's lines for the update,
    theta's lines of the next row; every touched row spread over them) give the same state as
    the generic pass: the hints change no value.  float32 values only (the prefetches do not
    depend on the value type; one compiled signature keeps the test short)."""
    dtype = np.float32
    from onlinelearn._core.prefetch import PREFETCH_MIN_ENTRIES

    rng = np.random.default_rng(11 + step + K)
    n, b = 60, 1.0
    d = PREFETCH_MIN_ENTRIES // K + 7
    pool = rng.choice(d, size=150, replace=False)  # shared features: rows interact
    cols = np.concatenate([rng.choice(pool, size=12, replace=False) for _ in range(n)])
    rows = np.repeat(np.arange(n), 12)
    X = sp.csr_matrix((rng.normal(size=cols.size).astype(dtype), (rows, cols)), shape=(n, d))
    y = rng.integers(0, max(K, 2), size=n).astype(np.int64)
    w = np.ones(n)
    order = np.arange(n, dtype=np.int64)
    batch = CSRBatch(X.toarray() if layout == "dense" else X)
    R = d + 1
    assert R * K >= PREFETCH_MIN_ENTRIES
    state = _state(R, K, rng, False)
    ip = np.zeros(ST.N_IP, dtype=np.int64)
    ip[[ST.IP_LINK, ST.IP_STEP, ST.IP_AVERAGE]] = [L.EUCLID, step, 1]
    fp = _fp([0.5, 1.0, 1.0, 2.0, b, 1.0])
    ref = _run(online_pass, batch, y, w, order, state, ip, fp, K)
    fast = _run(euclid_pass, batch, y, w, order, state, ip, fp, K)
    assert fast[0] == ref[0] == 0
    np.testing.assert_allclose(fast[1], ref[1], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(fast[2], ref[3] * ref[1] - ref[2], rtol=1e-12, atol=1e-9)
    np.testing.assert_array_equal(fast[5], ref[5])
    assert fast[4][ST.N_UPDATES] > n // 3


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_row_scores_four_per_step_equal_the_plain_sums(dtype):
    """The score sweep (four nonzeros per step, then the tail) against a float64 product, for
    every row length around the step: empty rows, 1-3 (tail only), 4, 5-9; CSR and dense."""
    from onlinelearn._core.sparse import row_scores_sqnorm

    rng = np.random.default_rng(5)
    d, K = 12, 7
    theta = rng.normal(size=(d, K)).astype(dtype)
    for nnz in range(10):
        X = np.zeros((3, d), dtype=dtype)
        for i in range(3):
            X[i, rng.choice(d, size=nnz, replace=False)] = rng.normal(size=nnz)
        want = X.astype(np.float64) @ theta.astype(np.float64)
        for batch in (CSRBatch(sp.csr_matrix(X)), CSRBatch(X)):
            for i in range(3):
                start, stop = batch.indptr[i], batch.indptr[i + 1]
                off = start if batch.indices.shape[0] != batch.data.shape[0] else 0
                scores = np.full(K, np.nan)
                sq = row_scores_sqnorm(batch.data, batch.indices, off, start, stop, theta, scores)
                np.testing.assert_allclose(scores, want[i], rtol=1e-12, atol=1e-12)
                np.testing.assert_allclose(sq, X[i].astype(np.float64) @ X[i], rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_row_averaged_scores_four_per_step_equal_the_plain_sums(dtype):
    """The averaged-prediction sweep of ``partial_fit_predict(predict_with='average')`` (four
    nonzeros per step) against a float64 product with S theta - U, for every row length around
    the step (0-9 nonzeros), CSR and dense."""
    from onlinelearn._core.sparse import row_averaged_scores

    rng = np.random.default_rng(6)
    d, K = 12, 5
    theta = rng.normal(size=(d, K)).astype(dtype)
    U = rng.normal(size=(d, K)) * 30.0
    S = 37.0
    want_w = S * theta.astype(np.float64) - U
    for nnz in range(10):
        X = np.zeros((3, d), dtype=dtype)
        for i in range(3):
            X[i, rng.choice(d, size=nnz, replace=False)] = rng.normal(size=nnz)
        want = X.astype(np.float64) @ want_w
        for batch in (CSRBatch(sp.csr_matrix(X)), CSRBatch(X)):
            for i in range(3):
                start, stop = batch.indptr[i], batch.indptr[i + 1]
                off = start if batch.indices.shape[0] != batch.data.shape[0] else 0
                out = np.full(K, np.nan)
                row_averaged_scores(batch.data, batch.indices, off, start, stop, theta, U, S, out)
                np.testing.assert_allclose(out, want[i], rtol=1e-12, atol=1e-10)


def _padded(state, K, Kp, average):
    theta, U, lastS, st = (a.copy() for a in state)
    th = np.zeros((theta.shape[0], Kp), dtype=theta.dtype)
    th[:, :K] = theta
    Up = np.zeros((theta.shape[0], Kp)) if average else U
    if average:
        Up[:, :K] = U
    return th, Up, lastS, st


@pytest.mark.parametrize(
    "step,K,layout,average,b,big",
    [
        (S.PA1, 5, "csr", 1, 1.0, False),
        (S.PA1, 3, "dense", 1, 0.0, False),
        (S.PA1, 5, "csr", 0, 1.0, False),
        (S.CONSERVATIVE, 6, "dense", 0, 0.3, False),
        (S.PA2, 7, "csr", 1, 0.0, False),
        (S.COPA, 5, "csr", 1, 1.0, False),
        (S.COPA, 3, "dense", 0, 1.0, False),
        (S.PA1, 5, "csr", 1, 1.0, True),  # U large enough for the prefetches (row stride Kp)
        (S.COPA, 5, "csr", 1, 1.0, True),
    ],
)
def test_padded_columns_give_the_same_state(step, K, layout, average, b, big):
    """The pass on theta/U/scores/alpha padded with zero columns (what ``_run`` hands it when
    :func:`padded_work_state` pads) gives bit for bit the state of the unpadded pass on the K
    real columns, and the padding columns stay zero."""
    from onlinelearn._core.prefetch import PREFETCH_MIN_ENTRIES

    rng = np.random.default_rng(zlib.crc32(repr((step, K, layout, average, b, big)).encode()))
    n = 80
    d = PREFETCH_MIN_ENTRIES // K + 7 if big else 9
    if big:
        pool = rng.choice(d, size=150, replace=False)
        cols = np.concatenate([rng.choice(pool, size=12, replace=False) for _ in range(n)])
        rows = np.repeat(np.arange(n), 12)
        X = sp.csr_matrix((rng.normal(size=cols.size), (rows, cols)), shape=(n, d))
    else:
        X = rng.normal(size=(n, d)) * (rng.random((n, d)) < 0.6)
        X[3] = 0.0
        X = sp.csr_matrix(X) if layout == "csr" else X
    y = rng.integers(0, K, size=n).astype(np.int64)
    w = rng.uniform(0.5, 2.0, size=n)
    order = rng.permutation(n).astype(np.int64)
    batch = CSRBatch(X)
    R = d + (1 if b != 0.0 else 0)
    state = _state(R, K, rng, False)
    ip = np.zeros(ST.N_IP, dtype=np.int64)
    ip[[ST.IP_LINK, ST.IP_STEP, ST.IP_AVERAGE]] = [L.EUCLID, step, average]
    fp = _fp([0.7, 1.0, 0.6, 2.0, b, 1.0])
    plain = _run(euclid_pass, batch, y, w, order, state, ip, fp, K)
    for Kp in (K + (-K) % 4, K + 5):
        th, Up, lastS, st = _padded(state, K, Kp, average)
        pred = np.full(n, -1, dtype=np.int64)
        loss = np.full(n, -1.0)
        _, alpha, work_idx, work_val = empty_scratch(K)
        status = euclid_pass(batch.data, batch.indices, batch.indptr, y, w, order, th, Up, lastS,
                             st, ip, fp, pred, loss, np.zeros(Kp), np.zeros(Kp), work_idx,
                             work_val)  # fmt: skip
        assert status == plain[0] == 0
        np.testing.assert_array_equal(th[:, :K], plain[1])
        assert not th[:, K:].any()
        if average:
            np.testing.assert_array_equal(Up[:, :K], plain[2])
            assert not Up[:, K:].any()
        np.testing.assert_array_equal(st, plain[4])
        np.testing.assert_array_equal(pred, plain[5])
        np.testing.assert_array_equal(loss, plain[6])
    assert plain[4][ST.N_UPDATES] > 5


@pytest.mark.parametrize("name", ["PassiveAggressiveClassifier", "Perceptron", "COPA"])
@pytest.mark.parametrize("layout", ["csr", "dense"])
def test_estimators_pad_their_pass_and_keep_their_weights(name, layout, monkeypatch):
    """``fit`` pads K = 6 classes to 8 on a batch large against the weights, and its weights,
    averages and counters are those of the same fit with padding switched off."""
    import onlinelearn
    from onlinelearn._core import euclid_pass as E

    rng = np.random.default_rng(3)
    n, d, K = 400, 12, 6
    X = (rng.normal(size=(n, d)) * (rng.random((n, d)) < 0.7)).astype(np.float32)
    y = rng.integers(0, K, size=n)
    X = sp.csr_matrix(X) if layout == "csr" else X
    kw = {"n_epochs": 3, "random_state": 0}
    if name != "COPA":
        kw["tol"] = None
    est = getattr(onlinelearn, name)

    calls = []
    real = E.padded_work_state

    def spy(*args):
        out = real(*args)
        calls.append(out is not None)
        return out

    monkeypatch.setattr("onlinelearn.shell.linear_pass.padded_work_state", spy)
    padded = est(**kw).fit(X, y)
    assert calls and all(calls)  # every pass of this fit ran padded
    monkeypatch.setattr(E, "PAD_MIN_RATIO", 10**12)
    calls.clear()
    plain = est(**kw).fit(X, y)
    assert calls and not any(calls)
    np.testing.assert_array_equal(padded._theta, plain._theta)
    np.testing.assert_array_equal(padded._A, plain._A)
    np.testing.assert_array_equal(padded._st, plain._st)
    np.testing.assert_array_equal(padded.coef_, plain.coef_)
    assert padded._theta.shape[1] == K  # the state itself is never padded


@pytest.mark.parametrize("name", ["Winnow", "PNormPerceptron"])
def test_generic_pass_prefetching_changes_no_value(name, monkeypatch):
    """The generic pass (Winnow, p-norm) requests the next row's weight lines when theta
    outgrows the core's caches; the same pass compiled without the hints gives the same state
    bit for bit."""
    import onlinelearn
    from onlinelearn._core import online_loop as OL
    from onlinelearn._core.prefetch import PREFETCH_MIN_ENTRIES, without_prefetch
    from onlinelearn.shell import linear_pass

    no_hints = without_prefetch(OL.online_pass)
    X, y = wide_sparse_problem(np.random.default_rng(17), n=60, K=3, per_row=12)
    make = getattr(onlinelearn, name)
    with_hints = make(n_epochs=2, random_state=0).fit(X, y)
    assert with_hints._theta.size >= PREFETCH_MIN_ENTRIES
    monkeypatch.setattr(linear_pass, "online_pass", no_hints)
    without = make(n_epochs=2, random_state=0).fit(X, y)
    for a in ("_theta", "_A", "_lastS", "_st"):
        np.testing.assert_array_equal(getattr(with_hints, a), getattr(without, a))
    assert with_hints.n_updates_ > 5


@pytest.mark.parametrize(
    "make",
    [
        lambda ol: ol.PassiveAggressiveClassifier(variant="PA-II", C=0.3),
        lambda ol: ol.PassiveAggressiveClassifier(average=False, fit_intercept=False),
        lambda ol: ol.Perceptron(average_power=1.5),
        lambda ol: ol.COPA(C=2.0),
        lambda ol: ol.Winnow(),
        lambda ol: ol.PNormPerceptron(p=3.0),
    ],
)
def test_pass_codes_packs_the_arrays_the_estimators_hand_the_passes(make):
    """state.pass_codes builds, from the parameters' values, the (ip, fp) that the shell's
    ``_codes`` hands the passes (the one packing the shell can call)."""
    import onlinelearn as ol

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(30, 4)), rng.integers(0, 3, 30)
    est = make(ol).fit(X, y)
    ip, fp = est._codes(est._n_weights())
    got_ip, got_fp = ST.pass_codes(
        link=ip[ST.IP_LINK], step=ip[ST.IP_STEP], average=est.average,
        balanced=ip[ST.IP_BALANCED], C=fp[ST.FP_C], gamma=fp[ST.FP_GAMMA], eta=fp[ST.FP_ETA],
        p=fp[ST.FP_P], b=est._intercept_value(), log_n=fp[ST.FP_LOG_N],
        dual_gamma=est._dual_margin(), dual_quad=0.25 if ip[ST.IP_STEP] == S.PA2 else 0.0,
        avg_power=getattr(est, "average_power", 0.0),
    )  # fmt: skip
    np.testing.assert_array_equal(got_ip, ip)
    np.testing.assert_array_equal(got_fp, fp)
    assert got_ip.dtype == ip.dtype and got_fp.dtype == fp.dtype
