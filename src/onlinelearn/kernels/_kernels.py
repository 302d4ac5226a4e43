"""Kernel objects and the algebra that builds valid kernels from valid kernels.

A kernel k is *valid* (positive semi-definite) when k(x, z) = <phi(x), phi(z)> for some feature
map phi.  The course text (EPFL CS-433, problem set 7, "Kernels") and the thesis (Sec. 3.3) prove
that these constructions keep validity, each by building phi:

=====================  ========================================  ==================================
construction           kernel                                    feature map of the proof
=====================  ========================================  ==================================
``k1 + k2``            k1(x, z) + k2(x, z)                       phi1(x) (+) phi2(x) (concatenation)
``k1 * k2``            k1(x, z) k2(x, z)                         phi1(x) (x) phi2(x) (tensor prod.)
``c * k``, c >= 0      c k(x, z)                                 sqrt(c) phi(x)
``polynomial_of``      sum_i a_i k(x, z)^i, a_i >= 0             (+)_i sqrt(a_i) phi(x)^(x)i
``exp(k)``             exp(k(x, z))                              the limit of the polynomials
                                                                 sum_{i<=n} k^i / i! (infinite)
``on_features(k, S)``  k(x_S, z_S)                               phi(x_S)
``k + c``, c >= 0      k(x, z) + c                               phi(x) (+) sqrt(c)
=====================  ========================================  ==================================

Everything else is refused with an error: a negative scale, subtraction, negation, division by
a non-positive number, arbitrary Python functions.  Kernels are immutable values; every kernel is
callable, ``k(X, Y=None) -> Gram`` (dense float64), so it can be passed where scikit-learn takes
a kernel callable (``sklearn.svm.SVC(kernel=k)``).  Gram blocks are computed by the compiled
program of :mod:`onlinelearn._core.kernel.gram` for dense and CSR input, float32 and float64.
"""

from __future__ import annotations

import math
import numbers

import numpy as np
import scipy.sparse as sp

__all__ = [
    "Kernel",
    "Linear",
    "Polynomial",
    "RBF",
    "Laplacian",
    "Cosine",
    "Constant",
    "Precomputed",
    "Sum",
    "Product",
    "Scaled",
    "PolynomialOf",
    "Exp",
    "OnFeatures",
    "exp",
    "polynomial_of",
    "on_features",
    "NoFiniteFeatureMap",
]


class NoFiniteFeatureMap(ValueError):
    """Raised by :meth:`Kernel.feature_map` for kernels whose feature space is infinite."""


def _check_nonneg(c, what):
    if isinstance(c, bool) or not isinstance(c, numbers.Real):
        raise TypeError(f"{what} must be a real number >= 0, got {c!r}")
    c = float(c)
    if not math.isfinite(c) or c < 0.0:
        raise ValueError(
            f"{what} = {c!r}: only finite numbers >= 0 keep a kernel valid (positive "
            "semi-definite); a negative scale or coefficient is refused."
        )
    return c


def _check_gamma(gamma, what):
    if gamma is None:
        return None
    return _check_nonneg(gamma, f"{what}: gamma")


def _refuse_function(other):
    if callable(other) and not isinstance(other, Kernel):
        _as_kernel(other, "kernel algebra")


def _subtraction_error():
    return TypeError(
        "kernels cannot be subtracted or negated: the difference of two valid kernels is not "
        "positive semi-definite in general. Build kernels with +, *, a scale c >= 0, "
        "polynomial_of (coefficients >= 0), exp and on_features."
    )


class Kernel:
    """A valid kernel k(x, z) = <phi(x), phi(z)>; see the module docstring for the algebra.

    Call ``k(X, Y=None)`` for the Gram block [k(x_i, y_j)]_{ij} (Y = X when omitted)."""

    #: leaf kernels have no children
    _children: tuple = ()

    # ------------------------------------------------------------------ algebra
    def __add__(self, other):
        _refuse_function(other)
        if isinstance(other, Kernel):
            return Sum(self, other)
        if isinstance(other, numbers.Real) and not isinstance(other, bool):
            return Sum(self, Constant(other))
        return NotImplemented

    __radd__ = __add__

    def __mul__(self, other):
        _refuse_function(other)
        if isinstance(other, Kernel):
            return Product(self, other)
        if isinstance(other, numbers.Real) and not isinstance(other, bool):
            return Scaled(other, self)
        return NotImplemented

    __rmul__ = __mul__

    def __truediv__(self, other):
        if isinstance(other, numbers.Real) and not isinstance(other, bool):
            c = float(other)
            if not (c > 0.0 and math.isfinite(c)):
                raise ValueError(f"a kernel can only be divided by a finite number > 0, not {c}")
            return Scaled(1.0 / c, self)
        return NotImplemented

    def __pow__(self, n):
        if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 0:
            raise ValueError(
                f"k ** n needs an integer n >= 0 (a product of n copies of k), got {n!r}"
            )
        return PolynomialOf(self, [0.0] * int(n) + [1.0])

    def __sub__(self, other):
        raise _subtraction_error()

    __rsub__ = __sub__

    def __neg__(self):
        raise _subtraction_error()

    # ------------------------------------------------------------------ value semantics
    def to_dict(self):
        """JSON description (``from_dict`` rebuilds the kernel)."""
        raise NotImplementedError

    def __eq__(self, other):
        return isinstance(other, Kernel) and self.to_dict() == other.to_dict()

    def __hash__(self):
        return hash(repr(self))

    def __repr__(self):
        d = self.to_dict()
        kind = d.pop("kernel")
        args = ", ".join(f"{k}={v!r}" for k, v in d.items())
        return f"{kind}({args})"

    # ------------------------------------------------------------------ evaluation
    # The Gram program (_program) and the feature maps (_feature_map) dispatch on the classes of
    # this module, so they import it; these three methods reach them when called, never at
    # import, which keeps this module at the bottom of the package.
    def __call__(self, X, Y=None):
        """Gram block [k(x_i, y_j)], shape (n_X, n_Y), float64; dense or CSR, float32/64."""
        from ._program import gram

        return gram(self, X, Y)

    def diag(self, X):
        """[k(x_i, x_i)]_i without the whole Gram matrix."""
        from ._program import gram_diag

        return gram_diag(self, X)

    def feature_map(self):
        """The explicit finite feature map phi of the validity proof, as a
        :class:`~onlinelearn.kernels.FeatureMap` (``phi.transform(X)``), with
        ``phi(X) @ phi(Y).T == k(X, Y)``.  Raises :class:`NoFiniteFeatureMap` when the feature
        space of the kernel is infinite (RBF, Laplacian, exp)."""
        from ._feature_map import FeatureMap

        self._check_finite_map()
        return FeatureMap(self)

    def _check_finite_map(self):
        for c in self._children:
            c._check_finite_map()

    @property
    def requires_vector_input(self):
        return True


# ---------------------------------------------------------------------- leaves
class Linear(Kernel):
    """k(x, z) = <x, z>; phi(x) = x."""

    def to_dict(self):
        return {"kernel": "Linear"}


class Polynomial(Kernel):
    """k(x, z) = (gamma <x, z> + coef0)^degree, gamma >= 0, coef0 >= 0, integer degree >= 0.

    gamma=None means 1 / n_features (scikit-learn's ``polynomial_kernel``).  Valid as a
    polynomial with non-negative coefficients of the linear kernel; phi is the tensor power of
    (sqrt(coef0), sqrt(gamma) x)."""

    def __init__(self, degree=3, gamma=None, coef0=1.0):
        if isinstance(degree, bool) or not isinstance(degree, numbers.Integral) or degree < 0:
            raise ValueError(f"Polynomial: degree must be an integer >= 0, got {degree!r}")
        self.degree = int(degree)
        self.gamma = _check_gamma(gamma, "Polynomial")
        self.coef0 = _check_nonneg(coef0, "Polynomial: coef0")

    def to_dict(self):
        return {"kernel": "Polynomial", "degree": self.degree, "gamma": self.gamma,
                "coef0": self.coef0}  # fmt: skip


class _ExpOfDistance(Kernel):
    """exp(-gamma d(x, z)) for a distance d: the code RBF and Laplacian share; each names itself
    (``_NAME``, in errors and in ``to_dict``) and says how to approximate it (``_NO_MAP``, the
    message of :meth:`Kernel.feature_map`: the feature space is infinite)."""

    _NAME = ""
    _NO_MAP = ""

    def __init__(self, gamma=None):
        self.gamma = _check_gamma(gamma, self._NAME)

    def to_dict(self):
        return {"kernel": self._NAME, "gamma": self.gamma}

    def _check_finite_map(self):
        raise NoFiniteFeatureMap(self._NO_MAP)


class RBF(_ExpOfDistance):
    """k(x, z) = exp(-gamma ||x - z||^2), gamma >= 0 (None: 1 / n_features, as scikit-learn's
    ``rbf_kernel``).  Valid as exp(2 gamma <x, z>) times f(x) f(z); no finite feature map."""

    _NAME = "RBF"
    _NO_MAP = (
        "RBF has no finite feature map (its feature space is infinite); approximate it "
        "with sklearn.kernel_approximation.RBFSampler or Nystroem."
    )


class Laplacian(_ExpOfDistance):
    """k(x, z) = exp(-gamma ||x - z||_1), gamma >= 0 (None: 1 / n_features, as scikit-learn's
    ``laplacian_kernel``).  No finite feature map."""

    _NAME = "Laplacian"
    _NO_MAP = (
        "Laplacian has no finite feature map; approximate it with "
        "sklearn.kernel_approximation.Nystroem."
    )


class Cosine(Kernel):
    """k(x, z) = <x, z> / (||x|| ||z||) (0 when x or z is zero); phi(x) = x / ||x||."""

    def to_dict(self):
        return {"kernel": "Cosine"}


class Constant(Kernel):
    """k(x, z) = c, c >= 0; phi(x) = (sqrt(c),)."""

    def __init__(self, c=1.0):
        self.c = _check_nonneg(c, "Constant: c")

    def to_dict(self):
        return {"kernel": "Constant", "c": self.c}


class Precomputed(Kernel):
    """The Gram matrix is given: ``fit(K_train, y)`` with K_train square and symmetric,
    ``predict(K_test)`` with K_test[i, j] = k(test_i, train_j).  ``k(X, Y)`` returns X.
    It cannot enter the algebra (there are no vectors to combine) and has no feature map."""

    def to_dict(self):
        return {"kernel": "Precomputed"}

    def __call__(self, X, Y=None):
        X = sp.csr_matrix(X).toarray() if sp.issparse(X) else np.asarray(X, dtype=np.float64)
        return np.array(X, dtype=np.float64)

    def _refuse(self, *a):
        raise TypeError("Precomputed kernels cannot be combined: there are no vectors to combine")

    __add__ = __radd__ = __mul__ = __rmul__ = __truediv__ = __pow__ = _refuse

    def _check_finite_map(self):
        raise NoFiniteFeatureMap("a Precomputed kernel has no feature map")

    @property
    def requires_vector_input(self):
        return False


# ---------------------------------------------------------------------- constructions
def _as_kernel(k, what):
    if isinstance(k, Precomputed):
        raise TypeError(f"{what}: a Precomputed kernel cannot be combined")
    if not isinstance(k, Kernel):
        raise TypeError(
            f"{what}: expected an onlinelearn.kernels.Kernel, got {type(k).__name__}. An "
            "arbitrary function is not guaranteed to be a valid kernel; build it with the "
            "algebra of onlinelearn.kernels, or give its Gram matrix through Precomputed()."
        )
    return k


class _Pair(Kernel):
    """A construction from two kernels k1 and k2: the code Sum and Product share; each names
    itself (``_NAME``, in errors and in ``to_dict``) and its operator (``_OP``, in ``repr``)."""

    _NAME = ""
    _OP = ""

    def __init__(self, k1, k2):
        self.k1 = _as_kernel(k1, self._NAME)
        self.k2 = _as_kernel(k2, self._NAME)
        self._children = (self.k1, self.k2)

    def to_dict(self):
        return {"kernel": self._NAME, "k1": self.k1.to_dict(), "k2": self.k2.to_dict()}

    def __repr__(self):
        return f"({self.k1!r} {self._OP} {self.k2!r})"


class Sum(_Pair):
    """k1 + k2; phi = phi1 (+) phi2 (concatenation)."""

    _NAME = "Sum"
    _OP = "+"


class Product(_Pair):
    """k1 k2; phi = phi1 (x) phi2 (tensor product)."""

    _NAME = "Product"
    _OP = "*"


class Scaled(Kernel):
    """c k, c >= 0; phi = sqrt(c) phi_k."""

    def __init__(self, c, k):
        self.c = _check_nonneg(c, "scale c of c * k")
        self.k = _as_kernel(k, "Scaled")
        self._children = (self.k,)

    def to_dict(self):
        return {"kernel": "Scaled", "c": self.c, "k": self.k.to_dict()}

    def __repr__(self):
        return f"{self.c!r} * {self.k!r}"


class _KernelAndList(Kernel):
    """A construction from one kernel k and a list of numbers: the code PolynomialOf (its
    coefficients) and OnFeatures (its columns) share.  Each names the list (``_LIST``, the
    attribute and its key in ``to_dict``), itself (``_NAME``) and the function that builds it
    (``_FUNCTION``, in ``repr``)."""

    _LIST = ""
    _NAME = ""
    _FUNCTION = ""

    def _set(self, k, values):
        self.k = k
        setattr(self, self._LIST, tuple(values))
        self._children = (self.k,)

    def to_dict(self):
        return {"kernel": self._NAME, self._LIST: list(getattr(self, self._LIST)),
                "k": self.k.to_dict()}  # fmt: skip

    def __repr__(self):
        return f"{self._FUNCTION}({self.k!r}, {list(getattr(self, self._LIST))!r})"


class PolynomialOf(_KernelAndList):
    """sum_i coef[i] k^i with every coef[i] >= 0 (coef[0] the constant term);
    phi = (+)_i sqrt(coef[i]) phi_k^(x)i."""

    _LIST = "coef"
    _NAME = "PolynomialOf"
    _FUNCTION = "polynomial_of"

    def __init__(self, k, coef):
        k = _as_kernel(k, "polynomial_of")
        coef = [_check_nonneg(c, f"polynomial_of: coefficient {i}") for i, c in enumerate(coef)]
        if not coef:
            raise ValueError("polynomial_of needs at least one coefficient")
        self._set(k, coef)


class Exp(Kernel):
    """exp(k): the limit of the valid kernels sum_{i<=n} k^i / i!; no finite feature map."""

    def __init__(self, k):
        self.k = _as_kernel(k, "exp")
        self._children = (self.k,)

    def to_dict(self):
        return {"kernel": "Exp", "k": self.k.to_dict()}

    def __repr__(self):
        return f"exp({self.k!r})"

    def _check_finite_map(self):
        raise NoFiniteFeatureMap(
            "exp(k) has no finite feature map (it is the limit of polynomials of every "
            "degree); use polynomial_of(k, [1, 1, 1/2, 1/6, ...]) for a truncation."
        )


class OnFeatures(_KernelAndList):
    """k on a subset S of the features: k(x_S, z_S); phi(x) = phi_k(x_S)."""

    _LIST = "features"
    _NAME = "OnFeatures"
    _FUNCTION = "on_features"

    def __init__(self, k, features):
        k = _as_kernel(k, "on_features")
        f = np.asarray(features)
        if f.dtype == bool:
            f = np.flatnonzero(f)
        if f.ndim != 1 or f.size == 0 or f.dtype.kind not in "iu" or (f < 0).any():
            raise ValueError(
                "on_features: features must be a non-empty 1-D list of column indices >= 0 "
                "(or a boolean mask)"
            )
        if np.unique(f).size != f.size:
            raise ValueError("on_features: repeated feature indices")
        self._set(k, (int(v) for v in f))


def exp(k):
    """exp(k(x, z)): valid for every valid k (course text, "Kernels", part 2)."""
    return Exp(k)


def polynomial_of(k, coef):
    """sum_i coef[i] k(x, z)^i with non-negative coefficients (coef[0] is the constant term)."""
    return PolynomialOf(k, coef)


def on_features(k, features):
    """k restricted to the columns ``features`` (indices or a boolean mask)."""
    return OnFeatures(k, features)
