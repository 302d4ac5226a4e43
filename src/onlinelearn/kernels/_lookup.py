"""Kernels by name and from their description: ``as_kernel`` (estimators' ``kernel``
parameter) and ``from_dict`` (model files), over the classes of :mod:`._kernels`."""

from __future__ import annotations

from ._kernels import (
    RBF,
    Constant,
    Cosine,
    Exp,
    Kernel,
    Laplacian,
    Linear,
    OnFeatures,
    Polynomial,
    PolynomialOf,
    Precomputed,
    Product,
    Scaled,
    Sum,
)

__all__ = ["as_kernel", "from_dict"]


_LEAVES = {
    "Linear": Linear,
    "Polynomial": Polynomial,
    "RBF": RBF,
    "Laplacian": Laplacian,
    "Cosine": Cosine,
    "Constant": Constant,
    "Precomputed": Precomputed,
}


def from_dict(d):
    """Rebuild a kernel from :meth:`Kernel.to_dict` (model files)."""
    d = dict(d)
    kind = d.pop("kernel", None)
    if kind in _LEAVES:
        return _LEAVES[kind](**d)
    if kind in ("Sum", "Product"):
        cls = Sum if kind == "Sum" else Product
        return cls(from_dict(d["k1"]), from_dict(d["k2"]))
    if kind == "Scaled":
        return Scaled(d["c"], from_dict(d["k"]))
    if kind == "PolynomialOf":
        return PolynomialOf(from_dict(d["k"]), d["coef"])
    if kind == "Exp":
        return Exp(from_dict(d["k"]))
    if kind == "OnFeatures":
        return OnFeatures(from_dict(d["k"]), d["features"])
    raise ValueError(f"unknown kernel description {kind!r}")


_NAMES = {
    "linear": Linear,
    "rbf": RBF,
    "poly": Polynomial,
    "polynomial": Polynomial,
    "laplacian": Laplacian,
    "cosine": Cosine,
    "precomputed": Precomputed,
}


def as_kernel(kernel, what="kernel"):
    """A Kernel from a Kernel or one of the names 'linear', 'rbf', 'poly', 'laplacian',
    'cosine', 'precomputed' (default parameters).  Anything else is refused."""
    if isinstance(kernel, Kernel):
        return kernel
    if isinstance(kernel, str) and kernel in _NAMES:
        return _NAMES[kernel]()
    raise TypeError(
        f"{what}: expected an onlinelearn.kernels.Kernel or one of {sorted(_NAMES)}, got "
        f"{kernel!r}. An arbitrary function is not guaranteed to be a valid kernel; build it "
        "with the algebra of onlinelearn.kernels, or give its Gram matrix with 'precomputed'."
    )
