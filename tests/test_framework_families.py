"""OnlineLearner over the dual ascent and label-ranking families: DualAscentClassifier and
LabelRanker are presets of their objects.

The steps that keep past rounds' dual variables (LastK, RowAction, FTRL, SelfTuned,
StronglyConvex) route OnlineLearner to the dual ascent family; DualAscentClassifier's
parameters build the same (link, Hinge(margin), step).  The two must agree bit for bit.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.utils.estimator_checks import parametrize_with_checks

from onlinelearn import DualAscentClassifier, LabelRanker, OnlineLearner
from onlinelearn.datasets import load_dna
from onlinelearn.framework import (
    FTRL,
    Aggressive,
    Entropy,
    Euclidean,
    Hinge,
    LastK,
    Logistic,
    PNorm,
    RankingHinge,
    RoundOptimal,
    RowAction,
    SelfTuned,
    StronglyConvex,
)
from onlinelearn.model_io import load_model, save_model

PRESETS = [
    dict(step="last-k", k=1, C=0.05),
    dict(step="last-k", k=2, C=0.01, variant="PA-II"),
    dict(step="last-k", k=4, C=0.02, tol=1e-6),
    dict(step="row-action", k=3, C=0.1),
    dict(step="row-action", k=2, C=0.1, link="entropy"),
    dict(step="row-action", k=2, C=0.1, link="pnorm", p=3.0),
    dict(step="ftrl", C=0.02, max_sweeps=20),
    dict(step="self-tuned", link="euclidean", k=2, U=0.5),
    dict(step="self-tuned", link="entropy", update="subgradient"),
    dict(step="strongly-convex", link="pnorm", sigma=0.1),
    dict(step="strongly-convex", link="entropy", sigma=0.2, k=3, margin=0.5),
]


def _dna(K):
    X, y = load_dna("train")
    keep = np.isin(y, np.unique(y)[:K])
    return X[keep][:240], y[keep][:240]


def _twin(preset):
    """OnlineLearner with the preset's configuration and common parameters."""
    link, loss, step = preset._configuration()
    return OnlineLearner(
        link=link, loss=loss, step=step, average=False, tol=None, n_epochs=preset.n_epochs,
        shuffle=preset.shuffle, random_state=preset.random_state,
        fit_intercept=preset.fit_intercept, intercept_scaling=preset.intercept_scaling,
    )  # fmt: skip


def test_preset_configurations():
    link, loss, step = DualAscentClassifier(step="last-k", k=3, C=0.5, margin=2.0)._configuration()
    assert (link, loss, step) == (Euclidean(), Hinge(2.0), LastK(3, 0.5, "PA-I", 1e-7, 200))
    cfg = DualAscentClassifier(step="row-action", link="pnorm", p=3.0, k=2)._configuration()
    assert cfg == (PNorm(3.0), Hinge(1.0), RowAction(2, 1.0, "PA-I"))
    cfg = DualAscentClassifier(step="ftrl", C=2.0)._configuration()
    assert cfg[2] == FTRL(2.0, "PA-I", 1e-7, 200)
    cfg = DualAscentClassifier(step="self-tuned", link="entropy", U=3.0)._configuration()
    assert cfg[0] == Entropy() and cfg[2] == SelfTuned(3.0, "optimal", 1)
    cfg = DualAscentClassifier(step="strongly-convex", sigma=0.3, update="subgradient")
    assert cfg._configuration()[2] == StronglyConvex(0.3, "subgradient", 1)


@pytest.mark.parametrize("params", PRESETS, ids=lambda p: "-".join(map(str, p.values())))
@pytest.mark.parametrize("K", [2, 3])
@pytest.mark.parametrize("layout", ["dense64", "csr32"])
def test_preset_is_the_configuration_bit_for_bit(params, K, layout):
    X, y = _dna(K)
    if layout == "csr32":
        X = sp.csr_matrix(X.astype(np.float32))
    preset = DualAscentClassifier(**params, random_state=3)
    twin = _twin(preset)
    np.testing.assert_array_equal(
        preset.partial_fit_predict(X[:120], y[:120]), twin.partial_fit_predict(X[:120], y[:120])
    )
    preset.partial_fit(X[120:], y[120:])
    twin.partial_fit(X[120:], y[120:])
    for fitted in (False, True):
        if fitted:
            preset.fit(X, y)
            twin.fit(X, y)
        np.testing.assert_array_equal(preset.coef_, twin.coef_)
        np.testing.assert_array_equal(preset.intercept_, twin.intercept_)
        np.testing.assert_array_equal(preset.dual_coef_, twin.dual_coef_)
        np.testing.assert_array_equal(preset.decision_function(X), twin.decision_function(X))
        assert preset.dual_objective_ == twin.dual_objective_
        assert (preset.t_, preset.n_mistakes_, preset.n_updates_, preset.n_unconverged_) == (
            twin.t_, twin.n_mistakes_, twin.n_updates_, twin.n_unconverged_)  # fmt: skip
    assert twin.n_iter_ == twin.n_epochs


def test_model_file_round_trip_and_keeps_learning(tmp_path):
    X, y = _dna(3)
    clf = OnlineLearner(step=RowAction(k=2, C=0.1), link=PNorm(3.0), average=False, tol=None)
    clf.partial_fit(X[:100], y[:100])
    save_model(clf, tmp_path / "m.npz")
    back = load_model(tmp_path / "m.npz")
    assert type(back) is OnlineLearner and back.step == clf.step and back.link == clf.link
    np.testing.assert_array_equal(back.decision_function(X), clf.decision_function(X))
    back.partial_fit(X[100:], y[100:])
    clf.partial_fit(X[100:], y[100:])
    np.testing.assert_array_equal(back.coef_, clf.coef_)
    assert back.dual_objective_ == clf.dual_objective_


def test_linear_and_dual_ascent_attributes_stay_apart():
    X, y = _dna(2)
    lin = OnlineLearner(random_state=0).fit(X, y)
    # the linear pass keeps its own dual (docs/bounds.md), not the dual ascent family's state
    assert np.isfinite(lin.dual_objective_) and not hasattr(lin, "dual_coef_")
    da = clone(lin).set_params(step=LastK(k=2, C=0.01), average=False, tol=None).fit(X, y)
    assert da.dual_objective_ > 0 and not hasattr(da, "_theta")
    # the fitted family changes with the step only through fit
    da.set_params(step=Aggressive(C=0.01), average=True, tol=1e-3)
    lin2 = da.fit(X, y)
    np.testing.assert_array_equal(lin2.coef_, clone(lin).set_params(step=Aggressive(C=0.01))
                                  .fit(X, y).coef_)  # fmt: skip
    with pytest.raises(ValueError, match="predict_with"):
        OnlineLearner(step=LastK(), average=False, tol=None).partial_fit_predict(
            X, y, predict_with="average"
        )


@pytest.mark.parametrize(
    "kwargs,match",
    [
        (dict(step=LastK(k=2)), "average=True .use False.*tol=0.001 .use None"),
        (dict(step=LastK(), loss=Logistic(), average=False, tol=None), "hinge loss"),
        (dict(step=FTRL(), link=Entropy(), average=False, tol=None), "link='euclidean'"),
        (dict(step=RowAction(variant="PA-II"), link=PNorm(), average=False, tol=None), "PA-I"),
        (dict(step=SelfTuned(), link=Entropy(eta=0.5), average=False, tol=None), "defaults"),
        (dict(step=SelfTuned(k=2, update="subgradient"), average=False, tol=None), "one fixed"),
        (dict(step=LastK(k=2, variant="PA"), average=False, tol=None), "single dual"),
        (dict(step=LastK(), average=False, tol=None, class_weight="confusion"), "class_weight"),
        (dict(step=LastK(), average=False, tol=None, dtype="float32"), "dtype"),
    ],
)
def test_what_the_family_cannot_honour_is_refused(kwargs, match):
    X, y = _dna(2)
    clf = OnlineLearner(**kwargs)
    with pytest.raises(ValueError, match=match):
        clf.fit(X, y)
    assert not hasattr(clf, "classes_")


def test_class_weight_multiplies_the_cap_as_sample_weight():
    X, y = _dna(3)
    cw = {y[0]: 3.0, y[1]: 0.5}
    a = OnlineLearner(step=LastK(k=2, C=0.01), average=False, tol=None, class_weight=cw)
    b = OnlineLearner(step=LastK(k=2, C=0.01), average=False, tol=None)
    sw = np.array([cw.get(v, 1.0) for v in y])
    np.testing.assert_array_equal(a.partial_fit_predict(X, y),
                                  b.partial_fit_predict(X, y, sample_weight=sw))  # fmt: skip
    np.testing.assert_array_equal(a.coef_, b.coef_)
    counts = np.bincount(np.searchsorted(a.classes_, y))
    np.testing.assert_array_equal(a.class_counts_, counts)


@pytest.mark.parametrize("bad", [dict(k=0), dict(C=-1.0), dict(variant="PA-III"), dict(tol=0.0)])
def test_step_objects_check_their_fields(bad):
    with pytest.raises(ValueError):
        LastK(**bad)


@parametrize_with_checks(
    [
        OnlineLearner(step=LastK(k=2), average=False, tol=None, random_state=0),
        OnlineLearner(step=SelfTuned(k=2), link=PNorm(), average=False, tol=None, random_state=0),
    ],
    expected_failed_checks=lambda est: {
        "check_sample_weight_equivalence_on_dense_data": (
            "sample_weight multiplies C (the cap of alpha): two rounds on a repeated row are "
            "not one round at twice the price"
        ),
        "check_sample_weight_equivalence_on_sparse_data": "as on dense data",
    },
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


# ---------------------------------------------------------------- the label-ranking family
RANKERS = [
    dict(update="III"),
    dict(update="III", complexity="entropy", C=0.5),
    dict(update="II", C=0.1, margin=0.5),
    dict(update="I", complexity="entropy"),
]


def _multilabel(n=240, K=5, seed=0):
    X, _ = load_dna("train")
    rng = np.random.default_rng(seed)
    return X[:n], (rng.random((n, K)) < 0.3).astype(np.int8)


@pytest.mark.parametrize("params", RANKERS, ids=lambda p: "-".join(map(str, p.values())))
@pytest.mark.parametrize("layout", ["csr64", "dense32"])
def test_label_ranker_is_the_configuration_bit_for_bit(params, layout, tmp_path):
    X, Y = _multilabel()
    if layout == "dense32":
        X = X.toarray().astype(np.float32)
    preset = LabelRanker(**params, random_state=1)
    twin = _twin(preset)
    np.testing.assert_array_equal(
        preset.partial_fit_mistakes(X[:120], Y[:120]), twin.partial_fit_mistakes(X[:120], Y[:120])
    )
    preset.fit(X, Y)
    twin.fit(X, Y)
    np.testing.assert_array_equal(preset.coef_, twin.coef_)
    np.testing.assert_array_equal(preset.predict(X), twin.predict(X))
    assert preset.dual_objective_ == twin.dual_objective_
    save_model(twin, tmp_path / "m.npz")
    back = load_model(tmp_path / "m.npz")
    assert type(back) is OnlineLearner and back.loss == twin.loss
    np.testing.assert_array_equal(back.decision_function(X), twin.decision_function(X))


def test_ranking_family_refuses_what_it_cannot_honour():
    X, Y = _multilabel()
    ranking = dict(loss=RankingHinge(), step=RoundOptimal(0.1))
    for extra, match in [
        (dict(), "average=True .use False"),
        (dict(average=False, tol=None, class_weight="balanced"), "class_weight"),
        (dict(average=False, tol=None, intercept_scaling="auto"), "intercept_scaling"),
        (dict(average=False, tol=None, link=PNorm()), "PNorm"),
        (dict(average=False, tol=None, step=Aggressive(variant="PA-II")), "PA-II"),
    ]:
        clf = OnlineLearner(**{**ranking, **extra})
        with pytest.raises(ValueError, match=match):
            clf.fit(X, Y)
        assert not hasattr(clf, "classes_")
    clf = OnlineLearner(**ranking, average=False, tol=None).fit(X, Y)
    assert not hasattr(clf, "partial_fit_predict")  # rankings, not labels: partial_fit_mistakes
    assert hasattr(OnlineLearner(), "partial_fit_predict")
