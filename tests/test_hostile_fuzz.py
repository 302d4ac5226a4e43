"""Property-based fuzzers (hypothesis) of the svmlight reader and of CSR structures (issue 12).

200 examples each by default, so that CI stays within its time budget; run longer with
``ONLINELEARN_FUZZ_EXAMPLES=5000 python -m pytest tests/test_hostile_fuzz.py``.
"""

from __future__ import annotations

import io
import os

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from onlinelearn import PassiveAggressiveClassifier, Perceptron
from onlinelearn.io import iter_svmlight_chunks
from onlinelearn.shell.validation import check_sparse_structure

N_EXAMPLES = int(os.environ.get("ONLINELEARN_FUZZ_EXAMPLES", "200"))
FUZZ = settings(
    max_examples=N_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# -- the svmlight reader -------------------------------------------------------------------

_numbers = st.one_of(
    st.integers(-5, 5).map(str),
    st.floats(allow_nan=True, allow_infinity=True, width=64).map(repr),
    st.sampled_from(["1e400", "-0", "0x1p3", "1_0", "", "nan", "+inf", "1.5e-320"]),
)
_index = st.one_of(
    st.integers(-2, 12).map(str),
    st.integers(2**31 - 2, 2**40).map(str),
    st.sampled_from(["qid", "a", "1.5", "", "0x3", "٣"]),
)
_token = st.one_of(
    st.tuples(_index, _numbers).map(lambda t: f"{t[0]}:{t[1]}"),
    st.sampled_from(["::", "1:", ":1", "#", "# comment", "x", "1:2:3"]),
)
_line = st.one_of(
    st.tuples(
        st.one_of(_numbers, st.sampled_from(["1,2", "a", ""])), st.lists(_token, max_size=6)
    ).map(lambda t: " ".join([t[0], *t[1]])),
    st.sampled_from(["", "   ", "# only a comment", "\t", "\r"]),
)
_file = st.lists(_line, min_size=0, max_size=12).map(lambda ls: "\n".join(ls).encode())


@FUZZ
@given(content=_file, chunk_size=st.integers(1, 5), n_features=st.integers(1, 12))
def test_svmlight_reader_never_returns_garbage(content, chunk_size, n_features):
    """Any bytes: either valid chunks (a sound CSR of the asked width, finite values, one row
    per data line) or a ValueError that names a line; an index beyond what the parser reads
    may raise OverflowError (turned into a one-line error by the command line)."""
    rows = 0
    try:
        reader = iter_svmlight_chunks(
            io.BytesIO(content), chunk_size=chunk_size, n_features=n_features
        )
        for X, y in reader:
            assert sp.isspmatrix_csr(X) and X.shape == (len(y), n_features)
            assert y.dtype == np.int64
            check_sparse_structure(X)
            assert np.isfinite(X.data).all()
            assert X.shape[0] <= chunk_size
            rows += X.shape[0]
    except ValueError as exc:
        assert "line" in str(exc)
        return
    except OverflowError:
        return
    data_lines = [
        ln for ln in content.split(b"\n") if ln.strip() and not ln.lstrip().startswith(b"#")
    ]
    assert rows == len(data_lines)


@FUZZ
@given(
    rows=st.lists(
        st.tuples(
            st.integers(0, 3),
            st.dictionaries(
                st.integers(1, 9), st.floats(-1e6, 1e6, allow_nan=False, width=32), max_size=5
            ),
        ),
        min_size=1,
        max_size=8,
    )
)
def test_svmlight_reader_reads_what_was_written(rows):
    lines = [
        " ".join([str(lab)] + [f"{j}:{v!r}" for j, v in sorted(feats.items()) if v != 0])
        for lab, feats in rows
    ]
    X, y = next(iter_svmlight_chunks(io.BytesIO("\n".join(lines).encode()), n_features=9))
    dense = np.zeros((len(rows), 9))
    for i, (_, feats) in enumerate(rows):
        for j, v in feats.items():
            dense[i, j - 1] = v
    np.testing.assert_array_equal(X.toarray(), dense)
    np.testing.assert_array_equal(y, [lab for lab, _ in rows])


# -- random CSR structures -----------------------------------------------------------------


@st.composite
def csr_structures(draw):
    n_rows = draw(st.integers(1, 5))
    n_cols = draw(st.integers(1, 8))
    nnz = draw(st.integers(0, 12))
    indices = draw(st.lists(st.integers(-3, n_cols + 3), min_size=nnz, max_size=nnz))
    if draw(st.booleans()):  # mostly sound pointers, sometimes anything
        cuts = sorted(draw(st.lists(st.integers(0, nnz), min_size=n_rows - 1, max_size=n_rows - 1)))
        indptr = [0, *cuts, nnz]
    else:
        indptr = draw(st.lists(st.integers(-2, nnz + 2), min_size=n_rows + 1, max_size=n_rows + 1))
    data = draw(st.lists(st.floats(-10, 10, width=32), min_size=nnz, max_size=nnz))
    itype = draw(st.sampled_from([np.int32, np.int64]))
    X = sp.csr_matrix((n_rows, n_cols))
    X.data = np.asarray(data, dtype=np.float64)
    X.indices = np.asarray(indices, dtype=itype)
    X.indptr = np.asarray(indptr, dtype=itype)
    return X


def _sound(X):
    p, idx = X.indptr, X.indices
    n_rows, n_cols = X.shape
    return (
        p[0] == 0
        and np.all(np.diff(p) >= 0)
        and p[-1] <= min(len(idx), len(X.data))
        and np.all((idx[: p[-1]] >= 0) & (idx[: p[-1]] < n_cols))
    )


def _dense(X):
    out = np.zeros(X.shape)
    for i in range(X.shape[0]):
        for q in range(X.indptr[i], X.indptr[i + 1]):
            out[i, X.indices[q]] += X.data[q]
    return out


def _state(est):
    meta, arrays = est._get_state()
    return repr(meta), {k: v.tobytes() for k, v in arrays.items()}


@pytest.fixture(scope="module")
def fitted():
    rng = np.random.default_rng(0)
    X = rng.random((30, 8))
    y = rng.integers(0, 3, 30)
    return [cls().fit(X, y) for cls in (Perceptron, PassiveAggressiveClassifier)]


@FUZZ
@given(X=csr_structures(), labels=st.lists(st.integers(0, 2), min_size=5, max_size=5))
def test_random_csr_is_refused_or_learned_exactly(fitted, X, labels):
    """A broken structure gives a ValueError and leaves the model bit-identical; a sound one
    gives the same model as its dense equivalent."""
    import copy

    y = np.asarray(labels[: X.shape[0]])
    for base in fitted:
        if X.shape[1] != base.n_features_in_:
            est = type(base)(random_state=0)
            if _sound(X):
                a = est.fit(X, y)
                b = type(base)(random_state=0).fit(_dense(X), y)
                np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-12, atol=1e-12)
            else:
                with pytest.raises(ValueError, match="broken CSR matrix"):
                    est.fit(X, y)
            continue
        est = copy.deepcopy(base)
        before = _state(est)
        if _sound(X):
            est.partial_fit(X, y)
            ref = copy.deepcopy(base).partial_fit(_dense(X), y)
            np.testing.assert_allclose(est.coef_, ref.coef_, rtol=1e-12, atol=1e-12)
            np.testing.assert_array_equal(est.predict(X), ref.predict(_dense(X)))
        else:
            with pytest.raises(ValueError, match="broken CSR matrix"):
                est.partial_fit(X, y)
            with pytest.raises(ValueError, match="broken CSR matrix"):
                est.predict(X)
            assert _state(est) == before


@pytest.mark.parametrize("content", [b"0 1: ::", b"1 2:0x1p3 3:\n", b"0 1:1e999999 ::"])
def test_svmlight_reader_examples_found_by_the_fuzzer(content):
    with pytest.raises(ValueError, match="line 1"):
        list(iter_svmlight_chunks(io.BytesIO(content), n_features=3))
