"""One event at a time (``onlinelearn.shell.events``): ``learn_one`` / ``predict_one`` /
``predict_proba_one`` and ``partial_fit`` on one row of the linear classifiers.

The reference is the general path of ``partial_fit`` (``OnlineMixin.partial_fit``: validation,
transaction, the batch pass, the checks after it, the calibration), called on the same one-row
batches: the event road must leave every attribute bit for bit as it does, and a rejected event
must leave the model as it was."""

from __future__ import annotations

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
)
from _events_ref import general as _general
from _events_ref import known_label_rows as _known_label_rows
from _events_ref import ref_batch as _ref_batch
from _events_ref import row as _row
from _events_ref import same as _same
from _events_ref import stream as _stream

import onlinelearn
from onlinelearn import COPA, PassiveAggressiveClassifier, Perceptron, Winnow
from onlinelearn._core import one_row
from onlinelearn.shell import events

LEARNERS = {
    "PA-I": lambda: PassiveAggressiveClassifier(variant="PA-I"),
    "PA": lambda: PassiveAggressiveClassifier(variant="PA", average=False),
    "PA-II no intercept": lambda: PassiveAggressiveClassifier(variant="PA-II", fit_intercept=False),
    "PA-I t^2 average": lambda: PassiveAggressiveClassifier(average_power=2.0),
    "PA-I float32": lambda: PassiveAggressiveClassifier(dtype="float32"),
    "Perceptron": lambda: Perceptron(),
    "Perceptron last iterate": lambda: Perceptron(average=False),
    "PA-I auto intercept": lambda: PassiveAggressiveClassifier(intercept_scaling="auto"),
    "COPA": lambda: COPA(),
}


@pytest.fixture
def road(monkeypatch):
    """The rows that took the compiled event step."""
    return counting(monkeypatch, events, "learn_row")


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
    assert len(road) == _known_label_rows(y, 5)


@pytest.mark.parametrize("name", ["PA-I", "Perceptron", "COPA"])
def test_partial_fit_of_one_row_takes_the_event_road_and_gives_the_same_model(name, road):
    X, y = _stream(200, 5, 3, seed=3)
    check_partial_fit_rows(LEARNERS[name], X, y)
    assert len(road) == 2 * _known_label_rows(y, 10)


def test_a_parameter_set_between_events_is_used_by_the_next_event():
    X, y = _stream(120, 4, 2, seed=5)
    a, b = PassiveAggressiveClassifier(), PassiveAggressiveClassifier()
    a.partial_fit(X[:5], y[:5])
    _general(b, X[:5], y[:5])
    for i in range(5, 120):
        if i == 60:
            a.set_params(C=0.01)
            b.set_params(C=0.01)
        a.learn_one(X[i], int(y[i]))
        _general(b, X[i : i + 1], y[i : i + 1])
    _same(a, b)


def test_a_new_label_goes_through_partial_fit_and_the_road_resumes():
    X, y = _stream(150, 4, 3, seed=6)
    y = np.where(np.arange(150) < 80, np.minimum(y, 1), y)  # label 2 first at row >= 80
    a, b = Perceptron(), Perceptron()
    a.partial_fit(X[:5], y[:5])
    _general(b, X[:5], y[:5])
    for i in range(5, 150):
        a.learn_one(X[i], int(y[i]))
        _general(b, X[i : i + 1], y[i : i + 1])
    _same(a, b)
    assert list(a.classes_) == [0, 1, 2] and events.event(a).learns


@pytest.mark.parametrize("make", [PassiveAggressiveClassifier, Perceptron])
def test_string_labels_longer_than_the_first_ones_are_kept_whole(make):
    """A label longer than the known ones joins as itself (the label array of one event once
    took the classes' string width and cut it: 'brickface' joined as 'bric')."""
    X, _ = _stream(60, 4, 2, seed=8)
    names = np.array(["sky", "path", "brickface", "a", "foliage-and-grass"])
    y = names[np.arange(60) % 5]
    a, b = make(), make()
    a.learn_one(X[0], str(y[0]))
    b.partial_fit(X[:1], y[:1].astype(object))
    for i in range(1, 60):
        a.learn_one(X[i], str(y[i]))
        b.partial_fit(X[i : i + 1], y[i : i + 1].astype(object))
    assert sorted(a.classes_.tolist()) == sorted(set(names.tolist()))
    assert a.classes_.tolist() == b.classes_.tolist()
    assert a.predict_one(X[0]) in set(names.tolist())
    np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X))


def test_the_other_links_learn_one_row_through_partial_fit():
    X, y = _stream(100, 5, 2, seed=7)
    X = np.abs(X)
    a, b = Winnow(), Winnow()
    a.partial_fit(X[:5], y[:5])
    b.partial_fit(X[:5], y[:5])
    for i in range(5, 100):
        a.learn_one(X[i], int(y[i]))
        b.partial_fit(X[i : i + 1], y[i : i + 1])
        assert a.predict_one(X[i]) == b.predict(X[i : i + 1])[0]
    _same(a, b)


def _fitted(make=PassiveAggressiveClassifier, n=60):
    X, y = _stream(n, 6, 2, seed=8)
    est = make().partial_fit(X[:40], y[:40])
    for i in range(40, n):
        est.learn_one(X[i], int(y[i]))
    return est, X, y


@pytest.mark.parametrize("make", [PassiveAggressiveClassifier, Perceptron, COPA])
@pytest.mark.parametrize("bad", list(BAD_ROWS))
def test_a_rejected_event_raises_one_clear_error_and_changes_nothing(make, bad):
    check_rejected(lambda: _fitted(make), bad)


@pytest.mark.parametrize("make", [PassiveAggressiveClassifier, Perceptron])
def test_an_update_refused_after_the_step_puts_the_state_back(make):
    """Values whose squared norm overflows (PA: no step although the row has a loss) or
    whose weights overflow (the averaged Perceptron): found after the compiled step, which
    puts the copies back; the general path then raises its error."""
    est, X, y = _fitted(make)
    twin, _, _ = _fitted(make)
    refused = 0
    for v in (1e200, 1.7e308, -1.7e308):
        for lab in (0, 1):
            try:
                est.learn_one({0: v, 1: v}, lab)
            except (ValueError, FloatingPointError) as e:
                refused += 1
                assert "left as it was" in str(e)
            else:
                twin.learn_one({0: v, 1: v}, lab)
            _same(est, twin)
    assert refused


def test_learn_row_leaves_the_state_bit_for_bit_when_it_refuses():
    """The compiled transaction itself: a refused row restores theta, U and st exactly; a row
    whose columns are not increasing (repeated or unsorted) is refused before anything."""
    est, X, y = _fitted(Perceptron, n=80)
    ev = events.event(est)
    data = np.array([1.7e308, 1.7e308, 1.7e308])
    idx = np.array([2, 3, 5], dtype=np.int32)
    statuses = []
    for code in (0, 1):  # one of them is a mistake, whose update overflows
        before = [a.copy() for a in (ev.theta, ev.A, ev.st)]
        statuses.append(one_row.learn_row(data, idx, code, ev.theta, ev.tab))
        if statuses[-1] == one_row.REFUSED:
            for a, b in zip((ev.theta, ev.A, ev.st), before, strict=True):
                assert np.array_equal(a, b, equal_nan=True)
    assert one_row.REFUSED in statuses
    before = [a.copy() for a in (ev.theta, ev.A, ev.st)]
    for bad in ([2, 2, 3], [3, 2, 5]):
        status = one_row.learn_row(data, np.array(bad, dtype=np.int32), 0, ev.theta, ev.tab)
        assert status == one_row.UNSORTED
        for a, b in zip((ev.theta, ev.A, ev.st), before, strict=True):
            assert np.array_equal(a, b, equal_nan=True)


def test_named_features_map_through_the_model_vocabulary():
    def learn(ref, frame, X, i, y):
        ref.partial_fit(frame.iloc[i : i + 1], y[i : i + 1])

    check_named_features(PassiveAggressiveClassifier, learn)


def test_before_any_learning_river_conventions():
    check_river_conventions(PassiveAggressiveClassifier)


def test_a_row_changed_between_predict_one_and_learn_one_is_learned_as_it_is_then():
    """The entries kept from predict_one serve learn_one only for an equal row, keys in the
    same order: a row edited in place, or the same row in another order, is converted again."""
    X, y = _stream(60, 4, 2, seed=11)
    a, b = Perceptron(), Perceptron()
    a.partial_fit(X[:5], y[:5])
    _general(b, X[:5], y[:5])
    for i in range(5, 60):
        x = {j: float(X[i, j]) for j in range(4)}
        a.predict_one(x)
        if i % 2 == 0:
            x[1] = 2.5  # edited in place after predict_one
        a.learn_one(x, int(y[i]))
        idx = np.array(list(x), dtype=np.int32)
        Xi = sp.csr_matrix((np.array(list(x.values())), idx, [0, 4]), shape=(1, 4))
        _general(b, Xi, y[i : i + 1])
    _same(a, b)
    _same(a, b)
    # the same entries in another order are converted again, in their order, and learned as
    # the canonical CSR row (columns sorted), as partial_fit learns them
    for i in range(40):
        x = {j: float(X[i, j]) for j in range(4)}
        a.predict_one(x)
        r = dict(reversed(list(x.items())))
        a.learn_one(r, int(y[i]))
        assert events.event(a).last[1] == [3, 2, 1, 0]
        _general(b, sp.csr_matrix(X[i : i + 1]), y[i : i + 1])
    _same(a, b)


@pytest.mark.parametrize(
    "make", [lambda: onlinelearn.AROW(), lambda: onlinelearn.KernelPerceptron(),
             lambda: onlinelearn.PassiveAggressiveRegressor(), lambda: onlinelearn.Pegasos()],
    ids=["AROW", "KernelPerceptron", "PassiveAggressiveRegressor", "Pegasos"],
)  # fmt: skip
def test_every_online_estimator_learns_and_predicts_one_row(make):
    """learn_one / predict_one (and predict_proba_one) on every online estimator: partial_fit
    and predict of that row, River's conventions before any learning."""
    from sklearn.base import is_classifier

    X, y = _stream(40, 4, 2, seed=12)
    a, b = make(), make()
    if not is_classifier(a):
        y = X @ np.arange(1.0, 5.0)
    assert a.predict_one({0: 1.0}) == (None if is_classifier(a) else 0.0)
    for i in range(40):
        x = {j: float(X[i, j]) for j in np.flatnonzero(X[i])} if i else X[i]
        if i:
            p = a.predict_one(x)
            assert p == b.predict(sp.csr_matrix(X[i : i + 1]))[0]
        a.learn_one(x, y[i].item())
        b.partial_fit(sp.csr_matrix(X[i : i + 1]) if i else X[i : i + 1], y[i : i + 1])
    np.testing.assert_array_equal(a.predict(X), b.predict(X))
    if hasattr(a, "predict_proba"):
        P = a.predict_proba_one(X[3])
        np.testing.assert_array_equal(list(P.values()), b.predict_proba(X[3:4])[0])


def test_rows_of_the_same_keys_are_each_read_as_they_are():
    """A None value is a missing feature (left out), a new row of the same keys is read anew
    (the columns kept from the last row serve only a row of numbers under the same keys)."""
    X, y = _stream(60, 4, 2, seed=13)
    a, b = Perceptron(), Perceptron()
    a.partial_fit(X[:5], y[:5])
    _general(b, X[:5], y[:5])
    for i in range(5, 60):
        x = {j: float(X[i, j]) for j in range(4)}
        if i % 3 == 0:
            x[1] = None
        keep = [j for j in range(4) if x[j] is not None]
        Xi = sp.csr_matrix((np.array([x[j] for j in keep]), np.array(keep), [0, len(keep)]),
                           shape=(1, 4))  # fmt: skip
        assert a.predict_one(x) == b.predict(Xi)[0]
        a.learn_one(x, int(y[i]))
        _general(b, Xi, y[i : i + 1])
    _same(a, b)


def test_a_subclass_that_overrides_a_hook_of_the_transaction_learns_through_it():
    """The event road is taken only when the shell's transaction and its hooks are the
    library's own: a user's override of one (here ``_epoch``) is called by learn_one."""

    class Counting(PassiveAggressiveClassifier):
        def _epoch(self, call, order):
            self.epochs_seen = getattr(self, "epochs_seen", 0) + 1
            return super()._epoch(call, order)

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(6, 3)), np.array([0, 1, 0, 1, 1, 0])
    mine, ref = Counting(), PassiveAggressiveClassifier()
    mine.partial_fit(X[:2], y[:2], classes=[0, 1])
    ref.partial_fit(X[:2], y[:2], classes=[0, 1])
    for x, t in zip(X[2:], y[2:], strict=True):
        mine.learn_one(dict(enumerate(x)), t)
        ref.learn_one(dict(enumerate(x)), t)
    assert mine.epochs_seen == 1 + 4
    np.testing.assert_array_equal(mine.coef_, ref.coef_)
