"""Constructor parameters, declared once: default and constraints, stored as scikit-learn expects.

A parameter is declared by a :class:`Param`: its default and its scikit-learn constraints.
Declarations that several estimators share are written once, in tables (name -> Param): those
that recur across families (:data:`SHARED`), the projected updates (:data:`CONSTRAINT`), and
each family's beside its base class.  An estimator lists its parameters in the order of its
signature, and :func:`parameters` builds from the same declarations its ``__init__`` (which
stores every value as given, scikit-learn's convention: no validation or conversion there) and
its ``_parameter_constraints``::

    @parameters("kernel * C n_epochs shuffle random_state", SHARED, n_epochs=1,
                kernel=Param("rbf", StrOptions({"rbf", "linear"})))
    class Learner(BaseEstimator): ...

is ``Learner(kernel='rbf', *, C=1.0, n_epochs=1, shuffle=True, random_state=None)``:
``inspect.signature``, ``help()``, ``get_params``, ``clone`` and ``repr`` see it as if it were
written out by hand (``tests/test_signatures.py`` holds every estimator's).
"""

from __future__ import annotations

import functools
import inspect
import keyword
import numbers

from sklearn.utils._param_validation import Interval, StrOptions

__all__ = [
    "AT_LEAST_ONE",
    "CONSTRAINT",
    "NON_NEGATIVE",
    "POSITIVE",
    "POSITIVE_OR_INF",
    "REQUIRED",
    "SHARED",
    "Param",
    "constraints_of",
    "param_names",
    "parameters",
    "store_params",
    "validate_once",
]

#: the default of a parameter that has none (it must be given)
REQUIRED = inspect.Parameter.empty
_POSITIONAL = inspect.Parameter.POSITIONAL_OR_KEYWORD
_KEYWORD_ONLY = inspect.Parameter.KEYWORD_ONLY

#: constraints that recur: a number > 0, a number >= 0, an integer >= 1
POSITIVE = Interval(numbers.Real, 0, None, closed="neither")
NON_NEGATIVE = Interval(numbers.Real, 0, None, closed="left")
AT_LEAST_ONE = Interval(numbers.Integral, 1, None, closed="left")
#: a number > 0 that may be infinite (a step without cap)
POSITIVE_OR_INF = Interval(numbers.Real, 0, None, closed="right")


class Param:
    """One constructor parameter: its ``default`` and its scikit-learn ``constraints`` (the
    entries of its list in ``_parameter_constraints``; ``'no_validation'`` alone stands for no
    check).  Calling it gives the same declaration with another default."""

    __slots__ = ("default", "constraints")

    def __init__(self, default=REQUIRED, *constraints):
        self.default = default
        self.constraints = constraints

    def __call__(self, default):
        return Param(default, *self.constraints)

    def constraint(self):
        """The value of ``_parameter_constraints[name]``."""
        if self.constraints == ("no_validation",):
            return "no_validation"
        return list(self.constraints)

    def __repr__(self):
        return f"Param({self.default!r}, {', '.join(map(repr, self.constraints))})"


#: the parameters that recur across families (the online passes, the PA steps, the SVM solvers)
SHARED = {
    "n_epochs": Param(5, AT_LEAST_ONE),
    "shuffle": Param(True, "boolean"),
    "average": Param(False, "boolean"),
    "random_state": Param(None, "random_state"),
    "fit_intercept": Param(True, "boolean"),
    "intercept_scaling": Param(1.0, POSITIVE),
    "class_weight": Param(None, dict, StrOptions({"balanced"}), None),
    "C": Param(1.0, POSITIVE),
    "margin": Param(1.0, NON_NEGATIVE),
    "variant": Param("PA-I", StrOptions({"PA", "PA-I", "PA-II"})),
    "U": Param(1.0, POSITIVE),
    "max_iter": Param(1000, AT_LEAST_ONE),
    "shrinking": Param(True, "boolean"),
}

#: the projected updates of the Euclidean linear learners and regressors (Sec. 7.1)
CONSTRAINT = {
    "constraint": Param(None, StrOptions({"l1", "simplex"}), None),
    "radius": Param(1.0, POSITIVE),
}


def constraints_of(table) -> dict:
    """``_parameter_constraints`` of a table of declarations."""
    return {name: p.constraint() for name, p in table.items()}


def parameters(names: str, *tables, **changes):
    """Class decorator: the class's ``__init__`` and ``_parameter_constraints`` from one table.

    ``names``: the parameters in the order of the signature, as in a ``def``: those before a
    ``*`` are positional-or-keyword, those after it keyword-only (``'* a b'``: all keyword-only;
    no ``*``: none).  A name's declaration is its entry in ``changes`` when that is a
    :class:`Param`, else that of the last of ``tables`` that has it, with the default given in
    ``changes`` if there is one.  The ``__init__`` stores every argument as it is given (the very
    object) and nothing else; its ``__signature__`` is the signature these names spell."""
    words = names.split()
    n_positional = words.index("*") if "*" in words else len(words)
    order = [w for w in words if w != "*"]
    table = {}
    for name in order:
        change = changes.pop(name, REQUIRED)
        if isinstance(change, Param):
            table[name] = change
            continue
        found = [t[name] for t in tables if name in t]
        if not found:
            raise TypeError(f"parameter {name!r} is declared nowhere")
        table[name] = found[-1] if change is REQUIRED else found[-1](change)
    if changes:
        raise TypeError(f"changes to parameters not in the signature: {sorted(changes)}")

    def decorate(cls):
        if "__init__" in cls.__dict__:
            raise TypeError(f"{cls.__name__} has its own __init__: declare its parameters instead")
        cls.__init__ = _make_init(cls, table, n_positional)
        cls._parameter_constraints = constraints_of(table)
        return cls

    return decorate


def _make_init(cls, table, n_positional):
    """An ``__init__`` with the signature of ``table`` that stores each argument as given.

    Arguments given by keyword only are taken as they are; any other call is bound by
    :meth:`inspect.Signature.bind`, Python's own rules (and the messages of a wrong call)."""
    names = list(table)
    for name in names:
        if not name.isidentifier() or keyword.iskeyword(name) or name == "self":
            raise TypeError(f"{name!r} cannot be a parameter name")
    given = [table[n].default is not REQUIRED for n in names[:n_positional]]
    if given != sorted(given):
        raise TypeError(f"{cls.__name__}: a positional parameter without default follows one with")
    params = inspect.Signature([
        inspect.Parameter(n, _POSITIONAL if i < n_positional else _KEYWORD_ONLY,
                          default=table[n].default)
        for i, n in enumerate(names)
    ])  # fmt: skip
    defaults = {n: table[n].default for n in names if table[n].default is not REQUIRED}
    known, required = frozenset(names), frozenset(names) - defaults.keys()
    qualname = f"{cls.__qualname__}.__init__"

    def __init__(self, *args, **kwargs):
        if args or not required <= kwargs.keys() <= known:
            try:
                kwargs = params.bind(*args, **kwargs).arguments
            except TypeError as exc:  # the function named as Python names it
                raise TypeError(f"{qualname}() {exc}") from None
        for name in names:
            setattr(self, name, kwargs[name] if name in kwargs else defaults[name])

    __init__.__module__ = cls.__module__
    __init__.__qualname__ = qualname
    __init__.__doc__ = (
        "Store the parameters as given (scikit-learn's convention; they are checked when "
        "learning starts).  See the class docstring."
    )
    self_param = inspect.Parameter("self", _POSITIONAL)
    __init__.__signature__ = params.replace(parameters=[self_param, *params.parameters.values()])
    return __init__


@functools.cache
def param_names(cls):
    """The parameter names of ``cls`` in ``get_params`` order, read from its signature once."""
    return tuple(cls._get_param_names())


def validate_once(estimator, checks, attr="_validated_params"):
    """Run ``checks()`` (the parameter checks) unless every parameter is the very object found
    valid last time (a dict: an equal one, so that a dict edited in place is checked again): a
    stream of ``partial_fit`` calls pays for the checks once.  ``attr`` keeps the values found
    valid."""
    names = param_names(type(estimator))
    last = estimator.__dict__.get(attr)
    if last is not None and len(last) == len(names):
        # compared before any copy is made (a stream of one-row calls: 2.4 -> 0.8 us); a dict
        # found valid is kept as a copy, so it is compared by value
        for n, a in zip(names, last):  # noqa: B905 - equal lengths, checked above
            b = getattr(estimator, n)
            if not (a is b or (isinstance(a, dict) and a == b)):
                break
        else:
            return
    values = (getattr(estimator, n) for n in names)
    key = tuple(dict(v) if isinstance(v, dict) else v for v in values)
    checks()
    setattr(estimator, attr, key)


def store_params(estimator, params: dict) -> None:
    """Set each ``__init__`` parameter on ``estimator`` verbatim (scikit-learn's convention: no
    validation or conversion in ``__init__``; ``get_params`` reads them back).

    Called as ``store_params(self, locals())`` as the only statement of an ``__init__`` written
    by hand (a class whose parameters are not declared with :func:`parameters`)."""
    for name, value in params.items():
        if name not in ("self", "__class__"):
            setattr(estimator, name, value)


#: ``class_weight`` of the learners on COPA's loss: also ``'confusion'`` (paper eq. (17))
CONFUSION_CLASS_WEIGHT = Param(None, dict, StrOptions({"balanced", "confusion"}), None)
