"""Constructor parameters, stored as scikit-learn expects."""

from __future__ import annotations

__all__ = ["store_params"]


def store_params(estimator, params: dict) -> None:
    """Set each ``__init__`` parameter on ``estimator`` verbatim (scikit-learn's convention: no
    validation or conversion in ``__init__``; ``get_params`` reads them back).

    Called as ``store_params(self, locals())`` as the only statement of an ``__init__``: one line
    instead of one assignment per parameter in every estimator."""
    for name, value in params.items():
        if name not in ("self", "__class__"):
            setattr(estimator, name, value)
