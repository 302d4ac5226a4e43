"""The base class of the online linear classifiers, at its public path.

The class lives in :mod:`onlinelearn.shell.base`, beside the plumbing every learner shares;
``onlinelearn.base.OnlineLinearClassifier`` stays the name to derive a learner from
(``docs/CONTRACT.md``).
"""

from .shell.base import OnlineLinearClassifier

__all__ = ["OnlineLinearClassifier"]
