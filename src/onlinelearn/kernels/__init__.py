"""Valid kernels and the algebra that builds valid kernels from valid kernels.

See :mod:`onlinelearn.kernels._kernels` for the constructions and the proofs they follow (course
text "Kernels"; thesis Sec. 3.3), and ``docs/kernels.md``.

>>> import numpy as np
>>> from onlinelearn import kernels as K
>>> k = 2.0 * K.Linear() + K.exp(K.Linear()) * K.RBF(gamma=0.5)
>>> X = np.array([[0.0, 1.0], [1.0, 1.0]])
>>> np.round(k(X), 4)
array([[ 4.7183,  3.6487],
       [ 3.6487, 11.3891]])
>>> phi = (K.Linear() + K.Polynomial(degree=2, gamma=1.0, coef0=1.0)).feature_map()
>>> F = phi.transform(X)
>>> bool(np.allclose(F @ F.T, (K.Linear() + K.Polynomial(2, 1.0, 1.0))(X)))
True
"""

from . import _kernels
from ._feature_map import FeatureMap
from ._kernels import *  # noqa: F403 - the kernel algebra, whose names _kernels.__all__ lists
from ._lookup import as_kernel, from_dict

__all__ = [*_kernels.__all__, "FeatureMap", "as_kernel", "from_dict"]
