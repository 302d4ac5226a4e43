"""The learner of a command line: its class and parameters from ``--learner``, ``-C``,
``--average``, ``--seed`` and ``--param`` (checked by the learner's own validation), the model of
``--resume``, and the task of a fitted model."""

from __future__ import annotations

import argparse
import ast

from .. import registry
from ._options import CLIError

#: the first command line's learners (kept for compatibility; every learner of
#: :mod:`onlinelearn.registry` is on the command line):
#: name -> (class name in ``onlinelearn``, fixed parameters, takes C)
LEARNERS: dict[str, tuple[str, dict, bool]] = {
    "perceptron": ("Perceptron", {}, False),
    "pa": ("PassiveAggressiveClassifier", {"variant": "PA"}, False),
    "pa1": ("PassiveAggressiveClassifier", {"variant": "PA-I"}, True),
    "pa2": ("PassiveAggressiveClassifier", {"variant": "PA-II"}, True),
    "winnow": ("Winnow", {}, False),
    "pnorm": ("PNormPerceptron", {}, False),
    "copa": ("COPA", {}, True),
}


def _learner_class(class_name: str):
    try:
        import onlinelearn
    except ImportError as exc:  # pragma: no cover - broken installation
        raise CLIError(f"cannot import onlinelearn: {exc}") from None
    cls = getattr(onlinelearn, class_name, None)
    if cls is None:
        raise CLIError(f"learner {class_name} is not available in this version of onlinelearn")
    return cls


def _init_params(cls) -> list[str]:
    import inspect

    return [n for n in inspect.signature(cls.__init__).parameters if n != "self"]


def _takes_C(spec, cls=None) -> bool:
    if spec.takes_C is not None:
        return spec.takes_C
    return "C" in _init_params(cls or registry.learner_class(spec))


def _parse_param(text: str):
    """``--param NAME=VALUE``: VALUE as a Python literal (number, string, tuple, dict, True,
    None; also true / false / none), else as the string itself."""
    name, sep, value = text.partition("=")
    name = name.strip()
    if not sep or not name.isidentifier():
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {text!r}")
    value = value.strip()
    lowered = {"true": True, "false": False, "none": None}
    if value.lower() in lowered:
        return name, lowered[value.lower()]
    try:
        return name, ast.literal_eval(value)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return name, value


def _make_learner(name, C=None, average=None, seed=None, params=()):
    """The estimator of the command-line learner ``name`` with the typed flags (None: the
    learner's own default) and the ``--param`` pairs, checked by its own validation."""
    try:
        spec = registry.get(name)
    except KeyError as exc:
        raise CLIError(exc.args[0]) from None
    try:
        cls = registry.learner_class(spec)
    except (ImportError, AttributeError) as exc:  # pragma: no cover - broken installation
        raise CLIError(f"learner {spec.class_name} is not available: {exc}") from None
    allowed = _init_params(cls)
    kw = dict(spec.params)
    for key, value in params:
        if key not in allowed:
            raise CLIError(
                f"--param {key}: {cls.__name__} has no parameter {key!r} (its parameters: "
                f"{', '.join(allowed)})"
            )
        if key in spec.params and value != spec.params[key]:
            raise CLIError(
                f"--param {key}: the learner {name} fixes {key}={spec.params[key]!r}"
            )
        kw[key] = value
    for flag, key, value in (("-C", "C", C), ("--average", "average", average),
                             ("--seed", "random_state", seed)):  # fmt: skip
        if value is None:
            continue
        usable = _takes_C(spec, cls) if key == "C" else key in allowed
        if not usable:
            with_it = [s.name for s in registry.LEARNERS.values()
                       if (_takes_C(s) if key == "C"
                           else key in _init_params(registry.learner_class(s)))]  # fmt: skip
            raise CLIError(
                f"{flag} applies only to the learners {', '.join(with_it)}, not to {name}"
            )
        if key in kw and dict(params).get(key, value) != value:
            raise CLIError(f"{flag} and --param {key} disagree; give one of them")
        kw[key] = value
    est = cls(**kw)
    _check_learner_params(est, name)
    return est


def _check_learner_params(est, name) -> None:
    """Run the estimator's own parameter validation now, not at the first chunk."""
    for method in ("_validate_params", "_check_params"):
        check = getattr(est, method, None)
        if check is None:
            continue
        try:
            check()
        except (ValueError, TypeError) as exc:
            msg = " ".join(str(exc).split())
            raise CLIError(f"invalid parameter of the learner {name}: {msg}") from None
        except Exception:  # a check that needs a fitted model: it runs at the first chunk
            pass


def _learner_of(est):
    """The learner itself: the wrapped one of a :class:`~onlinelearn.seen_columns.SeenColumns`
    (``--format vw``'s storage for the columns seen), else ``est``."""
    from onlinelearn.seen_columns import SeenColumns

    if isinstance(est, SeenColumns):
        return getattr(est, "estimator_", est.estimator)
    return est


def _model_task(est) -> str:
    """The task of a fitted estimator: that of its learner in the registry; a LabelRanker fitted
    on one label per row (in Python) is a classifier."""
    est = _learner_of(est)
    spec = registry.spec_of_estimator(est)
    task = spec.task if spec is not None else "classification"
    if task == "ranking" and getattr(est, "_kind", None) == "multiclass":
        return "classification"
    return task


def _resumed_learner(args):
    """The model of ``--resume``, after checking that no option contradicts it."""
    from onlinelearn.model_io import load_model

    # --seed seeds the shuffle buffer, if any; the learner's own seed is in the model file
    seed = None if getattr(args, "shuffle_buffer", None) else args.seed
    for flag, value in (
        ("--learner", args.learner),
        ("-C", args.C),
        ("--seed", seed),
        ("--param", getattr(args, "param", None) or None),
    ):
        if value is not None:
            raise CLIError(f"{flag} cannot be combined with --resume: the model file fixes it")
    if args.average is not None:
        raise CLIError(
            "--average / --no-average cannot be combined with --resume: the model file fixes it"
        )
    est = load_model(args.resume)
    spec = registry.spec_of_estimator(_learner_of(est))
    if spec is not None and not spec.online:
        raise CLIError(
            f"{args.resume}: a {spec.class_name} model ({spec.name}) is a batch learner and "
            "cannot continue training; train it again on all the data"
        )
    if args.n_features is not None and args.n_features != est.n_features_in_:
        raise CLIError(
            f"--n-features {args.n_features} differs from the {est.n_features_in_} features of "
            f"the model {args.resume}"
        )
    return est
