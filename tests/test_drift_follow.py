"""DriftFollowingClassifier: recovery after an abrupt change, the policies against a plain
reference loop, equality with the plain model where no alarm is raised, the batch API against
the event loop, failed updates, scikit-learn's conventions."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone

from onlinelearn import AROW, PassiveAggressiveClassifier, PassiveAggressiveRegressor, Perceptron
from onlinelearn.drift import (
    ADWIN,
    DDM,
    EDDM,
    DriftFollowingClassifier,
    DriftFollowingRegressor,
    PageHinkley,
)

T0 = 3000


def flip_stream(seed, n=6000, t0=T0, d=5, noise=0.0):
    """A linear concept sign(w.x) that flips to sign(-w.x) at row t0."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    w = rng.normal(size=d)
    s = np.where(np.arange(n) < t0, 1.0, -1.0)
    y = (s * (X @ w) + noise * rng.normal(size=n) > 0).astype(np.int64)
    return X, y


def prequential(model, X, y):
    """0/1 errors, predicting each row before learning it (no prediction counts as wrong)."""
    err = np.empty(len(y))
    for i in range(len(y)):
        p = model.predict_one(X[i])
        err[i] = p is None or p != y[i]
        model.learn_one(X[i], y[i])
    return err


def recovery_delay(err, t0, window=200, threshold=0.1):
    """Rows after t0 until the next ``window`` rows err at most ``threshold`` (None: never)."""
    c = np.r_[0.0, np.cumsum(err[t0:])]
    ok = np.flatnonzero((c[window:] - c[:-window]) / window <= threshold)
    return int(ok[0]) if ok.size else None


def state(model):
    """The learned weights of a linear model (exact comparisons)."""
    return np.r_[np.ravel(model.coef_), np.ravel(model.intercept_)]


MAKERS = {
    "PA-I": lambda: PassiveAggressiveClassifier(variant="PA-I"),
    "Perceptron": Perceptron,
    "AROW": AROW,
}


@pytest.mark.parametrize("policy", ["reset", "background"])
@pytest.mark.parametrize("name", list(MAKERS))
def test_recovers_after_an_abrupt_change_where_the_plain_model_does_not(name, policy):
    X, y = flip_stream(0)
    make = MAKERS[name]
    plain = recovery_delay(prequential(make(), X, y), T0)
    wrapper = DriftFollowingClassifier(make(), policy=policy)
    followed = recovery_delay(prequential(wrapper, X, y), T0)
    limit = 150
    assert followed is not None and followed <= limit
    assert plain is None or plain > limit
    # the change is found after it happens, once or a few times, and nothing before it
    assert wrapper.n_drifts_ >= 1
    assert T0 <= wrapper.drift_indices_[0] < T0 + limit


def started(est, x, t, seen):
    """A fresh clone of ``est`` that learned ``(x, t)`` with the labels seen so far declared."""
    return clone(est).partial_fit(x[None, :], [t], classes=np.unique(list(seen) + [t]))


def reference(est, det, policy, X, y):
    """The two policies written out plainly (DDM: alarms only on rises, with warnings); a
    model started on a row knows the labels seen before it."""
    fg, bg, fe, be, drifts = clone(est), None, 0, 0, []
    for i in range(len(y)):
        x, t = X[i], y[i]
        seen = set(y[:i].tolist())
        p = fg.predict_one(x)
        drift = warn = fresh = False
        if p is not None:
            det.update(int(p != t))
            drift, warn = det.drift_detected, det.warning_detected
        if drift:
            drifts.append(i)
            if policy == "background" and bg is not None:
                bp = bg.predict_one(x)
                if be + (bp is None or bp != t) < fe + (p != t):
                    fg = bg
            else:
                fg, fresh = started(est, x, t, seen), True
            bg = None
        elif policy == "background" and warn:
            if bg is None:
                bg, fe, be = None, 0, 0
            bp = None if bg is None else bg.predict_one(x)
            be += bp is None or bp != t
            fe += p != t
            bg = started(est, x, t, seen) if bg is None else bg
            if bp is not None:
                bg.learn_one(x, t)
        else:
            bg = None
        if not fresh:
            fg.learn_one(x, t)
    return fg, bg, drifts


@pytest.mark.parametrize("policy", ["reset", "background"])
@pytest.mark.parametrize("detector", [DDM, EDDM])
def test_policies_match_a_plain_reference_loop_bit_for_bit(policy, detector):
    X, y = flip_stream(1, noise=0.3)
    est = PassiveAggressiveClassifier(variant="PA-I")  # averaged: slow to follow alone
    fg, bg, drifts = reference(est, detector(), policy, X, y)
    w = DriftFollowingClassifier(est, detector=detector(), policy=policy)
    for i in range(len(y)):
        w.learn_one(X[i], y[i])
    assert drifts and w.drift_indices_.tolist() == drifts
    np.testing.assert_array_equal(state(w.model_), state(fg))
    assert (w.background_ is None) == (bg is None)
    if bg is not None:
        np.testing.assert_array_equal(state(w.background_), state(bg))
    if policy == "background":
        assert w.n_replacements_ >= 1


def test_reset_model_is_a_fresh_clone_trained_since_the_alarm():
    """... that knows the labels seen before the alarm (River's check that a classifier keeps
    every label it has seen)."""
    X, y = flip_stream(2)
    est = PassiveAggressiveClassifier(variant="PA-I")
    w = DriftFollowingClassifier(est).fit(X, y)
    k = int(w.drift_indices_[-1])
    fresh = clone(est).partial_fit(X[k:k + 1], y[k:k + 1], classes=np.unique(y[: k + 1]))
    for i in range(k + 1, len(y)):
        fresh.partial_fit(X[i:i + 1], y[i:i + 1])
    np.testing.assert_array_equal(state(w.model_), state(fresh))


@pytest.mark.parametrize("detector", [None, DDM()])
@pytest.mark.parametrize("name", list(MAKERS))
def test_equal_to_the_plain_model_where_no_alarm_is_raised(name, detector):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(3000, 4))
    y = (X @ rng.normal(size=4) + 0.5 * rng.normal(size=3000) > 0).astype(np.int64)
    plain = MAKERS[name]()
    w = DriftFollowingClassifier(MAKERS[name](), detector=detector)
    preds_plain = [None] * len(y)
    preds_w = [None] * len(y)
    for i in range(len(y)):
        preds_plain[i] = plain.predict_one(X[i])
        preds_w[i] = w.predict_one(X[i])
        plain.learn_one(X[i], y[i])
        w.learn_one(X[i], y[i])
    assert w.detector_.n_detections == 0 and w.n_drifts_ == 0  # the premise
    assert preds_w == preds_plain
    np.testing.assert_array_equal(state(w.model_), state(plain))
    np.testing.assert_array_equal(w.predict(X), plain.predict(X))
    np.testing.assert_array_equal(w.decision_function(X), plain.decision_function(X))


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("policy", ["reset", "background"])
def test_partial_fit_is_the_event_loop(policy, sparse):
    X, y = flip_stream(4, n=4000, t0=2000, noise=0.2)
    X[np.abs(X) < 0.5] = 0.0
    Xb = sp.csr_matrix(X) if sparse else X
    est = PassiveAggressiveClassifier(variant="PA-I")
    batch = DriftFollowingClassifier(est, policy=policy)
    batch.partial_fit(Xb[:1500], y[:1500]).partial_fit(Xb[1500:], y[1500:])
    loop = DriftFollowingClassifier(est, policy=policy)
    for i in range(len(y)):
        loop.learn_one(Xb[i : i + 1] if sparse else X[i], y[i])
    assert batch.n_drifts_ >= 1
    assert batch.drift_indices_.tolist() == loop.drift_indices_.tolist()
    assert batch.n_seen_ == loop.n_seen_ == len(y)
    np.testing.assert_array_equal(state(batch.model_), state(loop.model_))
    np.testing.assert_array_equal(batch.predict(Xb), loop.predict(Xb))
    assert [loop.predict_one(X[i]) for i in range(50)] == batch.predict(X[:50]).tolist()


def _snapshot(w):
    return pickle.dumps((w.model_.coef_, w.model_.intercept_, w.detector_.__dict__,
                         w.n_seen_, w.drift_indices_, w.n_replacements_,
                         None if w.background_ is None else w.background_.coef_,
                         w._fg_errors, w._bg_errors, w._fed))  # fmt: skip


@pytest.mark.parametrize("policy", ["reset", "background"])
def test_a_failed_update_changes_nothing(policy):
    X, y = flip_stream(5, noise=0.3)
    w = DriftFollowingClassifier(PassiveAggressiveClassifier(), policy=policy)
    stops = 0
    for i in range(len(y)):
        w.learn_one(X[i], y[i])
        if i % 500 == 17 or (w.background_ is not None and stops < 5):
            stops += w.background_ is not None
            before = _snapshot(w)
            bad = X[i].copy()
            bad[1] = np.nan
            with pytest.raises(ValueError, match="NaN|finite"):
                w.learn_one(bad, y[i])
            with pytest.raises(ValueError):
                w.learn_one(np.r_[X[i], 1.0], y[i])  # a wrong width
            with pytest.raises(ValueError, match="label"):
                w.learn_one(X[i], None)  # refused by the model after the detector's update
            bad_batch = X[i : i + 40].copy()
            bad_batch[30, 0] = np.inf
            with pytest.raises(ValueError, match="finite"):
                w.partial_fit(bad_batch, y[i : i + 40])
            with pytest.raises(ValueError):
                w.partial_fit(X[i : i + 40], y[i : i + 39])
            assert _snapshot(w) == before
    if policy == "background":
        assert stops >= 1  # some checks were made with a background model running


def test_clone_get_params_and_parameter_checks():
    est = PassiveAggressiveClassifier(C=0.5)
    w = DriftFollowingClassifier(est, detector=DDM(warm_start=50), policy="background")
    params = w.get_params()
    assert params["estimator"] is est and params["policy"] == "background"
    assert params["estimator__C"] == 0.5 and params["rises_only"] is True
    X, y = flip_stream(6, n=1000)
    w.fit(X, y)
    c = clone(w)
    assert not hasattr(c, "model_")
    assert c.get_params()["estimator__C"] == 0.5 and c.detector.warm_start == 50
    c.set_params(estimator__C=0.25)
    assert c.fit(X, y).model_.C == 0.25 and est.C == 0.5
    assert not hasattr(est, "coef_")  # the template is never trained
    with pytest.raises(ValueError, match="policy"):
        DriftFollowingClassifier(est, policy="restart").fit(X, y)
    with pytest.raises(ValueError, match="warning"):
        DriftFollowingClassifier(est, detector=ADWIN(), policy="background").fit(X, y)
    with pytest.raises(ValueError, match="estimator"):
        DriftFollowingClassifier().learn_one(X[0], y[0])


def test_labels_grow_and_pickle_round_trip():
    rng = np.random.default_rng(7)
    X = rng.normal(size=(900, 3))
    y = np.array(["a", "b", "c"])[np.argmax(X, axis=1)]
    w = DriftFollowingClassifier(Perceptron())
    assert w.predict_one(X[0]) is None and w.predict_proba_one(X[0]) == {}
    w.partial_fit(X[:300][y[:300] != "c"], y[:300][y[:300] != "c"])
    assert w.classes_.tolist() == ["a", "b"]
    w.partial_fit(X[300:600], y[300:600])
    assert w.classes_.tolist() == ["a", "b", "c"]
    w2 = pickle.loads(pickle.dumps(w))
    w.partial_fit(X[600:], y[600:])
    w2.partial_fit(X[600:], y[600:])
    np.testing.assert_array_equal(w.decision_function(X), w2.decision_function(X))
    assert w.drift_indices_.tolist() == w2.drift_indices_.tolist()
    assert set(w.predict_proba_one(X[0])) == {"a", "b", "c"}


def test_the_docstring_example_runs():
    import doctest

    import onlinelearn.drift.follow

    result = doctest.testmod(onlinelearn.drift.follow, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 0


def regression_flip(seed, n=6000, t0=T0, d=4, noise=0.0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    w = rng.normal(size=d)
    s = np.where(np.arange(n) < t0, 1.0, -1.0)
    return X, s * (X @ w) + noise * rng.normal(size=n)


def test_regressor_follows_a_flipped_target_and_is_the_event_loop():
    X, y = regression_flip(8)
    make = lambda: PassiveAggressiveRegressor(average=True)  # noqa: E731

    def abs_errors(model):
        out = np.empty(len(y))
        for i in range(len(y)):
            out[i] = abs(y[i] - model.predict_one(X[i]))
            model.learn_one(X[i], y[i])
        return out

    plain = abs_errors(make())
    w = DriftFollowingRegressor(make())
    assert w.predict_one(X[0]) == 0.0
    followed = abs_errors(w)
    assert w.n_drifts_ >= 1 and T0 <= w.drift_indices_[0] < T0 + 200
    # mean absolute error over rows [t0 + 300, t0 + 800): the wrapper is back near its
    # pre-change level, the averaged plain model is not
    pre = followed[T0 - 500 : T0].mean()
    after_w, after_plain = followed[T0 + 300 : T0 + 800].mean(), plain[T0 + 300 : T0 + 800].mean()
    assert after_w < pre + 0.1 < after_plain
    batch = DriftFollowingRegressor(make()).partial_fit(X[:3500], y[:3500])
    batch.partial_fit(sp.csr_matrix(X[3500:]), y[3500:])
    loop = DriftFollowingRegressor(make())
    for i in range(len(y)):
        loop.learn_one(X[i] if i < 3500 else sp.csr_matrix(X[i : i + 1]), y[i])
    assert batch.drift_indices_.tolist() == loop.drift_indices_.tolist()
    np.testing.assert_array_equal(state(batch.model_), state(loop.model_))
    np.testing.assert_array_equal(batch.predict(X), loop.predict(X))


def test_regressor_without_alarms_is_the_plain_model_and_refuses_bad_rows():
    X, y = regression_flip(9, t0=10**9, noise=0.1)
    w = DriftFollowingRegressor(PassiveAggressiveRegressor(), detector=PageHinkley(mode="up"))
    w.fit(X, y)
    plain = PassiveAggressiveRegressor()
    for i in range(len(y)):
        plain.learn_one(X[i], y[i])
    assert w.n_drifts_ == 0 and w.detector_.n_detections == 0  # the premise
    np.testing.assert_array_equal(state(w.model_), state(plain))
    before = _snapshot(w)
    bad = X[5].copy()
    bad[0] = np.inf
    with pytest.raises(ValueError, match="finite"):
        w.learn_one(bad, 1.0)
    with pytest.raises(ValueError):
        w.learn_one(X[5], np.nan)  # refused by the model after the detector's update
    assert _snapshot(w) == before
    c = clone(w)
    assert not hasattr(c, "model_") and c.get_params()["detector"].mode == "up"
    with pytest.raises(ValueError, match="warning"):
        DriftFollowingRegressor(PassiveAggressiveRegressor(), policy="background").fit(X, y)
