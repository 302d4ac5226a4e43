"""The compiled svmlight parser against scikit-learn's reader and Python's float().

* every shared svmlight file: a bounded prefix of each (the full files are compared by
  ``benchmarks/svmlight_check.py``);
* a generated corpus (hypothesis): numbers in many spellings, comments, blank lines, CR, tabs,
  ``qid:``, multi-label labels;
* values exactly ``float(token)``, also outside the kernel's fast path;
* errors with line numbers, an index beyond int32, blocks cut in the middle of a line.
"""

from __future__ import annotations

import bz2
import gzip
import io
import itertools

import numpy as np
import pytest
import scipy.sparse as sp
from _data import require_shared_file
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_svmlight_file

from onlinelearn._core.svmlight import (
    BAD_BUFFER,
    OK,
    PAD,
    UNSORTED,
    block_room,
    parse_block,
)
from onlinelearn.datasets import SHARED_SVMLIGHT_FILES
from onlinelearn.io import _blocks as blocks_mod
from onlinelearn.io import iter_svmlight_chunks, load_svmlight

SHARED_SVMLIGHT = list(SHARED_SVMLIGHT_FILES)

#: bytes of each shared file compared in the suite (whole lines)
PREFIX = 1 << 19


def _same(ours, theirs, multilabel=False):
    X, y = ours
    X2, y2 = theirs
    X2 = sp.csr_matrix(X2)
    assert X.shape == X2.shape and X.dtype == X2.dtype
    np.testing.assert_array_equal(X.indptr, X2.indptr)
    np.testing.assert_array_equal(X.indices, X2.indices)
    # bit for bit (and NaN where NaN)
    np.testing.assert_array_equal(X.data.view(np.uint8), X2.data.view(np.uint8))
    if multilabel:
        assert list(y) == list(y2)
    else:
        np.testing.assert_array_equal(y, y2)


@pytest.mark.parametrize(
    "rel,d,multilabel", SHARED_SVMLIGHT, ids=[r for r, _, _ in SHARED_SVMLIGHT]
)
def test_shared_files_prefix_equal_scikit_learn(rel, d, multilabel, tmp_path):
    path = require_shared_file(rel)
    with bz2.open(path, "rb") as f:
        head = f.read(PREFIX)
    head = head[: head.rfind(b"\n") + 1]
    p = tmp_path / "head.svm"
    p.write_bytes(head)
    for dtype in (np.float32, np.float64):
        ours = load_svmlight(p, n_features=d, dtype=dtype, label_dtype=None, multilabel=multilabel)
        theirs = load_svmlight_file(str(p), n_features=d, dtype=dtype, zero_based=False,
                                    multilabel=multilabel)  # fmt: skip
        _same(ours, theirs, multilabel)
    # the chunked reader over the compressed file gives the same rows
    if not multilabel:
        k = min(97, theirs[0].shape[0])
        with iter_svmlight_chunks(path, chunk_size=k, n_features=d, label_dtype=None) as r:
            X, y = next(r)
        np.testing.assert_array_equal(X.toarray(), theirs[0][:k].toarray())
        np.testing.assert_array_equal(y, theirs[1][:k])


# -- numbers ----------------------------------------------------------------------------------

TOKENS = [
    "0", "-0", "+0", "1", "-1", "+1.5", "0.1", ".5", "5.", "-.5", "1e5", "1E-5", "1e+05",
    "2.5e-3", "123456789012345678", "1234567890123456789", "9007199254740993",
    "0.1234567890123456789", "1e22", "1e23", "1e-22", "1e-23", "1e308", "1e-320", "4.9e-324",
    "1e400", "0.000000000000000000000000001", "00012.5000", "3.14159265358979323846",
    "nan", "NaN", "-inf", "inf", "Infinity", "1_000",
]  # fmt: skip


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_values_are_python_float_of_each_token(tmp_path, dtype):
    lines = [f"1 {j + 1}:{tok}" for j, tok in enumerate(TOKENS)]
    p = tmp_path / "t.svm"
    p.write_text("\n".join(lines) + "\n")
    X, _ = load_svmlight(p, n_features=len(TOKENS), dtype=dtype, allow_nonfinite=True)
    with np.errstate(over="ignore"):
        want = np.array([float(t) for t in TOKENS]).astype(dtype)
    assert X.nnz == len(TOKENS)  # one value per line, explicit zeros kept (as scikit-learn)
    np.testing.assert_array_equal(X.data.view(np.uint8), want.view(np.uint8))  # -0.0 too
    # and scikit-learn agrees
    X2, _ = load_svmlight_file(str(p), n_features=len(TOKENS), dtype=dtype, zero_based=False)
    np.testing.assert_array_equal(X.data.view(np.uint8), X2.data.view(np.uint8))


_digits = st.text("0123456789", min_size=1, max_size=12)
_number = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False, width=64).map(repr),
    st.floats(allow_nan=False, allow_infinity=False, width=32).map(lambda v: f"{v:.6g}"),
    st.integers(-(10**20), 10**20).map(str),
    st.tuples(st.sampled_from(["", "-", "+"]), _digits, _digits, st.integers(-30, 30)).map(
        lambda t: f"{t[0]}{t[1]}.{t[2]}e{t[3]}"
    ),
    st.tuples(st.sampled_from(["", "-"]), _digits).map(lambda t: f"{t[0]}0.{t[1]}"),
)
_space = st.sampled_from([" ", "  ", "\t", " \t "])


@st.composite
def _line(draw, multilabel):
    if draw(st.integers(0, 9)) == 0:
        return draw(st.sampled_from(["", "   ", "# a comment", " # x:1"]))
    if multilabel:
        labs = draw(st.lists(st.integers(0, 30), max_size=4))
        label = ",".join(map(str, labs))
    else:
        label = draw(st.sampled_from(["1", "-1", "+1", "3", "2.0", "1e0", "-2.5"]))
    idx = sorted(draw(st.sets(st.integers(1, 60), max_size=8)))
    parts = [label] if label else []
    if draw(st.booleans()) and not multilabel:
        parts.append(f"qid:{draw(st.integers(0, 10**6))}")
    parts += [f"{i}:{draw(_number)}" for i in idx]
    if not parts:
        parts = ["1"]
    text = draw(_space).join(parts)
    if draw(st.integers(0, 4)) == 0:
        text += draw(st.sampled_from([" # comment 3:4", "#", "\r", " "]))
    return text


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_line(False), min_size=1, max_size=25), st.booleans())
def test_generated_corpus_equals_scikit_learn(lines, final_newline):
    data = "\n".join(lines) + ("\n" if final_newline else "")
    theirs = load_svmlight_file(io.BytesIO(data.encode()), n_features=60, zero_based=False,
                                query_id=True)  # fmt: skip
    ours = load_svmlight(io.BytesIO(data.encode()), n_features=60, label_dtype=None,
                         query_id=True, allow_nonfinite=True)  # fmt: skip
    _same(ours[:2], theirs[:2])
    np.testing.assert_array_equal(ours[2], theirs[2])


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_line(True), min_size=1, max_size=25))
def test_generated_multilabel_corpus_equals_scikit_learn(lines):
    data = ("\n".join(lines) + "\n").encode()
    theirs = load_svmlight_file(io.BytesIO(data), n_features=60, zero_based=False, multilabel=True)
    ours = load_svmlight(io.BytesIO(data), n_features=60, multilabel=True, allow_nonfinite=True)
    _same(ours, theirs, multilabel=True)


def _opts():
    return blocks_mod._Options("<test>", 40, np.float64, False, np.int64, False)


@pytest.mark.parametrize("block_size", [1, 7, 64, 1 << 20])
def test_blocks_cut_anywhere_give_the_same_rows(block_size, monkeypatch):
    rng = np.random.default_rng(0)
    lines = []
    for _ in range(120):
        idx = sorted(rng.choice(np.arange(1, 40), 5, replace=False))
        lines.append(f"{rng.integers(0, 3)} " + " ".join(f"{j}:{rng.normal():.5g}" for j in idx))
    lines[5] = "# a comment"
    lines[50] = ""
    data = ("\n".join(lines)).encode()  # no final newline
    monkeypatch.setattr(blocks_mod, "BLOCK_SIZE", block_size)
    n_blocks = len(list(blocks_mod._iter_blocks(io.BytesIO(data), _opts())))
    assert n_blocks >= min(len(data) // (2 * block_size), 100)  # the blocks are that small
    X, y = load_svmlight(io.BytesIO(data), n_features=40)
    X2, y2 = load_svmlight_file(io.BytesIO(data), n_features=40, zero_based=False)
    _same((X, y.astype(np.float64)), (X2, y2))
    chunks = list(iter_svmlight_chunks(io.BytesIO(data), chunk_size=13, n_features=40))
    assert [len(c[1]) for c in chunks] == [13] * 9 + [1]
    np.testing.assert_array_equal(sp.vstack([c[0] for c in chunks]).toarray(), X2.toarray())


def _kernel(text: bytes, dtype=np.float64, pad=PAD, room=None):
    n = len(text)
    # digits after the end (not read); writable, as the reader's buffer (the same compilation)
    buf = np.frombuffer(bytearray(text + b"7" * pad), dtype=np.uint8)
    room = block_room(n) if room is None else room
    data = np.full(room + 2, -7.0, dtype=dtype)
    indices = np.full(room + 2, -7, dtype=np.int32)
    return parse_block(buf, n, False, False, False, data, indices, 2), data


def test_block_parse_reports_bad_line_offsets():
    status, offset = _kernel(b"1 1:1\n\n2 3:1 2:1\n")[0][:2]
    assert status == UNSORTED and offset == 7
    # a block must end with its newline (the reader appends one), have room for the 8-byte
    # reads after it and for the most values it can hold: refused otherwise, nothing written
    for text, pad, room in (
        (b"1 1:1", PAD, None),
        (b"1 1:1\n", PAD - 1, None),
        (b"1 1:1\n", PAD, 2),
    ):
        out, data = _kernel(text, pad=pad, room=room)
        assert out[0] == BAD_BUFFER and (data == -7).all()


def test_block_room_bounds_the_densest_lines():
    for text in (b"1:1\n", b"1 1:1 2:2 3:\n", b"0 1:1\n" * 9, b" 1: 2: 3: 4:\n"):
        n_values = text.count(b":")
        assert n_values <= block_room(len(text))
    out, data = _kernel(b"2 1:1 2:2 3:3\n" * 40)  # rows beyond the first capacity: grown
    assert out[0] == OK and out[2] == 40 and out[3] == 2 + 120 and out[4].shape == (41,)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_block_is_written_after_the_offset_in_the_value_dtype(dtype):
    text = b"3 2:0.5 7:1e400\n# c\n\n1 qid:4 1:-2.25 9:0.1\n"
    out, data = _kernel(text, dtype)
    status, _, n_lines, nnz, indptr, labels, _, row_line, slow, qid, has_qid, max_index = out
    assert status == OK and n_lines == 4 and nnz == 6 and max_index == 8
    np.testing.assert_array_equal(indptr, [2, 4, 6])
    np.testing.assert_array_equal(labels, [3.0, 1.0])
    np.testing.assert_array_equal(row_line, [0, 3])
    np.testing.assert_array_equal(qid[has_qid], [4])
    assert (data[:2] == -7).all()  # before the offset: untouched
    # 1e400 is left to Python (position, token's byte range) with NaN in its place
    assert slow.tolist() == [[3, 10, 15]] and np.isnan(data[3])
    want = np.array([0.5, -2.25, 0.1]).astype(dtype)
    np.testing.assert_array_equal(data[[2, 4, 5]], want)


def test_digit_runs_of_every_length_and_leading_zeros(tmp_path):
    """The kernel reads digits 8 at a time: runs of 1 to 21 digits, before and after the point,
    with leading zeros (also in an index of more than 18 digits)."""
    rng = np.random.default_rng(3)
    lines = []
    for k in range(1, 22):
        digits = "".join(rng.choice(list("0123456789"), k))
        lines.append(f"{k} {'0' * k}{k}:{digits} 30:{digits}.{digits[::-1]} 31:.{digits}e-{k}")
    lines.append("1 " + "0" * 25 + "7:1 0000000000000000009:00000000000000000000002.5")
    p = tmp_path / "digits.svm"
    p.write_text("\n".join(lines) + "\n")
    for dtype in (np.float64, np.float32):
        ours = load_svmlight(p, n_features=31, dtype=dtype, label_dtype=None)
        theirs = load_svmlight_file(str(p), n_features=31, dtype=dtype, zero_based=False)
        _same(ours, theirs)
    X = ours[0]
    assert X[21, 6] == 1 and X[21, 8] == np.float32(2.5)
    p.write_text("1 12345678901234567890:1\n")
    with pytest.raises(ValueError, match=r"line 1: feature index 12345678901234567890 is beyond"):
        load_svmlight(p)


# -- errors -----------------------------------------------------------------------------------


def test_index_beyond_int32_is_a_one_line_error(tmp_path):
    p = tmp_path / "big.svm"
    p.write_text("1 1:1\n1 2:1 3000000000:1\n")
    with pytest.raises(ValueError, match=r"line 2: feature index 3000000000 is beyond") as info:
        load_svmlight(p)
    assert "\n" not in str(info.value)
    p.write_text("1 99999999999999999999999:1\n")
    with pytest.raises(ValueError, match=r"line 1: feature index \d+ is beyond"):
        list(iter_svmlight_chunks(p, n_features=10))


@pytest.mark.parametrize(
    "bad,reason",
    [
        ("1 2:1 qid:3", "feature index in 'qid:3' is not an integer"),
        ("1 2:", "value in '2:' is not a number"),
        ("1 2:1:3", "value in '2:1:3' is not a number"),
        ("1,a 2:1", "label '1,a' is a list of labels"),
    ],
)
def test_more_malformed_lines_name_the_line(tmp_path, bad, reason):
    p = tmp_path / "bad.svm"
    p.write_text("\n".join(["1 1:1", "# c", bad, "1 1:1"]) + "\n")
    with pytest.raises(ValueError, match=rf"line 3: {reason}"):
        load_svmlight(p, n_features=5)
    with pytest.raises(ValueError):  # scikit-learn rejects it too
        load_svmlight_file(str(p), n_features=5, zero_based=False)


def test_qid_is_read_only_when_asked_as_scikit_learn(tmp_path):
    p = tmp_path / "q.svm"
    p.write_text("1 qid:x 2:1\n2 qid:7 1:1\n")
    X, y = load_svmlight(p, n_features=2)  # a bad qid is skipped unread
    X2, y2 = load_svmlight_file(str(p), n_features=2, zero_based=False)
    _same((X, y.astype(float)), (X2, y2))
    with pytest.raises(ValueError, match=r"line 1: qid in 'qid:x' is not an integer"):
        load_svmlight(p, n_features=2, query_id=True)
    with pytest.raises(ValueError):
        load_svmlight_file(str(p), n_features=2, zero_based=False, query_id=True)


def test_multilabel_lines_without_labels_and_bad_lists(tmp_path):
    p = tmp_path / "ml.svm"
    p.write_text("1,3 1:1\n 2:1\n3,1,2\n")
    X, y = load_svmlight(p, n_features=3, multilabel=True)
    assert y == [(1.0, 3.0), (), (1.0, 2.0, 3.0)]
    X2, y2 = load_svmlight_file(str(p), n_features=3, multilabel=True, zero_based=False)
    _same((X, y), (X2, y2), multilabel=True)
    p.write_text("1,x 1:1\n")
    with pytest.raises(ValueError, match=r"line 1: label '1,x' is not a list of numbers"):
        load_svmlight(p, n_features=3, multilabel=True)


def test_truncated_compressed_file_is_a_clear_error(tmp_path):
    lines = [f"{i % 3} {1 + i % 7}:0.5" for i in range(4000)]
    packed = bz2.compress(("\n".join(lines) + "\n").encode())
    p = tmp_path / "cut.svm.bz2"
    p.write_bytes(packed[: len(packed) // 2])
    with pytest.raises(ValueError, match=r"cut.svm.bz2: the compressed data is corrupted or trunc"):
        load_svmlight(p, n_features=10)
    bad = bytearray(gzip.compress(("\n".join(lines) + "\n").encode()))
    bad[len(bad) // 2 : len(bad) // 2 + 40] = b"x" * 40
    p = tmp_path / "bad.svm.gz"
    p.write_bytes(bytes(bad))
    with pytest.raises(ValueError, match=r"bad.svm.gz: the compressed data is corrupted"):
        list(iter_svmlight_chunks(p, n_features=10))


def test_label_forms_and_itertools_of_chunks(tmp_path):
    p = tmp_path / "l.svm"
    p.write_text("+1 1:1\n-1.0 2:1\n1e0 3:1\n")
    X, y = load_svmlight(p, n_features=3)
    assert y.tolist() == [1, -1, 1]
    rows = list(itertools.chain.from_iterable(y for _, y in iter_svmlight_chunks(p, 1, 3)))
    assert rows == [1, -1, 1]
