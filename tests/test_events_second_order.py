"""One event at a time for the second-order learners (``onlinelearn.second_order._events``):
``learn_one`` / ``predict_one`` / ``predict_proba_one`` and ``partial_fit`` on one row of AROW,
SCW and WeightedMinMax.

The reference is the general path of ``partial_fit`` (``OnlineMixin.partial_fit``: validation,
the family's transaction, the batch pass, the checks after it, the calibration scored by the
model before the call), called on the same one-row batches: the event road must leave every
attribute bit for bit as it does, and a rejected event must leave the model as it was."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from _events_ref import (
    BAD_ROWS,
    check_named_features,
    check_partial_fit_rows,
    check_rejected,
    check_river_conventions,
    counting,
    stream,
)
from _events_ref import general as _general
from _events_ref import known_label_rows as _known_label_rows
from _events_ref import ref_batch as _ref_batch
from _events_ref import row as _row
from _events_ref import same as _same

from onlinelearn import AROW, SCW, WeightedMinMax
from onlinelearn._core import second_order as SO
from onlinelearn._core import second_order_row as SR
from onlinelearn.model_io import load_model, save_model
from onlinelearn.second_order import _events

LEARNERS = {
    "AROW": lambda: AROW(),
    "AROW diagonal": lambda: AROW(covariance="diagonal", r=0.5),
    "AROW no intercept": lambda: AROW(fit_intercept=False, a=2.0),
    "SCW-I": lambda: SCW(),
    "SCW-II diagonal": lambda: SCW(variant="SCW-II", C=0.5, covariance="diagonal"),
    "MinMax": lambda: WeightedMinMax(b=400.0, random_state=0),
    "MinMax adaptive diagonal": lambda: WeightedMinMax(
        b=400.0, margin="adaptive", covariance="diagonal", random_state=0
    ),
    "MinMax one-hot no intercept": lambda: WeightedMinMax(
        b=400.0, label_encoding="one-hot", fit_intercept=False, random_state=0
    ),
    "MinMax query": lambda: WeightedMinMax(b=400.0, query="margin", c=0.5, random_state=3),
}


def _stream(n, d, K, seed, density=1.0):
    return stream(n, d, K, seed, density, scales=(0.3, 1.0, 3.0))


@pytest.fixture
def road(monkeypatch):
    """The rows that the compiled event steps learned (the steps of the Events built after
    it)."""
    calls = []
    for name in ("cw_row", "mm_row"):
        calls = counting(monkeypatch, SR, name, lambda status: status == SR.OK, calls)
    return calls


@pytest.mark.parametrize("name", list(LEARNERS))
@pytest.mark.parametrize("kind", ["dense", "dict", "csr"])
@pytest.mark.parametrize("K", [2, 4])
def test_learn_one_is_partial_fit_of_the_row_bit_for_bit(name, kind, K, road):
    X, y = _stream(300, 7, K, seed=K, density=0.6 if kind != "dense" else 1.0)
    a, b = LEARNERS[name](), LEARNERS[name]()
    a.partial_fit(X[:5], y[:5])
    _general(b, X[:5], y[:5])
    for i in range(5, len(y)):
        if i % 7 == 0:  # the read-outs agree with the batch read-outs before the update
            ref = _ref_batch(X, i, kind)
            assert a.predict_one(_row(X, i, kind)) == b.predict(ref)[0]
            p = a.predict_proba_one(_row(X, i, kind))
            q = b.predict_proba(ref)[0]
            assert list(p) == list(b.classes_)
            np.testing.assert_allclose(list(p.values()), q, rtol=1e-9, atol=1e-15)
        a.learn_one(_row(X, i, kind), int(y[i]))
        _general(b, _ref_batch(X, i, kind), y[i : i + 1])
    _same(a, b)
    # every row of a label seen before, once two labels were seen, took the event road
    assert sum(road) == _known_label_rows(y, 5)


@pytest.mark.parametrize("name", ["AROW", "SCW-II diagonal", "MinMax", "MinMax query"])
def test_partial_fit_of_one_row_takes_the_event_road_and_gives_the_same_model(name, road):
    X, y = _stream(200, 5, 3, seed=3)
    check_partial_fit_rows(LEARNERS[name], X, y)
    assert sum(road) == 2 * _known_label_rows(y, 10)


def test_unsorted_dict_rows_are_learned_as_their_canonical_csr_row(road):
    X, y = _stream(200, 9, 3, seed=4, density=0.7)
    a, b = AROW(), AROW()
    a.partial_fit(X[:5], y[:5])
    _general(b, X[:5], y[:5])
    for i in range(5, 200):
        x = _row(X, i, "dict unsorted")
        if i % 5 == 0:
            assert a.predict_one(x) == b.predict(_ref_batch(X, i, "csr"))[0]
        a.learn_one(x, int(y[i]))
        _general(b, _ref_batch(X, i, "csr"), y[i : i + 1])
    _same(a, b)
    assert sum(road) == _known_label_rows(y, 5)


@pytest.mark.parametrize("covariance", ["full", "diagonal"])
@pytest.mark.parametrize("make", [AROW, SCW])
def test_a_wide_model_learning_sparse_rows(make, covariance, road):
    """A few columns of 300 a row: the full covariance's step copies the rows of Sigma the row
    reaches (a block, then whole rows once they are many; the room for the copies grows)."""
    X, y = _stream(400, 300, 3, seed=5, density=0.02)
    X[:, 7] = 1.0  # a column every row has: Sigma's support grows from it
    a, b = make(covariance=covariance), make(covariance=covariance)
    a.partial_fit(X[:3], y[:3])
    _general(b, X[:3], y[:3])
    for i in range(3, 400):
        a.learn_one(_row(X, i, "dict"), int(y[i]))
        _general(b, _ref_batch(X, i, "csr"), y[i : i + 1])
    _same(a, b)
    assert sum(road) == _known_label_rows(y, 3)


def test_minmax_recomputes_its_inverse_on_the_road_as_partial_fit_does():
    """Every max(512, 4 R) updates A^{-1} is recomputed from A (the adaptive margin updates
    often): the event step runs the same pass."""
    X, y = _stream(1400, 3, 4, seed=6)
    a, b = (WeightedMinMax(b=400.0, margin="adaptive", random_state=0) for _ in "ab")
    a.partial_fit(X[:5], y[:5])
    _general(b, X[:5], y[:5])
    for i in range(5, len(y)):
        a.learn_one(X[i], int(y[i]))
        _general(b, X[i : i + 1], y[i : i + 1])
    assert a._state.st[SO.SINCE_REFRESH] < a.n_updates_  # A^{-1} was recomputed
    _same(a, b)


def test_a_parameter_set_between_events_is_used_by_the_next_event():
    X, y = _stream(120, 4, 2, seed=7)
    a, b = AROW(), AROW()
    a.partial_fit(X[:5], y[:5])
    _general(b, X[:5], y[:5])
    for i in range(5, 120):
        if i == 60:
            a.set_params(r=0.01)
            b.set_params(r=0.01)
        a.learn_one(X[i], int(y[i]))
        _general(b, X[i : i + 1], y[i : i + 1])
    _same(a, b)


@pytest.mark.parametrize("make", [AROW, lambda: WeightedMinMax(b=400.0, random_state=0)])
def test_a_new_label_goes_through_partial_fit_and_the_road_resumes(make, road):
    X, y = _stream(150, 4, 3, seed=8)
    y = np.where(np.arange(150) < 80, np.minimum(y, 1), y)  # label 2 first at row >= 80
    a, b = make(), make()
    a.partial_fit(X[:5], y[:5])
    _general(b, X[:5], y[:5])
    for i in range(5, 150):
        a.learn_one(_row(X, i, "dict"), int(y[i]))
        _general(b, _ref_batch(X, i, "csr"), y[i : i + 1])
    _same(a, b)
    assert list(a.classes_) == [0, 1, 2] and _events.event(a) is not None
    assert sum(road) == _known_label_rows(y, 5)


def _fitted(make=AROW, n=60, scale=1.0):
    X, y = _stream(n, 6, 2, seed=9)
    X = X * scale
    est = make().partial_fit(X[:40], y[:40])
    for i in range(40, n):
        est.learn_one(X[i], int(y[i]))
    return est, X, y


FAMILY = {
    "AROW": AROW,
    "AROW diagonal": lambda: AROW(covariance="diagonal"),
    "SCW-II": lambda: SCW(variant="SCW-II"),
    "MinMax": lambda: WeightedMinMax(b=400.0, random_state=0),
    "MinMax query diagonal": lambda: WeightedMinMax(
        b=400.0, query="margin", covariance="diagonal", random_state=0
    ),
}


@pytest.mark.parametrize("name", list(FAMILY))
@pytest.mark.parametrize("bad", list(BAD_ROWS))
def test_a_rejected_event_raises_one_clear_error_and_changes_nothing(name, bad):
    check_rejected(lambda: _fitted(FAMILY[name]), bad)


@pytest.mark.parametrize("name", list(FAMILY))
def test_an_update_refused_after_the_step_puts_the_state_back(name):
    """Values whose update overflows: found after the compiled step, which puts the copies
    back; the general path then raises its error (the min-max learner: its bound on ||x||^2,
    before the step).  Each row on a fresh model (small rows, so weights above 1: a huge value
    then makes the score overflow); the twin learns it only if it is accepted.  SCW's steps
    stay finite on these rows (accepted by both paths)."""
    refused = 0
    for v in (1e150, 1.7e308, -1.7e308):
        for x in ({0: v}, {0: v, 1: -v}, dict.fromkeys(range(6), v)):
            for lab in (0, 1):
                est, X, y = _fitted(FAMILY[name], scale=0.05)
                twin, _, _ = _fitted(FAMILY[name], scale=0.05)
                try:
                    est.learn_one(x, lab)
                except (ValueError, FloatingPointError) as e:
                    refused += 1
                    assert "left as it was" in str(e) or "b =" in str(e)
                else:
                    twin.learn_one(x, lab)
                _same(est, twin)
                for i in range(10):
                    est.learn_one(X[i], int(y[i]))
                    twin.learn_one(X[i], int(y[i]))
                _same(est, twin)
    assert refused or name.startswith("SCW")


@pytest.mark.parametrize("covariance", ["full", "diagonal"])
@pytest.mark.parametrize("d,density", [(6, 1.0), (200, 0.03)])
def test_the_compiled_transaction_puts_the_state_back_bit_for_bit(covariance, d, density):
    """The compiled step itself: a row whose update overflows leaves W, Sigma and the counters
    exactly as they were (a multiclass model: two columns move; a wide one: the rows of Sigma
    the row reaches are a block of it).  A small r on small rows: weights above 1, so a huge
    value makes the scores overflow."""
    X, y = _stream(80, d, 3, seed=10, density=density)
    est = AROW(r=0.01, covariance=covariance).partial_fit(X * 0.1, y)
    ev = _events.event(est)
    top = np.argsort(-np.abs(ev.W[:d]).max(axis=1))[:3]  # the largest weights: scores overflow
    statuses = []
    for code in (0, 1, 2):
        for v in (1.7e308, -1.7e308):
            for cols in (top[:1], np.sort(top)):
                data = np.full(len(cols), v)
                idx = np.array(cols, dtype=np.int32)
                before = [a.copy() for a in ev.arrays]
                ev.ib[SR.I_Y] = code
                statuses.append(_events._step(ev, data, idx))
                if statuses[-1] == SR.REFUSED:
                    for a, b in zip(ev.arrays, before, strict=True):
                        assert np.array_equal(a, b, equal_nan=True)
    assert SR.REFUSED in statuses


def test_the_exact_scores_are_scipy_s():
    rng = np.random.default_rng(11)
    for K in (1, 2, 5):
        W = rng.normal(size=(41, K)) * 10.0 ** rng.integers(-3, 4, size=(41, K))
        for _ in range(50):
            x = rng.normal(size=40) * 10.0 ** rng.integers(-5, 6, size=40)
            x[rng.random(40) > 0.5] = 0.0
            r = sp.csr_matrix(x[None, :])
            want = np.asarray(r @ W[:40]) + 1.0 * W[40]
            out = np.zeros(K)
            SR.exact_scores(r.data, r.indices.astype(np.int32), W, 40, 1.0, out)
            assert np.array_equal(out, want[0])


def test_minmax_row_beyond_its_bound_is_refused_and_changes_nothing():
    est, X, y = _fitted(lambda: WeightedMinMax(b=100.0, random_state=0))
    twin, _, _ = _fitted(lambda: WeightedMinMax(b=100.0, random_state=0))
    with pytest.raises(ValueError, match="b ="):
        est.learn_one({0: 11.0}, 1)
    _same(est, twin)


@pytest.mark.filterwarnings("ignore:X does not have valid feature names")
def test_named_features_map_through_the_model_vocabulary():
    """A dict row of feature names is its CSR row in the model's columns (the reference: that
    row without names, which scikit-learn's check lets through with a warning)."""

    def learn(ref, frame, X, i, y):
        _general(ref, _ref_batch(X, i, "csr"), y[i : i + 1])

    check_named_features(AROW, learn)


def test_copies_files_and_pickles_continue_the_stream(tmp_path):
    X, y = _stream(120, 5, 3, seed=13)
    est = WeightedMinMax(b=400.0, query="margin", random_state=1).partial_fit(X[:20], y[:20])
    for i in range(20, 60):
        est.learn_one(X[i], int(y[i]))
    save_model(est, tmp_path / "m.olm")
    others = [copy.deepcopy(est), pickle.loads(pickle.dumps(est)), load_model(tmp_path / "m.olm")]
    for i in range(60, 120):
        est.learn_one(_row(X, i, "dict"), int(y[i]))
        for o in others:
            o.learn_one(_row(X, i, "dict"), int(y[i]))
    for o in others[:2]:
        _same(est, o)
    loaded = others[2]
    for k in est._state.arrays:
        assert np.array_equal(est._state.arrays[k], loaded._state.arrays[k])


def test_before_any_learning_river_conventions():
    check_river_conventions(AROW)
