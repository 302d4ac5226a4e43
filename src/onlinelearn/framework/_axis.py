"""What the objects of the three axes (links, losses, steps) share: they are immutable, so a
deep copy is the object itself (scikit-learn's ``clone`` may share them between estimators),
and a learner's parameter may name one instead (``'euclidean'``, ``'hinge'``, ...)."""

from __future__ import annotations

__all__ = ["AxisObject", "from_name"]


class AxisObject:
    """Base of :class:`~onlinelearn.framework.Link`, :class:`~onlinelearn.framework.Loss` and
    :class:`~onlinelearn.framework.Step`."""

    def __deepcopy__(self, memo):  # immutable: scikit-learn's clone may share it
        return self


def from_name(value, base, names, what, examples):
    """``value`` itself when it is a ``base`` object, a new ``names[value]()`` when it is one of
    the ``names``; else a ValueError saying that the ``what`` must be one of the objects
    (``examples``, as text) or one of the names."""
    if isinstance(value, base):
        return value
    make = names.get(value) if isinstance(value, str) else None
    if make is None:
        raise ValueError(
            f"{what} must be a onlinelearn.framework {what} ({examples}) or one of "
            f"{sorted(names)}, got {value!r}"
        )
    return make()
