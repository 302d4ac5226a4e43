"""Batch linear SVMs by dual coordinate ascent and the Pegasos SGD solver.

* :class:`DualCoordinateSVC`: the L1- or L2-loss linear SVM (binary, one-vs-rest) and the
  Crammer-Singer multiclass SVM, by dual coordinate ascent with shrinking, stopped on the
  duality gap;
* :class:`Pegasos`: lambda/2 ||w||^2 + mean hinge (binary) or multiclass hinge, by
  sub-gradient steps 1/(lambda t) with optional projection and averaging.

The compiled solvers are in :mod:`onlinelearn._core.svm`.
"""

from .dual_cd import DualCoordinateSVC
from .pegasos import Pegasos

__all__ = ["DualCoordinateSVC", "Pegasos"]
