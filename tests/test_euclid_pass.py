"""The Euclidean fast pass equals the generic pass (which equals the NumPy reference, see
test_core_reference.py) on every step, binary and multiclass, dense and CSR, f32 and f64,
averaged or not, with and without an intercept feature of any value."""

from __future__ import annotations

import itertools
import zlib

import numpy as np
import pytest
import scipy.sparse as sp

from onlinelearn._core import links as L
from onlinelearn._core import state as ST
from onlinelearn._core import steps as S
from onlinelearn._core.euclid_pass import euclid_pass
from onlinelearn._core.online_loop import empty_scratch, online_pass
from onlinelearn._validation import CSRBatch

STEPS = [S.CONSERVATIVE, S.PA, S.PA1, S.PA2, S.COPA]


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
    fp = np.array([C, rng.choice([0.5, 1.0]), 0.6, 2.0, b, 1.0])
    fast = _run(euclid_pass, batch, y, w, order, state, ip, fp, K)
    ref = _run(online_pass, batch, y, w, order, state, ip, fp, K)
    assert fast[0] == ref[0] == 0
    for got, want in zip(fast[1:], ref[1:], strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    # something was updated: the comparison is not vacuous
    assert fast[4][ST.N_UPDATES] > state[3][ST.N_UPDATES]
