"""Every public estimator's constructor, as it was before the parameters were declared once
(``onlinelearn.shell.params``): the names, order, kinds and defaults of its signature, and the
scikit-learn constraints of each parameter, recorded from the hand-written ``__init__`` methods
and ``_parameter_constraints`` dicts they replaced."""

from __future__ import annotations

import importlib
import inspect
import json
from pathlib import Path

import pytest
from sklearn.base import clone
from sklearn.utils._param_validation import HasMethods, Interval, Options

#: ``str(inspect.signature(cls))``, recorded before the change
SIGNATURES = {
    "onlinelearn.OnlineLearner": (
        "(link='euclidean', loss='hinge', step='aggressive', *, n_epochs=100, tol=0.001, "
        "n_iter_no_change=5, shuffle=True, average=True, average_power=0.0, random_state=None, "
        "fit_intercept=True, intercept_scaling=1.0, class_weight=None, dtype=None)"
    ),
    "onlinelearn.OnlineRegressor": (
        "(link='euclidean', loss='squared', step='aggressive', *, average=False, n_epochs=5, "
        "shuffle=True, random_state=None, fit_intercept=True, intercept_scaling=1.0)"
    ),
    "onlinelearn.Perceptron": (
        "(*, n_epochs=100, tol=0.001, n_iter_no_change=5, shuffle=True, average=True, "
        "average_power=2.0, random_state=None, fit_intercept=True, intercept_scaling='fit', "
        "class_weight=None, dtype=None, constraint=None, radius=1.0)"
    ),
    "onlinelearn.PassiveAggressiveClassifier": (
        "(*, variant='PA-I', C=1.0, margin=1.0, n_epochs=100, tol=0.001, n_iter_no_change=5, "
        "shuffle=True, average=True, average_power=2.0, random_state=None, fit_intercept=True, "
        "intercept_scaling='auto', class_weight=None, dtype=None, constraint=None, radius=1.0)"
    ),
    "onlinelearn.Winnow": (
        "(*, eta=0.1, balanced=True, self_tuned=False, n_epochs=5, shuffle=True, average=False,"
        " random_state=None, fit_intercept=True, intercept_scaling=1.0, class_weight=None, "
        "step='conservative', C=1.0, margin=0.1, dtype=None)"
    ),
    "onlinelearn.PNormPerceptron": (
        "(*, p=None, n_epochs=5, shuffle=True, average=False, random_state=None, "
        "fit_intercept=True, intercept_scaling=1.0, class_weight=None, step='conservative', "
        "C=1.0, margin=1.0, dtype=None)"
    ),
    "onlinelearn.COPA": (
        "(*, C=1.0, loss='squared', class_weight=None, n_epochs=5, shuffle=True, "
        "average=True, average_power=2.0, random_state=None, fit_intercept=True, "
        "intercept_scaling=1.0, dtype=None)"
    ),
    "onlinelearn.SequenceTagger": (
        "(update='PA', *, loss='max', C=1.0, U=1.0, average=True, n_epochs=5, shuffle=True, "
        "random_state=None)"
    ),
    "onlinelearn.PrimalDualBoost": (
        "(n_estimators=50, *, step='aggressive', C=None, gamma=0.1, weak_learner=None, "
        "criterion='edge')"
    ),
    "onlinelearn.LabelRanker": (
        "(update='III', complexity='euclidean', C='auto', margin=1.0, fit_intercept=True, "
        "intercept_scaling=1.0, n_epochs=5, shuffle=True, random_state=None, constraint=None, "
        "radius=1.0, floor=1e-06)"
    ),
    "onlinelearn.ClassDependentPA": (
        "(C=1.0, margin=1.0, feature_map=None, n_epochs=5, shuffle=True, random_state=None, "
        "step_tol=1e-10, step_max_iter=10000)"
    ),
    "onlinelearn.WeightedMinMax": (
        "(margin='fixed', b='auto', covariance='full', query=None, c=1.0, fit_intercept=True, "
        "n_epochs=1, shuffle=False, random_state=None, label_encoding='difference')"
    ),
    "onlinelearn.AROW": (
        "(r=1.0, a=1.0, covariance='full', fit_intercept=True, n_epochs=1, shuffle=False, "
        "random_state=None)"
    ),
    "onlinelearn.SCW": (
        "(variant='SCW-I', C=1.0, eta=0.9, a=1.0, covariance='full', fit_intercept=True, "
        "n_epochs=1, shuffle=False, random_state=None)"
    ),
    "onlinelearn.PassiveAggressiveRegressor": (
        "(*, C=1.0, epsilon=0.1, loss='epsilon_insensitive', average=False, n_epochs=5, "
        "shuffle=True, random_state=None, fit_intercept=True, intercept_scaling=1.0, "
        "constraint=None, radius=1.0)"
    ),
    "onlinelearn.OnlineLeastSquares": (
        "(*, solver='rls', C=1.0, alpha=1.0, average=False, n_epochs=1, shuffle=True, "
        "random_state=None, fit_intercept=True, intercept_scaling=1.0, constraint=None, "
        "radius=1.0)"
    ),
    "onlinelearn.DualAscentClassifier": (
        "(*, step='last-k', k=1, variant='PA-I', C=1.0, margin=1.0, link='euclidean', p=None, "
        "U=1.0, sigma=1.0, update='optimal', tol=1e-07, max_sweeps=200, n_epochs=5, "
        "shuffle=True, random_state=None, fit_intercept=True, intercept_scaling=1.0)"
    ),
    "onlinelearn.DualCoordinateSVC": (
        "(C=1.0, *, lam=None, loss='hinge', multi_class='ovr', tol=0.001, max_iter=1000, "
        "fit_intercept=True, intercept_scaling=1.0, class_weight=None, shrinking=True, "
        "check_every='auto', warm_start=False, random_state=None)"
    ),
    "onlinelearn.Pegasos": (
        "(lam=0.0001, *, n_epochs=5, batch_size=1, projection=True, average=False, t0=0.0, "
        "fit_intercept=True, intercept_scaling=1.0, class_weight=None, shuffle=True, "
        "random_state=None)"
    ),
    "onlinelearn.KernelPerceptron": (
        "(kernel='rbf', *, budget=None, removal='oldest', n_epochs=5, shuffle=True, "
        "average=True, random_state=None, fit_intercept=True, intercept_scaling=1.0, "
        "class_weight=None)"
    ),
    "onlinelearn.KernelPassiveAggressive": (
        "(kernel='rbf', *, variant='PA-I', C=1.0, margin=1.0, budget=None, removal='oldest', "
        "n_epochs=5, shuffle=True, average=True, random_state=None, fit_intercept=True, "
        "intercept_scaling=1.0, class_weight=None)"
    ),
    "onlinelearn.KernelCOPA": (
        "(kernel='rbf', *, C=1.0, budget=None, removal='oldest', n_epochs=5, shuffle=True, "
        "average=True, random_state=None, fit_intercept=True, intercept_scaling=1.0, "
        "class_weight=None)"
    ),
    "onlinelearn.KernelSVC": (
        "(kernel='rbf', *, C=1.0, multi_class='ovo', tol=0.001, max_iter=1000, shrinking=True, "
        "cache_size=200.0, fit_intercept=True, intercept_scaling=1.0, class_weight=None, "
        "random_state=None, selection='greedy')"
    ),
    "onlinelearn.structured.Aligner": (
        "(max_duration=12, *, eps=1, cost_scale=10.0, update='self-tuned', C=1.0, U=1.0, "
        "average=False, n_epochs=1, shuffle=True, random_state=None)"
    ),
    "onlinelearn.structured.OnlineStructuredLearner": (
        "(feature_map, argmax, cost, loss_augmented_argmax=None, *, update='PA', loss='max', "
        "C=1.0, U=1.0, average=True, n_epochs=5, shuffle=True, random_state=None)"
    ),
    "onlinelearn.distributed.ParameterMixing": (
        "(estimator, n_epochs=1, client=None, n_features=None)"
    ),
}

#: each parameter's constraints, recorded before the change: ``tests/recorded/constraints.json``
#: (Interval: type and bounds, '[' closed, '(' open; Options: the sorted options;
#: 'no_validation' as it is)
CONSTRAINTS = json.loads((Path(__file__).parent / "recorded" / "constraints.json").read_text())


def _class(path):
    module, name = path.rsplit(".", 1)
    return getattr(importlib.import_module(module), name)


def _constraint(c):
    """A constraint as ``constraints.json`` records it (whatever the order of a set)."""
    if isinstance(c, Options):
        return f"{type(c).__name__}{sorted(c.options, key=repr)!r}"
    if isinstance(c, Interval):
        left = "[" if c.closed in ("left", "both") else "("
        right = "]" if c.closed in ("right", "both") else ")"
        return f"{c.type.__name__}{left}{c.left!r}, {c.right!r}{right}"
    if isinstance(c, HasMethods):
        return f"HasMethods{c.methods!r}"
    if isinstance(c, type):
        return c.__name__
    if c is None:
        return "None"
    return c.__name__ if callable(c) else repr(c)


@pytest.mark.parametrize("path", SIGNATURES)
def test_the_signature_is_the_recorded_one(path):
    cls = _class(path)
    assert str(inspect.signature(cls)) == "".join(SIGNATURES[path])
    # scikit-learn reads the same names, in the same order, from __init__
    names = [p for p in inspect.signature(cls).parameters]
    assert list(cls._get_param_names()) == sorted(names)


@pytest.mark.parametrize("path", CONSTRAINTS)
def test_the_constraints_are_the_recorded_ones(path):
    got = {
        name: value if isinstance(value, str) else " | ".join(_constraint(c) for c in value)
        for name, value in _class(path)._parameter_constraints.items()
    }
    assert got == CONSTRAINTS[path]


@pytest.mark.parametrize("path", [p for p in CONSTRAINTS if "Structured" not in p])
def test_parameters_are_stored_verbatim_and_cloned(path):
    """Every parameter is stored as given (the very object), read back by ``get_params`` and
    kept by ``clone``; positional parameters bind by position where the signature allows."""
    cls = _class(path)
    sig = inspect.signature(cls)
    values = {name: [p.default] for name, p in sig.parameters.items()}
    est = cls(**{name: v[0] for name, v in values.items()})
    params = est.get_params(deep=False)
    assert list(params) == sorted(values)
    for name, (value,) in values.items():
        assert params[name] is value
    twin = clone(est)
    assert all(twin.get_params(deep=False)[n] is v for n, (v,) in values.items())
    positional = [
        p for p in sig.parameters.values() if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
    ]
    if positional:
        first = positional[0]
        assert cls(first.default).get_params(deep=False)[first.name] is first.default
    keyword_only = [p for p in sig.parameters.values() if p.kind is inspect.Parameter.KEYWORD_ONLY]
    if keyword_only:
        with pytest.raises(TypeError):
            cls(*[p.default for p in positional], keyword_only[0].default)


def test_parameters_builds_init_and_constraints_from_one_table():
    from sklearn.base import BaseEstimator
    from sklearn.utils._param_validation import StrOptions

    from onlinelearn.shell.params import REQUIRED, SHARED, Param, parameters

    @parameters("fn kernel * C n_epochs", SHARED, n_epochs=1, fn=Param(REQUIRED, callable),
                kernel=Param("rbf", StrOptions({"rbf", "linear"})))  # fmt: skip
    class Learner(BaseEstimator):
        pass

    assert str(inspect.signature(Learner)) == "(fn, kernel='rbf', *, C=1.0, n_epochs=1)"
    assert Learner._parameter_constraints["n_epochs"] == SHARED["n_epochs"].constraint()
    assert sorted(Learner._parameter_constraints) == ["C", "fn", "kernel", "n_epochs"]
    with pytest.raises(TypeError, match="missing a required argument: 'fn'"):
        Learner()
    with pytest.raises(TypeError, match="positional"):
        Learner(len, "rbf", 2.0)
    with pytest.raises(TypeError, match="declared nowhere"):
        parameters("* nowhere", SHARED)
    with pytest.raises(TypeError, match="not in the signature"):
        parameters("* C", SHARED, n_epochs=3)
    with pytest.raises(TypeError, match="own __init__"):

        @parameters("* C", SHARED)
        class Written(BaseEstimator):
            def __init__(self, C=1.0):
                self.C = C


def test_a_class_weight_edited_in_place_is_checked_again():
    """validate_once compares dicts by value: a class_weight edited after a valid call is
    checked on the next one (kernel learners as linear ones)."""
    import numpy as np

    from onlinelearn import KernelPerceptron, Perceptron

    X = np.array([[0.0, 1.0], [1.0, 0.0], [1.0, 1.0], [0.0, 0.5]])
    y = np.array([0, 1, 1, 0])
    for est in (
        Perceptron(class_weight={0: 1.0}),
        KernelPerceptron("linear", class_weight={0: 1.0}),
    ):
        est.partial_fit(X, y)
        est.class_weight[0] = -1.0
        with pytest.raises(ValueError, match="class_weight"):
            est.partial_fit(X, y)
