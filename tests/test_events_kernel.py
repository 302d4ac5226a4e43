"""One event at a time for the kernel online learners (``onlinelearn.kernel_methods._events``):
``learn_one`` / ``predict_one`` / ``predict_proba_one``, ``partial_fit`` on one row and the
River adapter's rows of KernelPerceptron, KernelPassiveAggressive and KernelCOPA.

The reference is the general path of ``partial_fit`` (``OnlineMixin.partial_fit``: validation,
transaction, ``_ensure_capacity``, the batch pass, the checks after it, the calibration scored by
``decision_function``), called on the same one-row batches (a 1-D row: the (1, d) array; a dict
or sparse row: its CSR row): the event road must leave every attribute bit for bit as it does,
the support set's storage and the calibration included, and a rejected event must leave the
model as it was."""

from __future__ import annotations

import pickle
import warnings

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

from onlinelearn import KernelCOPA, KernelPassiveAggressive, KernelPerceptron
from onlinelearn import kernels as Kn
from onlinelearn._core.kernel import gram as G
from onlinelearn._core.kernel import one_row
from onlinelearn._core.kernel import online as O
from onlinelearn.kernel_methods import _events
from onlinelearn.shell import validation as V

LEARNERS = {
    "Perceptron rbf budget": lambda: KernelPerceptron(budget=12),
    "Perceptron rbf": lambda: KernelPerceptron(),
    "Perceptron linear smallest": lambda: KernelPerceptron(
        "linear", budget=9, removal="smallest", average=False),
    "PA-I poly": lambda: KernelPassiveAggressive(Kn.Polynomial(degree=2), C=0.5),
    "PA-II laplacian budget": lambda: KernelPassiveAggressive(
        "laplacian", variant="PA-II", budget=10, fit_intercept=False),
    "PA cosine": lambda: KernelPassiveAggressive("cosine", variant="PA", average=False),
    "PA-I rbf + poly": lambda: KernelPassiveAggressive(
        Kn.RBF(gamma=0.2) + 0.5 * Kn.Polynomial(degree=2), budget=15),
    "COPA rbf budget": lambda: KernelCOPA(budget=10, intercept_scaling=0.5),
}  # fmt: skip


def _stream(n, d, K, seed, density=1.0):
    return stream(n, d, K, seed, density, scales=(0.3, 1.0, 2.0), noisy=True)


@pytest.fixture
def road(monkeypatch):
    """The rows that took the compiled event step."""
    return counting(monkeypatch, one_row, "learn_row")


def _score_bound(est, X):
    """How far the event road's scores may be from ``decision_function``'s: the same terms
    c_s (k_s + b^2) summed in another order, so at most (n_sv + 2) eps sum_s |c_s| (|k_s| + b^2)
    per column (the usual bound of a sum's rounding, doubled)."""
    n = est._n_sv
    coef = np.abs(est._coef_in_use())
    if n == 0:
        return np.zeros(coef.shape[1])
    Kx = np.abs(est._prog.block(est._rows(V.check_X(est, X, reset=False)), est._sv_rows()))
    return 2 * (n + 2) * np.finfo(float).eps * (Kx @ coef + est._b2 * coef.sum(axis=0))[0]


@pytest.mark.parametrize("name", list(LEARNERS))
@pytest.mark.parametrize("kind", ["dense", "dict", "csr"])
@pytest.mark.parametrize("K", [2, 4])
def test_learn_one_is_partial_fit_of_the_row_bit_for_bit(name, kind, K, road):
    X, y = _stream(130, 6, K, seed=K, density=0.6 if kind != "dense" else 1.0)
    rng = np.random.default_rng(0)
    a, b = LEARNERS[name](), LEARNERS[name]()
    a.partial_fit(X[:5], y[:5])
    _general(b, X[:5], y[:5])
    for i in range(5, len(y)):
        if i % 9 == 0:  # the read-outs agree with the batch read-outs before the update
            ref = _ref_batch(X, i, kind)
            assert a.predict_one(_row(X, i, kind)) == b.predict(ref)[0]
            p = a.predict_proba_one(_row(X, i, kind))
            q = b.predict_proba(ref)[0]
            assert list(p) == list(b.classes_)
            # a probability moves by at most max(slopes) / 2 times a score's rounding (the
            # derivative of the sigmoid is at most 1/4, of the softmax's terms 1/2), plus the
            # rounding of the map itself (exp, log: a few ulps)
            tol = float(np.max(b._proba_params())) * float(np.max(_score_bound(b, ref))) / 2
            np.testing.assert_allclose(list(p.values()), q, rtol=0, atol=tol + 8e-16)
        a.learn_one(_row(X, i, kind, rng), int(y[i]))
        _general(b, _ref_batch(X, i, kind), y[i : i + 1])
    _same(a, b)
    # every row of a label seen before, once two labels were seen, took the event road
    assert len(road) >= _known_label_rows(y, 5)


@pytest.mark.parametrize("name", ["Perceptron rbf budget", "PA-I poly", "COPA rbf budget"])
def test_partial_fit_of_one_row_takes_the_event_road_and_gives_the_same_model(name, road):
    X, y = _stream(120, 5, 3, seed=3)
    check_partial_fit_rows(LEARNERS[name], X, y)
    assert len(road) >= 2 * _known_label_rows(y, 10)


def test_the_calibration_is_scored_as_decision_function_scores_it():
    """The first REFIT rows are each scored by the model before them (then one in THIN): the
    window holds decision_function's values, bit for bit."""
    X, y = _stream(300, 4, 2, seed=12)
    a = KernelPerceptron(budget=30)
    a.partial_fit(X[:4], y[:4])
    expect = []
    for i in range(4, 300):
        if a.calibration_.wants(1, a.n_features_in_):
            expect.append(a.decision_function(X[i : i + 1])[0])
        a.learn_one(X[i], int(y[i]))
    S, codes, _ = a.calibration_.ordered()
    n = len(expect)
    np.testing.assert_array_equal(S[-n:, 0], expect)


def test_a_parameter_set_between_events_is_used_by_the_next_event():
    X, y = _stream(120, 4, 2, seed=5)
    a, b = KernelPassiveAggressive(budget=30), KernelPassiveAggressive(budget=30)
    a.partial_fit(X[:5], y[:5])
    _general(b, X[:5], y[:5])
    for i in range(5, 120):
        if i == 50:
            a.set_params(C=0.01)
            b.set_params(C=0.01)
        if i == 80:  # a lower budget: the general path removes vectors, then the road resumes
            a.set_params(budget=8, removal="smallest")
            b.set_params(budget=8, removal="smallest")
        a.learn_one(X[i], int(y[i]))
        _general(b, X[i : i + 1], y[i : i + 1])
    _same(a, b)
    assert a._n_sv <= 8 and _events.event(a).learns


def test_a_new_label_goes_through_partial_fit_and_the_road_resumes():
    X, y = _stream(150, 4, 3, seed=6)
    y = np.where(np.arange(150) < 80, np.minimum(y, 1), y)  # label 2 first at row >= 80
    a, b = KernelPerceptron(budget=20), KernelPerceptron(budget=20)
    a.partial_fit(X[:5], y[:5])
    _general(b, X[:5], y[:5])
    for i in range(5, 150):
        a.learn_one(X[i], int(y[i]))
        _general(b, X[i : i + 1], y[i : i + 1])
    _same(a, b)
    assert list(a.classes_) == [0, 1, 2] and _events.event(a).learns


def test_a_kernel_on_feature_subsets_and_class_weights_learn_through_partial_fit(road):
    X, y = _stream(60, 4, 2, seed=7)
    for make in (lambda: KernelPerceptron(Kn.on_features(Kn.RBF(0.5), [0, 2])),
                 lambda: KernelPerceptron(class_weight="balanced")):  # fmt: skip
        a, b = make(), make()
        a.partial_fit(X[:5], y[:5])
        b.partial_fit(X[:5], y[:5])
        for i in range(5, 60):
            a.learn_one(X[i], int(y[i]))
            b.partial_fit(X[i : i + 1], y[i : i + 1])
            assert a.predict_one(X[i]) == b.predict(X[i : i + 1])[0]
        _same(a, b)
    assert not road


def _fitted(make=KernelPerceptron, n=60):
    X, y = _stream(n, 6, 2, seed=8)
    est = make().partial_fit(X[:40], y[:40])
    for i in range(40, n):
        est.learn_one(X[i], int(y[i]))
    return est, X, y


MAKERS = [
    lambda: KernelPerceptron(budget=8),
    lambda: KernelPassiveAggressive("poly"),
    lambda: KernelCOPA(budget=8, removal="smallest"),
]


@pytest.mark.parametrize("make", MAKERS)
@pytest.mark.parametrize("bad", list(BAD_ROWS))
def test_a_rejected_event_raises_one_clear_error_and_changes_nothing(make, bad):
    check_rejected(lambda: _fitted(make), bad)


@pytest.mark.parametrize("budget", [None, 3])
def test_an_update_refused_after_the_step_puts_the_state_back(budget):
    """PA on a row of tiny values: k(x, x) is subnormal, the step 1 / k(x, x) overflows and the
    coefficients are not finite: found after the compiled step, which puts the copies back (the
    support vector it removed with a full budget included); the general path then raises its
    error.  Without a budget the row first needs room (``_ensure_capacity``): the arrays are put
    back too."""
    make = lambda: KernelPassiveAggressive(  # noqa: E731
        "linear", variant="PA", average=False, fit_intercept=False, budget=budget)
    est, X, y = _fitted(make)
    twin, _, _ = _fitted(make)
    refused = 0
    for lab in (0, 1):
        try:
            est.learn_one({0: 1e-160, 3: -1e-160}, lab)
        except FloatingPointError as e:
            refused += 1
            assert "left as it was" in str(e)
        else:
            twin.learn_one({0: 1e-160, 3: -1e-160}, lab)
        _same(est, twin)
    assert refused


def test_an_update_refused_after_making_room_puts_the_old_arrays_back(monkeypatch):
    """The row needs room (the slots are full): ``_ensure_capacity`` grows the arrays, then the
    step is refused: the estimator gets its arrays back, as the general path's snapshot does."""
    est = KernelPassiveAggressive("linear", variant="PA", average=False, fit_intercept=False)
    X, y = _stream(200, 6, 2, seed=8)
    est.partial_fit(X[:3], y[:3])
    i = 3
    while est._n_sv < est._coef.shape[0] or est._n_sv < 8:
        est.learn_one(X[i], int(y[i]))
        i += 1
    twin = pickle.loads(pickle.dumps(est))
    statuses = []
    real = _events._with_room

    def spy(*args):
        out = real(*args)
        statuses.append(out[1])
        return out

    monkeypatch.setattr(_events, "_with_room", spy)
    with pytest.raises(FloatingPointError, match="left as it was"):
        est.learn_one({0: 1e-160, 3: -1e-160}, int(1 - est.predict_one({0: 1e-160, 3: -1e-160})))
    assert statuses and statuses[0] == one_row.REFUSED
    _same(est, twin)
    for j in range(i, i + 20):
        est.learn_one(X[j], int(y[j]))
        twin.learn_one(X[j], int(y[j]))
    _same(est, twin)


def test_learn_row_leaves_the_state_bit_for_bit_when_it_refuses():
    """The compiled transaction itself, with a full budget (a vector removed, the last slot
    moved into its place, the new one written): a refused row restores every slot, the pool
    and the counters exactly."""
    make = lambda: KernelPassiveAggressive(  # noqa: E731
        "linear", variant="PA", average=False, fit_intercept=False, budget=4, removal="smallest")
    est, X, y = _fitted(make, n=80)
    ev = _events.event(est)
    assert est._n_sv == 4
    data = np.array([1e-160, -1e-160])
    idx = np.array([1, 4], dtype=np.int32)
    names = [n for n, _, _ in _events._ARRAYS]
    statuses = []
    for code in (0, 1):
        before = [getattr(est, n).copy() for n in names]
        ev.ib[one_row.I_SCORED] = 0
        statuses.append(one_row.learn_row(data, idx, code, ev.tab))
        if statuses[-1] == one_row.REFUSED:
            for n, b in zip(names, before, strict=True):
                assert np.array_equal(getattr(est, n), b, equal_nan=True), n
    assert one_row.REFUSED in statuses


@pytest.mark.parametrize(
    "kernel",
    ["linear", "rbf", "poly", "laplacian", "cosine", Kn.RBF(0.3) * Kn.Linear() + 1.0],
)
@pytest.mark.parametrize("dense", [False, True])
@pytest.mark.parametrize("d", [7, 150])
def test_the_row_values_are_the_kernel_programs(kernel, dense, d):
    """row_values (a kernel of one leaf: its leaf called directly; rbf and laplacian on a
    sparse row of few columns: summed over the columns) gives pair_value's values, bit for
    bit: the values the pass itself computes."""
    X, _ = _stream(40, d, 2, seed=9, density=0.5 if d < 100 else 0.05)
    prog = Kn._program.Program(Kn.as_kernel(kernel), d)
    rows = prog.rows(sp.csr_matrix(X))
    pool_d, pool_i, p = rows.data, rows.indices, rows.indptr
    x = prog.rows(X[:1] if dense else sp.csr_matrix(X[:1]))
    stack = np.zeros(prog.ops.shape[0] + 1)
    a0, a1 = G.row_bounds(x.indptr, 0, x.n_cols, x.dense)
    n = rows.n_rows
    out = np.zeros(n + 1)
    work = np.zeros(2 * d)
    O.row_values(prog.ops, prog.par, prog.ranges, x.data, x.indices, a0, a1, x.dense,
                 x.norms[0], pool_d, pool_i, p[:-1].copy(), p[1:].copy(), rows.norms, n,
                 stack, work, out)  # fmt: skip
    assert not work.any()
    for s in range(n):
        v = G.pair_value(prog.ops, prog.par, prog.ranges, x.data, x.indices, a0, a1, x.dense,
                         x.norms[0], pool_d, pool_i, p[s], p[s + 1], False, rows.norms[s],
                         stack)  # fmt: skip
        assert out[s] == v
    assert out[n] == G.pair_value(prog.ops, prog.par, prog.ranges, x.data, x.indices, a0, a1,
                                  x.dense, x.norms[0], x.data, x.indices, a0, a1, x.dense,
                                  x.norms[0], stack)  # fmt: skip


def test_named_features_map_through_the_model_vocabulary():
    """A dict row of a model fitted with feature names is the CSR row of its entries (a kernel
    value of a sparse row and of the dense row of the same values may differ in the last bit:
    the reference is partial_fit of the CSR row)."""

    def learn(ref, frame, X, i, y):
        with warnings.catch_warnings():  # (a CSR row has no feature names)
            warnings.simplefilter("ignore", UserWarning)
            _general(ref, sp.csr_matrix(X[i : i + 1]), y[i : i + 1])

    check_named_features(lambda: KernelPassiveAggressive(budget=20), learn)


def test_before_any_learning_river_conventions():
    est = check_river_conventions(KernelPassiveAggressive, extra=[np.array([0.0, 2.0])])
    assert est.predict_one({}) in ("ham", "spam")  # an empty row: every feature 0


def test_copies_and_pickles_build_their_own_event_state():
    """The kept event state holds addresses of this estimator's arrays: a copy or a pickle
    never carries it, and each copy learns on its own arrays."""
    import copy

    est, X, y = _fitted()
    assert "_event" in est.__dict__
    assert copy.copy(est).__dict__.get("_event") is None
    for other in (pickle.loads(pickle.dumps(est)), copy.deepcopy(est)):
        assert other.__dict__.get("_event") is None
        twin = pickle.loads(pickle.dumps(est))
        for i in range(10):
            other.learn_one(X[i], int(y[i]))
            _general(twin, X[i : i + 1], y[i : i + 1])
        _same(other, twin)
    est2, _, _ = _fitted()
    _same(est, est2)  # the copies' events left the original alone


def test_river_adapter_takes_the_kernel_road(monkeypatch):
    """RiverClassifier(KernelPerceptron(budget=...)): the rows' entries go to the kernel road,
    the model is bit for bit partial_fit of the CSR rows of those entries."""
    datasets = pytest.importorskip("river.datasets")
    from onlinelearn.river import RiverClassifier

    calls = []
    real = _events.learn_entries

    def counting(est, data, idx, y):
        took = real(est, data, idx, y)
        calls.append(took)
        return took

    monkeypatch.setattr(_events, "learn_entries", counting)
    rows = list(datasets.Phishing())[:300]
    ad = RiverClassifier(KernelPerceptron(budget=25), n_features=9)
    ref = KernelPerceptron(budget=25)
    names = []
    for i, (x, y) in enumerate(rows):
        names += [k for k in x if k not in names]
        idx = np.array([names.index(k) for k in x], dtype=np.int32)
        X = sp.csr_matrix((np.array([float(v) for v in x.values()]), idx, [0, len(idx)]),
                          shape=(1, 9))  # fmt: skip
        if i > 0:
            assert ad.predict_one(x) == ref.predict(X)[0]
            p = ad.predict_proba_one(x)
            np.testing.assert_allclose(list(p.values()), ref.predict_proba(X)[0], atol=1e-12)
        ad.learn_one(x, y)
        if i == 0:
            ref.partial_fit(X, np.array([y]))
        else:
            _general(ref, X, np.array([y]))
    _same(ad.estimator, ref)
    assert sum(calls) >= len(rows) - 5


def test_the_table_takes_only_arrays_it_can_point_into():
    """The event's table of addresses (onlinelearn._core.table) refuses a read-only or a
    non-contiguous array (the road then is the general path), and its views write into the
    arrays themselves."""
    from onlinelearn._core import table as Tb
    from onlinelearn._core.config import njit
    from onlinelearn._core.table import F1, I2, array_of

    a, b = np.zeros(4), np.zeros((3, 2), dtype=np.int64)
    ro = np.zeros(3)
    ro.flags.writeable = False
    for bad in (ro, np.zeros((4, 4))[:, 1], np.zeros((3, 2)).T):
        with pytest.raises(ValueError, match="writeable C-contiguous"):
            Tb.table([a, bad])

    @njit
    def write(tab):
        array_of(tab, 0, F1)[2] = 7.0
        array_of(tab, 1, I2)[1, 1] = 5

    tab = Tb.table([a, b])
    write(tab)
    assert a[2] == 7.0 and b[1, 1] == 5 and tab[1].tolist()[1:] == [3, 2]
