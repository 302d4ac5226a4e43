"""The Vowpal Wabbit text reader (onlinelearn.io.vw): labels, importance weights, tags,
namespaces and their scales, exact numbers, chunks across blocks, compressed files, and a clear
error with the line number for a malformed line."""

from __future__ import annotations

import gzip
import io

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.feature_extraction import FeatureHasher

import onlinelearn.io.vw as vwio
from onlinelearn.io.vw import iter_vw_chunks, load_vw


def _hashed(rows, bits=10, dtype=np.float64):
    """FeatureHasher on lists of (string, value): the independent oracle of the columns."""
    return sp.csr_matrix(
        FeatureHasher(n_features=2**bits, input_type="pair", dtype=dtype).transform(rows)
    )


def _load(text: str, **kw):
    kw.setdefault("n_bits", 10)
    return load_vw(io.BytesIO(text.encode("utf-8")), **kw)


def test_header_label_importance_tag_and_namespaces():
    text = (
        "1 2.5 'first|a x y:2 |b z:0.5\n"
        "\n"
        "-1 |a x:3\n"
        "   \t\n"
        "0 tagged| plain w:-1.5 |a x\n"
        "3 0 |b:2 z q:0.25\n"
        "7 'q | n\n"
    )
    X, y, w = _load(text, return_weights=True)
    np.testing.assert_array_equal(y, [1, -1, 0, 3, 7])
    assert y.dtype == np.int64
    np.testing.assert_array_equal(w, [2.5, 1, 1, 0, 1])
    reader = iter_vw_chunks(io.BytesIO(text.encode()), chunk_size=2, n_bits=10)
    seen = [(len(y_), reader.sample_weight) for _, y_ in reader]
    np.testing.assert_array_equal(seen[0][1], [2.5, 1])  # the chunk's importance weights
    assert seen[1][1] is not None and seen[2][1] is None  # None when all are 1
    want = _hashed(
        [
            [("a^x", 1), ("a^y", 2), ("b^z", 0.5)],
            [("a^x", 3)],
            [("plain", 1), ("w", -1.5), ("a^x", 1)],
            [("b^z", 2), ("b^q", 0.5)],
            [("n", 1)],
        ]
    )
    assert X.shape == (5, 1024)
    assert abs(X - want).max() == 0
    # float labels for regression; NaN for a line without label
    X2, y2 = _load("0.25 |a x\n| y\n-3e2 |a z\n", label_dtype=None)
    np.testing.assert_array_equal(y2, [0.25, np.nan, -300.0])
    assert abs(X2 - _hashed([[("a^x", 1)], [("y", 1)], [("a^z", 1)]])).max() == 0


def test_zero_values_dropped_duplicates_summed_float32():
    X, _ = _load("1 |a x:0 y y:2 |b:0 z\n")
    assert abs(X - _hashed([[("a^y", 3)]])).max() == 0
    assert X.nnz == 1
    X32, _ = _load("1 |a x:0.1 y:1e-3\n", dtype=np.float32)
    assert X32.dtype == np.float32
    want = _hashed([[("a^x", 0.1), ("a^y", 1e-3)]], dtype=np.float32)
    assert abs(X32 - want).max() == 0


def test_numbers_outside_the_fast_path_are_pythons_float():
    tokens = ["0.1000000000000000000000001", "1e-30", "123456789012345678901", "+.5",
              "-7E+2", "4.9e-324", "1.7976931348623157e308"]  # fmt: skip
    line = "1 |a " + " ".join(f"f{k}:{t}" for k, t in enumerate(tokens)) + "\n"
    X, _ = _load(line, n_bits=18)
    want = _hashed([[(f"a^f{k}", float(t)) for k, t in enumerate(tokens)]], bits=18)
    assert (X != want).nnz == 0
    _, y, w = _load("0.30000000000000000000001 1e-40 |a x\n", label_dtype=None,
                    return_weights=True)  # fmt: skip
    assert y[0] == float("0.30000000000000000000001") and w[0] == 1e-40


def test_interactions():
    X, _ = _load("1 |a x:2 y |b z:3 |ab2 u\n", interactions=["ab", "aa"])
    base = [("a^x", 2), ("a^y", 1), ("b^z", 3), ("ab2^u", 1)]
    ab = [("a^x*b^z", 6), ("a^y*b^z", 3), ("ab2^u*b^z", 3)]  # "ab2" starts with a
    aa = [("a^x*a^x", 4), ("a^x*a^y", 2), ("a^x*ab2^u", 2), ("a^y*a^y", 1), ("a^y*ab2^u", 1),
          ("ab2^u*ab2^u", 1)]  # fmt: skip
    assert abs(X - _hashed([base + ab + aa])).max() == 0
    with pytest.raises(ValueError, match="two characters"):
        _load("1 |a x\n", interactions=["a"])


@pytest.mark.parametrize("prefetch", [False, True])
def test_chunks_across_tiny_blocks_equal_the_whole_file(monkeypatch, tmp_path, prefetch):
    rng = np.random.default_rng(3)
    lines = []
    for i in range(500):
        feats = " ".join(f"w{rng.integers(50)}:{rng.integers(1, 9)}" for _ in range(5))
        lines.append(f"{i % 3} |t {feats} |u k{rng.integers(5)}")
    text = "\n".join(lines)  # no final newline
    X, y = _load(text, n_bits=12, interactions=["tu"])
    path = tmp_path / "d.vw.gz"
    with gzip.open(path, "wt", encoding="utf-8") as f:
        f.write(text)
    monkeypatch.setattr(vwio, "BLOCK_SIZE", 97)  # many blocks, lines cut at block ends
    with iter_vw_chunks(path, chunk_size=64, n_bits=12, interactions="tu",
                        prefetch=prefetch, return_weights=True) as reader:  # fmt: skip
        chunks = list(reader)
    assert [c[0].shape[0] for c in chunks] == [64] * 7 + [52]
    assert reader.rows_read == 500 and reader.lines_read == 500
    assert abs(sp.vstack([c[0] for c in chunks]) - X).max() == 0
    np.testing.assert_array_equal(np.concatenate([c[1] for c in chunks]), y)
    np.testing.assert_array_equal(np.concatenate([c[2] for c in chunks]), np.ones(500))
    # a line longer than the block
    long_line = "1 |a " + " ".join(f"f{k}" for k in range(100)) + "\n"
    X_long, _ = _load(long_line + long_line)
    assert X_long.shape[0] == 2 and X_long.nnz > 50


@pytest.mark.parametrize(
    "line, match",
    [
        ("1 a b c", "no '|'"),
        ("1 2 3 |a x", "initial prediction"),
        ("1 2 3 4|a x", "more than a label"),
        ("abc |a x", "the label 'abc' is not a number"),
        ("1 x2 |a x", "importance weight 'x2' is not a number"),
        ("1 -2 |a x", "negative"),
        ("1 |a x:abc", "feature value 'abc' is not a number"),
        ("1 |a x:", "not followed by a value"),
        ("1 |a :3", "empty name"),
        ("1 |a:zz x", "namespace scale 'zz'"),
        ("1 |a x:nan", "not finite"),
        ("1 |a x:inf", "not finite"),
        ("1.5 |a x", "label 1.5 is not an integer"),
        ("|a x", "no label"),
        ("1 |a:1e300 x:1e300", "overflows"),
    ],
)
def test_malformed_line_names_its_line(line, match):
    text = "1 |a x\n\n-1 |b y\n" + line + "\n1 |a z\n"
    with pytest.raises(ValueError, match=match) as info:
        _load(text)
    assert str(info.value).startswith("<stream>: line 4: ")
    assert repr(line[:20]).strip("'") in str(info.value)  # the line is quoted


def test_error_in_a_later_block_after_good_chunks(monkeypatch):
    monkeypatch.setattr(vwio, "BLOCK_SIZE", 64)
    text = "".join(f"1 |a x{k}\n" for k in range(40)) + "1 |a x:?\n"
    reader = iter_vw_chunks(io.BytesIO(text.encode()), chunk_size=5, n_bits=8)
    rows = 0
    with pytest.raises(ValueError, match="line 41: the feature value '\\?'"):
        for X, _ in reader:
            rows += X.shape[0]
    assert rows <= 40  # every row returned is a whole good line


def test_parameters_checked():
    with pytest.raises(ValueError, match="n_bits"):
        _load("1 |a x\n", n_bits=31)
    with pytest.raises(ValueError, match="dtype"):
        _load("1 |a x\n", dtype=np.int32)
    with pytest.raises(ValueError, match="chunk_size"):
        iter_vw_chunks(io.BytesIO(b""), chunk_size=0)
    X, y = _load("")
    assert X.shape == (0, 1024) and y.shape == (0,)


@pytest.mark.parametrize("bits", [1, 8, 12, 17, 30])
def test_long_rows_with_repeats_equal_featurehasher(bits):
    """Rows of 0 to 400 features with repeated names (the row sort's short and radix paths,
    one to four 8-bit passes), against FeatureHasher; duplicates summed in the line's order."""
    rng = np.random.default_rng(bits)
    lines, rows = [], []
    for n in [0, 1, 31, 32, 33, 64, 400] * 3:
        names = [f"t{rng.integers(max(1, n // 2))}" for _ in range(n)]
        vals = rng.integers(-4, 5, size=n)
        lines.append("1 |a " + " ".join(f"{f}:{v}" for f, v in zip(names, vals, strict=True)))
        rows.append([(f"a^{f}", float(v)) for f, v in zip(names, vals, strict=True)])
    X, _ = _load("\n".join(lines), n_bits=bits)
    want = _hashed(rows, bits=bits)
    assert X.has_sorted_indices and X.shape == want.shape
    assert abs(X - want).max() == 0  # integer values: the sums are exact in any order
    for r in range(X.shape[0]):
        cols = X.indices[X.indptr[r] : X.indptr[r + 1]]
        assert np.all(np.diff(cols) > 0)  # sorted, one entry per column
