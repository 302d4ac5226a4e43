"""LabelRanker is a preset: its parameters give a configuration (link, RankingHinge, step) of
:mod:`onlinelearn.framework`, and the label-ranking family run from the same objects built by
hand learns the same model, bit for bit; configurations the family cannot run are refused."""

from __future__ import annotations

import ast
import inspect
import math

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin

from onlinelearn import LabelRanker
from onlinelearn._core import ranking as RK
from onlinelearn.datasets import load_dna
from onlinelearn.framework import (
    Aggressive,
    Conservative,
    Entropy,
    Euclidean,
    Hinge,
    LastK,
    PNorm,
    RankingHinge,
    RoundOptimal,
    SquaredHinge,
)
from onlinelearn.ranking import family as F
from onlinelearn.ranking.family import (
    LabelRankingFamily,
    check_ranking_configuration,
    check_ranking_projection,
)

RANKING_ENTROPY = Entropy(eta=1.0, balanced=False)
LINKS = {"euclidean": Euclidean(), "entropy": RANKING_ENTROPY}
STEPS = {
    "I": lambda C: Conservative(eta=C),
    "II": lambda C: Aggressive(C=C, variant="PA-I"),
    "III": lambda C: RoundOptimal(C=C),
}
#: (update, complexity, constraint): the 6 algorithms of Table 8.1 and the projected updates
CASES = [(u, c, None) for c in ("euclidean", "entropy") for u in ("I", "II", "III")] + [
    ("II", "euclidean", "l1"),
    ("III", "entropy", "floor"),
]


class HandBuilt(LabelRankingFamily, ClassifierMixin, BaseEstimator):
    """The label-ranking family driven by objects given by hand (and a projection)."""

    def __init__(self, link=None, loss=None, step=None, projection=None, *, fit_intercept=True,
                 intercept_scaling=1.0, n_epochs=5, shuffle=True, random_state=None):  # fmt: skip
        self.link = link
        self.loss = loss
        self.step = step
        self.projection = projection
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.n_epochs = n_epochs
        self.shuffle = shuffle
        self.random_state = random_state

    def _configuration(self):
        return self.link, self.loss, self.step

    def _check_params(self):
        check_ranking_configuration(*self._configuration())

    def _projection(self):
        if self.projection is None:
            return super()._projection()
        return self.projection


def multilabel(n=240, d=15, K=5, seed=0):
    """Non-negative features (the entropy link's scale) and 1-3 relevant labels a row, some rows
    with none (no pair: no update)."""
    rng = np.random.default_rng(seed)
    X = np.abs(rng.normal(size=(n, d))) * (rng.random((n, d)) < 0.4)
    S = X @ rng.normal(size=(d, K))
    rank = np.argsort(np.argsort(-S, axis=1), axis=1)
    Y = (rank < 1 + np.arange(n)[:, None] % 3).astype(int)  # the 1, 2 or 3 top-scoring labels
    Y[::19] = 0
    return X, Y


def hand_built_twin(est):
    """A :class:`HandBuilt` with the objects ``LabelRanker`` ``est`` stands for (written here
    from the table of the docstring, not read from ``est._configuration()``)."""
    projection = {
        None: None,
        "l1": (RK.L1_BALL, float(est.radius)),
        "floor": (RK.FLOOR, float(est.floor)),
    }[est.constraint]
    # C='auto': 0.01 with the squared norm, 0.003 with the entropy (the docstring's values)
    C = {"euclidean": 0.01, "entropy": 0.003}[est.complexity] if est.C == "auto" else est.C
    return HandBuilt(
        LINKS[est.complexity], RankingHinge(est.margin), STEPS[est.update](C), projection,
        fit_intercept=est.fit_intercept, intercept_scaling=est.intercept_scaling,
        n_epochs=est.n_epochs, shuffle=est.shuffle, random_state=est.random_state,
    )  # fmt: skip


def _same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b, equal_nan=True)


def assert_same_model(a, b):
    for name in ("coef_", "intercept_", "_theta", "_lZ", "_st", "classes_"):
        assert _same(getattr(a, name), getattr(b, name)), name
    da, db = a.dual_objective_, b.dual_objective_
    assert da == db or (math.isnan(da) and math.isnan(db))
    assert a.n_mistakes_ == b.n_mistakes_ and a.ip_iterations_max_ == b.ip_iterations_max_


# ------------------------------------------------------------------ the preset's configuration
@pytest.mark.parametrize(("update", "complexity", "constraint"), CASES)
def test_the_parameters_give_the_configuration(update, complexity, constraint):
    est = LabelRanker(update=update, complexity=complexity, C=0.3, margin=0.7,
                      constraint=constraint, radius=2.5, floor=0.01)  # fmt: skip
    link, loss, step = est._configuration()
    assert link == LINKS[complexity] and type(link) is type(LINKS[complexity])
    assert loss == RankingHinge(margin=0.7)
    assert step == STEPS[update](0.3) and type(step) is type(STEPS[update](0.3))
    expect = {None: RK.NO_CONSTRAINT, "l1": RK.L1_BALL, "floor": RK.FLOOR}[constraint]
    value = {None: 0.0, "l1": 2.5, "floor": 0.01}[constraint]
    assert est._projection() == (expect, value)
    check_ranking_configuration(link, loss, step)  # the preset's configurations are valid
    codes = F.ranking_pass_codes(link, loss, step)
    assert codes.complexity == (RK.EUCLID if complexity == "euclidean" else RK.ENTROPY)
    assert codes.update == {"I": RK.UPD_I, "II": RK.UPD_II, "III": RK.UPD_III}[update]
    assert (codes.C, codes.margin) == (0.3, 0.7)


def test_the_default_preset_and_the_entropy_link():
    link, loss, step = LabelRanker()._configuration()
    assert (link, loss, step) == (Euclidean(), RankingHinge(1.0), RoundOptimal(C=0.01))
    entropy = LabelRanker(complexity="entropy")._configuration()[0]
    assert (entropy.eta, entropy.balanced, entropy.self_tuned) == (1.0, False, False)


def test_a_bad_parameter_is_reported_by_its_own_check():
    with pytest.raises(ValueError, match="'update' parameter"):
        LabelRanker(update="IV")._configuration()
    with pytest.raises(ValueError, match="'C' parameter"):
        LabelRanker(C=-1.0).fit(*multilabel(n=20))


# ------------------------------------------------------------------ the family from objects
@pytest.mark.parametrize("fmt", ["dense", "csr"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(("update", "complexity", "constraint"), CASES)
def test_hand_built_configuration_learns_the_preset_bit_for_bit(update, complexity, constraint,
                                                                fmt, dtype):  # fmt: skip
    X, Y = multilabel()
    X = X.astype(dtype)
    if fmt == "csr":
        X = sp.csr_matrix(X)
    preset = LabelRanker(update=update, complexity=complexity, C=0.3, margin=0.8,
                         constraint=constraint, radius=3.0, floor=0.01)  # fmt: skip
    twin = hand_built_twin(preset)
    for lo, hi in ((0, 100), (100, 240)):  # progressive validation, two calls
        assert _same(preset.partial_fit_mistakes(X[lo:hi], Y[lo:hi]),
                     twin.partial_fit_mistakes(X[lo:hi], Y[lo:hi]))  # fmt: skip
    assert_same_model(preset, twin)
    assert _same(preset.decision_function(X), twin.decision_function(X))
    assert _same(preset.predict(X), twin.predict(X))
    # fit: shuffled epochs under the same seed
    preset.set_params(n_epochs=2, random_state=3)
    twin = hand_built_twin(preset)
    assert_same_model(preset.fit(X, Y), twin.fit(X, Y))


@pytest.mark.parametrize(("update", "complexity"), [("I", "entropy"), ("III", "euclidean")])
def test_hand_built_configuration_on_the_dna_data(update, complexity):
    X, y = load_dna("train")
    X, y = X[:400], y[:400]
    preset = LabelRanker(update=update, complexity=complexity, fit_intercept=False)
    twin = hand_built_twin(preset)
    assert _same(preset.partial_fit_mistakes(X, y), twin.partial_fit_mistakes(X, y))
    assert_same_model(preset, twin)
    assert _same(preset.predict(X), twin.predict(X))


# ------------------------------------------------------------------ what the family refuses
@pytest.mark.parametrize(
    ("link", "loss", "step", "match"),
    [
        (Euclidean(), Hinge(), RoundOptimal(), "not a ranking loss"),
        (Euclidean(), SquaredHinge(), Conservative(), "not a ranking loss"),
        (PNorm(), RankingHinge(), RoundOptimal(), r"link PNorm\(p=None\) has no label-ranking"),
        (PNorm(p=2.0), RankingHinge(), RoundOptimal(), "has no label-ranking pass"),
        (Euclidean(), RankingHinge(), Aggressive(C=1.0, variant="PA-II"), "'PA-II'"),
        (Euclidean(), RankingHinge(), Aggressive(C=1.0, variant="PA"), "'PA'"),
        (Euclidean(), RankingHinge(), LastK(k=2), r"step LastK\(.*\) has no label-ranking"),
        (Entropy(), RankingHinge(), RoundOptimal(), r"Entropy\(balanced=True\)"),
        (Entropy(eta=1.0, balanced=True), RankingHinge(), RoundOptimal(), "both signs"),
        (Entropy(eta=0.5, balanced=False), RankingHinge(), RoundOptimal(), "no learning rate"),
        (Entropy(eta=1.0, balanced=False, self_tuned=True), RankingHinge(), Conservative(),
         "self_tuned"),
        (Euclidean(), RankingHinge(margin=0.0), RoundOptimal(), "margin must be a number > 0"),
        (Euclidean(), RankingHinge(margin=float("nan")), RoundOptimal(), "margin"),
    ],
)  # fmt: skip
def test_configurations_the_family_cannot_run_are_refused(link, loss, step, match):
    with pytest.raises(ValueError, match=match):
        check_ranking_configuration(link, loss, step)
    X, Y = multilabel(n=30)
    est = HandBuilt(link, loss, step)
    with pytest.raises(ValueError, match=match):
        est.fit(X, Y)
    assert not hasattr(est, "classes_")


def test_a_refused_configuration_leaves_the_model_as_it_was():
    X, Y = multilabel(n=60)
    est = HandBuilt(Euclidean(), RankingHinge(), RoundOptimal(C=0.5)).partial_fit(X, Y)
    before = (est._theta.copy(), est._lZ.copy(), est._st.copy())
    est.step = Aggressive(C=0.5, variant="PA-II")
    with pytest.raises(ValueError, match="PA-II"):
        est.partial_fit(X, Y)
    assert all(_same(a, b) for a, b in zip(before, (est._theta, est._lZ, est._st), strict=True))


def test_projections_the_link_cannot_take_are_refused():
    with pytest.raises(ValueError, match="euclidean"):
        check_ranking_projection(RANKING_ENTROPY, RK.L1_BALL, 1.0, 10)
    with pytest.raises(ValueError, match="entropy"):
        check_ranking_projection(Euclidean(), RK.FLOOR, 0.01, 10)
    with pytest.raises(ValueError, match="too large"):
        check_ranking_projection(RANKING_ENTROPY, RK.FLOOR, 0.2, 10)
    with pytest.raises(ValueError, match="unknown projection"):
        check_ranking_projection(Euclidean(), 7, 1.0, 10)
    with pytest.raises(ValueError, match="> 0"):
        check_ranking_projection(Euclidean(), RK.L1_BALL, 0.0, 10)
    check_ranking_projection(PNorm(), RK.NO_CONSTRAINT, 0.0, 10)  # no projection: no rule
    X, Y = multilabel(n=30)
    with pytest.raises(ValueError, match="too large"):
        HandBuilt(RANKING_ENTROPY, RankingHinge(), RoundOptimal(), (RK.FLOOR, 0.5)).fit(X, Y)


# ------------------------------------------------------------------ the family's contract
def test_the_family_reads_the_learner_only_through_its_hooks():
    """No method of the family reads LabelRanker's own parameters (they reach it as objects
    and a projection), and it defines neither hook a combined base class may provide."""
    own = {"update", "complexity", "C", "margin", "constraint", "radius", "floor"}
    tree = ast.parse(inspect.getsource(F))
    read = {
        node.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id in ("self", "est")
    }
    assert not read & own, read & own
    assert "_configuration" not in vars(LabelRankingFamily)
    assert "_check_params" not in vars(LabelRankingFamily)
    assert LabelRankingFamily._projection(None) == (RK.NO_CONSTRAINT, 0.0)
    assert "_validate_params" not in read
