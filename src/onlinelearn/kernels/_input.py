"""The input check shared by the Gram program (:mod:`onlinelearn.kernels._program`) and the
explicit feature maps (:mod:`onlinelearn.kernels._feature_map`): below both, so that neither
imports the other."""

from __future__ import annotations

import numpy as np

from ..shell import validation as V

__all__ = ["check_input"]


def check_input(X, what="X"):
    """2-D finite float32/64 matrix, dense C-ordered or CSR (other dtypes go to float64); a
    sparse matrix's structure is checked first (an index out of range would be read out of
    bounds) and its duplicate entries are summed (:mod:`onlinelearn.shell.validation`)."""
    from sklearn.utils import check_array

    V.check_sparse_structure(X)
    X = check_array(
        X,
        accept_sparse="csr",
        dtype=[np.float64, np.float32],
        order="C",
        ensure_all_finite=True,
        input_name=what,
    )
    return V.canonical(X)
