"""The one-row paths of onlinelearn.river: ``learn_one`` row after row leaves the learner bit
for bit as ``partial_fit`` on one row at a time does, for several families (the linear and
the second-order classifiers: their event road on the row's entries, against ``partial_fit``
of the CSR row; the others: a kept dense row buffer), and a rejected row changes nothing, the buffer
included."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.sparse as sp

pytest.importorskip("river")

from _events_ref import general as _general  # noqa: E402
from _events_ref import known_label_rows  # noqa: E402
from _events_ref import same as _same  # noqa: E402
from river import datasets  # noqa: E402

from onlinelearn import (  # noqa: E402
    AROW,
    PassiveAggressiveClassifier,
    PassiveAggressiveRegressor,
    Perceptron,
    Winnow,
)
from onlinelearn.river import RiverClassifier, RiverRegressor  # noqa: E402
from onlinelearn.second_order import _events as so_events  # noqa: E402
from onlinelearn.shell import events  # noqa: E402

N = 150


def _phishing(n=N):
    return list(itertools.islice(datasets.Phishing(), n))


def _dense(rows, names, width):
    X = np.zeros((len(rows), width))
    for i, x in enumerate(rows):
        for k, v in x.items():
            X[i, names.index(k)] = float(v)
    return X


def _csr_rows(rows, names, width):
    """Each row as the CSR row of its entries in the dict's order (the event road's rows)."""
    out = []
    for x in rows:
        idx = np.array([names.index(k) for k in x], dtype=np.int32)
        data = np.array([float(v) for v in x.values()])
        out.append(sp.csr_matrix((data, idx, [0, len(idx)]), shape=(1, width)))
    return out


def _buffer_clean(ad):
    buf = getattr(ad._rows, "buf", None)
    return buf is None or not buf.any()


CLASSIFIERS = {
    "Perceptron": lambda: Perceptron(average=False),
    "PA (averaged)": lambda: PassiveAggressiveClassifier(),
    "Winnow": lambda: Winnow(),
    "AROW": lambda: AROW(),
}


#: the learners whose learn_one takes the event road (the others: partial_fit)
LEAN = {"Perceptron", "PA (averaged)", "AROW"}


@pytest.fixture
def lean_calls(monkeypatch):
    """For each row offered to an event road (the linear classifiers', the second-order
    ones'): whether it took it (else partial_fit)."""
    calls = []
    for module in (events, so_events):
        real = module.learn_entries

        def counting(est, data, idx, y, real=real):
            took = real(est, data, idx, y)
            calls.append(took)
            return took

        monkeypatch.setattr(module, "learn_entries", counting)
    return calls


@pytest.mark.parametrize("name", list(CLASSIFIERS))
def test_learn_one_is_partial_fit_on_one_row_bit_for_bit(name, lean_calls):
    make = CLASSIFIERS[name]
    rows = _phishing()
    width = 32
    ad = RiverClassifier(make(), n_features=width)
    ref = make()
    names = list(dict.fromkeys(k for x, _ in rows for k in x))  # order of arrival
    lean = name in LEAN
    csr = getattr(ref, "_event_partial_fit", None) is not None  # the adapter: CSR rows
    X = _dense([x for x, _ in rows], names, width)
    R = _csr_rows([x for x, _ in rows], names, width)
    for i, (x, y) in enumerate(rows):
        Xi = R[i] if csr else X[i : i + 1]
        if i >= 2:  # the read-outs agree before every update, probabilities included
            assert ad.predict_one(x) == ref.predict(Xi)[0]
            p = ad.predict_proba_one(x)
            q = ref.predict_proba(Xi)[0]
            if lean:  # (computed in Python floats, not numpy's: rounding apart)
                np.testing.assert_allclose([p[c] for c in ref.classes_], q, rtol=1e-12)
            else:
                assert [p[c] for c in ref.classes_] == list(q)
        ad.learn_one(x, y)
        _general(ref, Xi, np.array([y]))
    _same(ad.estimator, ref)
    assert _buffer_clean(ad)  # the kept row is zero between calls
    # every row with a label seen before, once two labels were seen, took the event road
    # (the learners it covers)
    assert sum(lean_calls) == (_known_label_rows(rows) if lean else 0)


def _known_label_rows(rows):
    return known_label_rows([y for _, y in rows])


def test_a_new_label_mid_stream_takes_partial_fit_and_gives_its_model(lean_calls):
    rows = [(x, "a" if y else "b") for x, y in _phishing(60)]
    rows[40] = (rows[40][0], "c")  # the label set grows at row 40
    ad, ref = RiverClassifier(PassiveAggressiveClassifier(), n_features=16), None
    ref = PassiveAggressiveClassifier()
    names = list(dict.fromkeys(k for x, _ in rows for k in x))
    R = _csr_rows([x for x, _ in rows], names, 16)
    for i, (x, y) in enumerate(rows):
        ad.learn_one(x, y)
        _general(ref, R[i], np.array([y]))
    _same(ad.estimator, ref)
    assert list(ad.estimator.classes_) == ["a", "b", "c"]
    assert lean_calls[40] is False and sum(lean_calls) == _known_label_rows(rows)


def test_regressor_learn_one_is_partial_fit_on_one_row_bit_for_bit():
    rng = np.random.default_rng(1)
    w = rng.normal(size=5)
    Xr = rng.normal(size=(N, 5))
    rows = [({f"f{j}": float(v) for j, v in enumerate(x) if v > -1.0}, float(x @ w))
            for x in Xr]  # fmt: skip
    ad = RiverRegressor(PassiveAggressiveRegressor(), n_features=8)
    ref = PassiveAggressiveRegressor()
    names = [f"f{j}" for j in range(5)]
    seen = []
    for x, y in rows:
        seen += [k for k in x if k not in seen]
        v = np.zeros((1, 8))
        for k, val in x.items():
            v[0, seen.index(k)] = val
        if "_w" in ref.__dict__:
            assert ad.predict_one(x) == ref.predict(v)[0]
        ad.learn_one(x, y)
        ref.partial_fit(v, np.array([y]))
    assert sorted(seen) == names
    _same(ad.estimator, ref)


@pytest.mark.parametrize("width", [4, 2**13])  # dense with collisions; CSR
def test_hashed_rows_are_the_matrix_rows(width):
    """The one-row path adds colliding names in the row's order, as the batch path does."""
    rows = [x for x, _ in _phishing(40)]
    ad = RiverClassifier(PassiveAggressiveClassifier(), n_features=width, hashing=True)
    for x in rows:
        R = ad._rows.row(x, True)
        got = R.toarray() if hasattr(R, "toarray") else R.copy()
        ad._rows.clear()
        want = ad._rows.matrix([x], True)
        want = want.toarray() if hasattr(want, "toarray") else want
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name", ["Perceptron", "PA (averaged)", "AROW"])
@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
def test_a_rejected_row_changes_nothing_and_leaves_the_row_clean(name, bad):
    make = CLASSIFIERS[name]
    rows = _phishing(60)
    ad, twin = RiverClassifier(make(), n_features=32), RiverClassifier(make(), n_features=32)
    for x, y in rows[:30]:
        ad.learn_one(x, y)
        twin.learn_one(x, y)
    x0, y0 = rows[30]
    with pytest.raises(ValueError, match="Input X contains"):
        ad.learn_one({**x0, "new_feature": bad}, y0)
    with pytest.raises(ValueError, match="Input X contains"):
        ad.learn_one({**x0, next(iter(x0)): bad}, y0)
    with pytest.raises(ValueError, match="Input X contains"):
        ad.predict_one({**x0, next(iter(x0)): bad})
    _same(ad.estimator, twin.estimator)
    assert ad.feature_names_ == twin.feature_names_
    assert _buffer_clean(ad)
    for x, y in rows[30:]:  # and what follows is as if the bad rows never came
        assert ad.predict_one(x) == twin.predict_one(x)
        ad.learn_one(x, y)
        twin.learn_one(x, y)
    _same(ad.estimator, twin.estimator)


def test_a_regressor_refuses_a_bad_target_and_changes_nothing():
    ad, twin = RiverRegressor(PassiveAggressiveRegressor()), RiverRegressor(
        PassiveAggressiveRegressor()
    )
    for i in range(5):
        ad.learn_one({"a": float(i)}, 2.0 * i)
        twin.learn_one({"a": float(i)}, 2.0 * i)
    for y in (float("nan"), float("inf")):
        with pytest.raises(ValueError):
            ad.learn_one({"a": 1.0, "b": 1.0}, y)
    with pytest.raises((ValueError, TypeError)):
        ad.learn_one({"a": 1.0}, "high")
    _same(ad.estimator, twin.estimator)
    assert ad.feature_names_ == ["a"] and not ad._rows.buf.any()


def test_a_label_of_another_type_is_refused_and_changes_nothing():
    rows = _phishing(20)
    ad, twin = RiverClassifier(PassiveAggressiveClassifier()), RiverClassifier(
        PassiveAggressiveClassifier()
    )
    for x, y in rows:
        ad.learn_one(x, y)
        twin.learn_one(x, y)
    with pytest.raises(ValueError, match="labels"):
        ad.learn_one(rows[0][0], "spam")
    _same(ad.estimator, twin.estimator)
    assert _buffer_clean(ad)


@pytest.mark.parametrize("make", [PassiveAggressiveClassifier, Perceptron])
def test_a_row_refused_after_the_pass_changes_nothing(make):
    """Huge values: PA refuses a row whose squared norm overflows, the averaged Perceptron a
    weight that overflows; both are found after the compiled pass has run, so the transaction
    puts the touched weights back.  The twin learns only the rows that were accepted."""
    rows = _phishing(40)
    ad, twin = RiverClassifier(make(), n_features=32), RiverClassifier(make(), n_features=32)
    refused = []
    stream = list(rows[:30])
    for i, v in enumerate((1e200, 1e200, 1.7e308, 1.7e308, 1.7e308)):
        stream += [({**rows[0][0], "https": v}, bool(i % 2)), rows[30 + i]]
    for x, y in stream:
        try:
            ad.learn_one(x, y)
        except (ValueError, FloatingPointError) as e:
            refused.append(type(e).__name__)
            assert "left as it was" in str(e)
        else:
            twin.learn_one(x, y)
        _same(ad.estimator, twin.estimator)
        assert _buffer_clean(ad)
    assert refused  # the stream did reach the checks after the pass


def test_rows_of_the_same_names_are_each_read_as_they_are():
    """The columns kept from the last row serve only a row of numbers under the same names: a
    string value (the indicator "k=v") or a missing one gives the row's own entries."""
    ad = RiverClassifier(PassiveAggressiveClassifier(), n_features=16)
    rows = [{"a": 1.0, "b": "red"}, {"a": 2.0, "b": 3.0}, {"a": None, "b": 1.5},
            {"a": 0.5, "b": 2.5}, {"a": 0.5, "b": "blue"}, {"a": 0.25, "b": 4}]  # fmt: skip
    for x in rows:
        data, idx = ad._rows.entries(x, True)
        got = np.zeros(16)
        got[idx] = data
        np.testing.assert_array_equal(got, ad._rows.matrix([x], False)[0])
