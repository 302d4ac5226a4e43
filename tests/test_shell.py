"""One shell under every online family: fit / partial_fit / partial_fit_predict are the
shell's own functions, input is validated through one module, and what a family does not take
is refused without changing the model."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

import onlinelearn
from onlinelearn.shell.online import OnlineMixin, ProgressiveMixin

ONLINE = [
    name for name in onlinelearn.__all__
    if isinstance(getattr(onlinelearn, name), type) and hasattr(getattr(onlinelearn, name),
                                                                "partial_fit")
]  # fmt: skip


def test_the_online_estimators_are_those_of_every_family():
    assert set(ONLINE) >= {
        "Perceptron", "PassiveAggressiveClassifier", "Winnow", "PNormPerceptron", "COPA",
        "OnlineLearner", "OnlineRegressor", "DualAscentClassifier", "KernelPerceptron",
        "KernelPassiveAggressive", "KernelCOPA", "WeightedMinMax", "AROW", "SCW", "LabelRanker",
        "ClassDependentPA", "PassiveAggressiveRegressor", "OnlineLeastSquares", "Pegasos",
    }  # fmt: skip


@pytest.mark.parametrize("name", ONLINE)
def test_partial_fit_is_the_shells(name):
    cls = getattr(onlinelearn, name)
    assert cls.partial_fit is OnlineMixin.partial_fit
    if hasattr(cls, "partial_fit_predict"):
        assert cls.partial_fit_predict is ProgressiveMixin.partial_fit_predict
    if not issubclass(cls, onlinelearn.second_order._base.SecondOrderClassifier):
        assert cls.fit is OnlineMixin.fit
    else:  # the same call without sample_weight in the signature (the family has none)
        assert "sample_weight" not in cls.fit.__code__.co_varnames


@pytest.mark.parametrize("name", ONLINE)
def test_every_online_family_runs_the_one_transaction(name):
    """One transaction for every family (issue 31): a family supplies hooks, not a ``_learn``."""
    cls = getattr(onlinelearn, name)
    assert cls._learn is OnlineMixin._learn
    for hook in ("_snapshot", "_restore", "_begin", "_epoch", "_finish"):
        assert callable(getattr(cls, hook)), hook


def _ours(cls):
    return [k.__name__ for k in cls.__mro__ if k.__module__.startswith("onlinelearn")]


@pytest.mark.parametrize(
    "name", [n for n in onlinelearn.__all__ if isinstance(getattr(onlinelearn, n), type)]
)
def test_an_estimator_has_at_most_five_classes_of_ours_in_its_mro(name):
    """One base per kind (the mixins' methods are taken as its own, shell.meta.with_methods)."""
    assert len(_ours(getattr(onlinelearn, name))) <= 5, _ours(getattr(onlinelearn, name))


def test_with_methods_takes_what_the_class_lacks_and_refuses_super():
    from onlinelearn.shell.meta import with_methods

    class Holder:
        def a(self):
            return "holder"

        def b(self):
            return "holder"

    @with_methods(Holder)
    class Taker:
        def b(self):
            return "own"

    assert Taker().a() == "holder" and Taker().b() == "own" and Holder not in Taker.__mro__

    class Cooperative:
        def c(self):
            return super().c()

    with pytest.raises(TypeError, match="super"):
        with_methods(Cooperative)(type("T", (), {}))


SRC = Path(onlinelearn.__file__).resolve().parent
#: modules that call scikit-learn's input checks themselves, and why
ALLOWED = {
    "shell/validation.py": "the one module the estimators validate through",
    "kernels/_input.py": "the input of a kernel called as a function k(X, Y), not an estimator",
    "evaluation.py": "the arrays handed to the evaluation functions, before any estimator",
}


def test_estimators_validate_input_through_one_module():
    users = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        if rel in ALLOWED:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("sklearn"):
                bad = {a.name for a in node.names} & {"check_array", "check_X_y", "validate_data"}
                users += [f"{rel}: {b}" for b in bad]
    assert not users, users


def test_a_regressor_refuses_classes_and_changes_nothing():
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(50, 4)), rng.normal(size=50)
    reg = onlinelearn.PassiveAggressiveRegressor().fit(X, y)
    before = reg.coef_.copy()
    with pytest.raises(ValueError, match="regressor"):
        reg.partial_fit(X, y, classes=[0, 1])
    np.testing.assert_array_equal(reg.coef_, before)


def test_second_order_refuses_sample_weight_and_changes_nothing():
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(60, 4)), rng.integers(0, 3, 60)
    clf = onlinelearn.AROW().fit(X, y)
    before = clf.decision_function(X)
    with pytest.raises(ValueError, match="sample_weight"):
        clf.partial_fit(X, y, sample_weight=np.ones(60))
    np.testing.assert_array_equal(clf.decision_function(X), before)
