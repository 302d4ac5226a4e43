"""The compilation options and the floating-point tests that depend on them."""

from __future__ import annotations

import ast
import math
from pathlib import Path

import numpy as np
import pytest

import onlinelearn
from onlinelearn._core.config import FASTMATH, JIT_OPTIONS
from onlinelearn._core.fp import FMAX, finite

SRC = Path(onlinelearn.__file__).resolve().parent


def test_fastmath_leaves_nan_and_inf_visible():
    """No flag that lets LLVM assume values are finite (the core must see NaN/inf to report
    them): neither nnan, ninf nor the umbrella 'fast'."""
    assert not {"nnan", "ninf", "fast"} & set(FASTMATH)
    assert set(JIT_OPTIONS["fastmath"]) == set(FASTMATH)
    assert JIT_OPTIONS["nopython"]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_finite_is_isfinite_on_special_values(dtype):
    tiny = np.finfo(dtype).tiny
    big = np.finfo(dtype).max
    values = [0.0, -0.0, 1.0, -2.5, tiny, tiny / 4, big, -big, np.inf, -np.inf, np.nan]
    for v in np.array(values, dtype=dtype):
        assert finite(v) == bool(np.isfinite(v)), v
    assert finite(FMAX) and finite(-FMAX)
    assert not finite(math.inf) and not finite(-math.inf) and not finite(math.nan)


def _compiled_functions(tree):
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            for d in node.decorator_list:
                f = d.func if isinstance(d, ast.Call) else d
                if isinstance(f, ast.Name) and f.id in ("njit", "jit"):
                    yield node
                elif isinstance(f, ast.Attribute) and f.attr in ("njit", "jit"):
                    yield node


def test_no_compiled_function_calls_isfinite():
    """numba compiles isfinite(v) as "v - v is ordered", which the reassoc flag lets LLVM fold
    to True: in the Euclidean pass ``not math.isfinite(sq)`` never fired on a NaN.  Compiled
    code calls :func:`onlinelearn._core.fp.finite` instead."""
    offenders = []
    n_compiled = 0
    for path in sorted(SRC.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for fn in _compiled_functions(tree):
            n_compiled += 1
            for node in ast.walk(fn):
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "isfinite"
                ):
                    offenders.append(f"{path.relative_to(SRC)}:{node.lineno} ({fn.name})")
    assert n_compiled > 100  # the scan sees the compiled core
    assert not offenders, offenders


def test_finite_fires_where_isfinite_was_folded_away():
    """The smallest form of the miscompile: a sum of squares plus a constant, then the test.
    With ``math.isfinite`` in place of ``finite`` this function returned 0 for a NaN or inf
    entry (numba 0.68, LLVM reassociating (b^2 + s) - (b^2 + s) to 0)."""
    from onlinelearn._core.config import njit

    @njit(cache=False)
    def bad_sum(data, b):
        sq = 0.0
        for q in range(data.shape[0]):
            v = np.float64(data[q])
            sq += v * v
        sq = b * b + sq
        return 0 if finite(sq) else 1

    for dtype in (np.float64, np.float32):
        for bad in (np.nan, np.inf, -np.inf):
            assert bad_sum(np.array([1.0, bad, 2.0], dtype=dtype), 1.0) == 1
        assert bad_sum(np.array([1.0, 3.0], dtype=dtype), 1.0) == 0
    assert bad_sum(np.array([1e200, 1e200]), 0.0) == 1  # an overflowing sum is inf

