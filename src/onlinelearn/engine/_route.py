"""One estimator class over several families: the attributes a family defines go to it.

:class:`~onlinelearn.framework.OnlineLearner` is the linear family
(:class:`~onlinelearn.shell.base.OnlineLinearClassifier`) for the single-variable steps; when
its configuration belongs to another family (the dual ascent steps that keep past rounds'
dual variables), every attribute that the family's class resolves differently from the linear
base (``_learn``, the state, the read-out, the counters, the model files, ...) resolves to the
family's version instead.  The estimator says which family is active with ``_family()`` (None:
the base).  Attributes that only a family has raise AttributeError on the others.
"""

from __future__ import annotations

from sklearn.base import BaseEstimator, ClassifierMixin

__all__ = ["routed"]

_MISSING = object()
#: scikit-learn's estimator methods: every estimator class has them
_SKLEARN = frozenset(dir(BaseEstimator)) | frozenset(dir(ClassifierMixin))
#: never routed: the estimator's own parameters and configuration
_OWN = frozenset(
    {"_configuration", "_check_params", "_validate_params", "_parameter_constraints",
     "get_params", "set_params", "_get_param_names", "_from_state", "_family"}
)  # fmt: skip


def _lookup(cls, name):
    """The raw class attribute ``name`` as ``cls``'s MRO resolves it (descriptors unbound)."""
    for klass in cls.__mro__:
        if name in klass.__dict__:
            return klass.__dict__[name]
    return _MISSING


class _Routed:
    """The attribute ``name``: the family's version while ``obj._family()`` is that family,
    the base's otherwise."""

    def __init__(self, name, default, by_family):
        self.name, self.default, self.by_family = name, default, by_family
        self.__doc__ = getattr(default, "__doc__", None) if default is not _MISSING else None

    def __get__(self, obj, owner=None):
        raw = self.default if obj is None else self.by_family.get(obj._family(), self.default)
        if raw is _MISSING:
            family = obj._family() if obj is not None else None
            what = type(obj).__name__ if obj is not None else owner.__name__
            raise AttributeError(
                f"{what!r} has no attribute {self.name!r} with this configuration (the "
                f"{getattr(family, '__name__', 'linear family')} has none)"
            )
        get = getattr(type(raw), "__get__", None)
        return get(raw, obj, owner) if get is not None else raw


def routed(*families):
    """Class decorator: in ``cls``, a subclass of one base that defines nothing of its own,
    every attribute that one of ``families`` (classes) resolves differently from the base is
    routed by ``_family()`` (a :class:`_Routed` in ``cls``)."""

    def decorate(cls):
        (base,) = cls.__bases__
        for name, route in _routes(base, families).items():
            setattr(cls, name, route)
        return cls

    return decorate


def _routes(base, families):
    """The :class:`_Routed` of every attribute that one of ``families`` resolves differently
    from ``base``, by name."""
    attrs = {}
    for fam in families:
        for name in dir(fam):
            if name.startswith("__") or name in _OWN or name.endswith("_request"):
                continue  # (scikit-learn's metadata-request methods are made per class)
            raw = _lookup(fam, name)
            default = _lookup(base, name)
            if raw is default:
                continue
            route = attrs.get(name)
            if route is None:
                route = attrs[name] = _Routed(name, default, {})
            route.by_family[fam] = raw
        # the base's public methods that a family does not offer (scikit-learn's own aside)
        for name in dir(base):
            if name.startswith("_") or name in _SKLEARN or _lookup(fam, name) is not _MISSING:
                continue
            route = attrs.get(name)
            if route is None:
                route = attrs[name] = _Routed(name, _lookup(base, name), {})
            route.by_family[fam] = _MISSING
    return attrs
