"""Tests of onlinelearn.io: chunked svmlight reading, compression, line-numbered errors, writing."""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import re

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_svmlight_file

from onlinelearn.io import (
    dump_svmlight,
    iter_svmlight_chunks,
    load_svmlight,
    open_maybe_compressed,
    svmlight_n_features,
)


def _random_data(n=53, d=20, n_classes=3, seed=0, density=0.3):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=density, format="csr", random_state=rng, dtype=np.float64)
    X.data = np.round(X.data * 10 - 5, 3)
    X.data[X.data == 0] = 1.5
    y = rng.integers(1, n_classes + 1, size=n)
    return X, y


def _write_lines(path, lines, opener=open):
    with opener(path, "wb") as f:
        f.write("".join(line + "\n" for line in lines).encode())
    return path


SMALL = [
    "# a comment line",
    "+1 1:0.5 3:2",
    "",
    "-1 2:1.0  # trailing comment",
    "1.0 4:-3e-1",
    "   ",
    "-1",
]


def test_small_file_comments_blank_lines_and_label_forms(tmp_path):
    p = _write_lines(tmp_path / "small.svm", SMALL)
    X, y = load_svmlight(p, n_features=5)
    np.testing.assert_array_equal(y, [1, -1, 1, -1])
    assert y.dtype == np.int64
    expected = np.zeros((4, 5))
    expected[0, [0, 2]] = [0.5, 2.0]
    expected[1, 1] = 1.0
    expected[2, 3] = -0.3
    np.testing.assert_array_equal(X.toarray(), expected)
    assert sp.isspmatrix_csr(X)


@pytest.mark.parametrize("chunk_size", [1, 2, 7, 10, 52, 53, 54, 1000])
def test_chunks_equal_whole_file(tmp_path, chunk_size):
    X, y = _random_data()
    p = tmp_path / "data.svm"
    dump_svmlight(X, y, p)
    Xs, ys = zip(*iter_svmlight_chunks(p, chunk_size=chunk_size, n_features=20), strict=True)
    sizes = [len(v) for v in ys]
    # every chunk is full except possibly the last, and none is empty
    assert all(s == chunk_size for s in sizes[:-1]) and 0 < sizes[-1] <= chunk_size
    assert sum(sizes) == 53
    assert all(x.shape[1] == 20 for x in Xs)
    np.testing.assert_array_equal(sp.vstack(Xs).toarray(), X.toarray())
    np.testing.assert_array_equal(np.concatenate(ys), y)
    X2, y2 = load_svmlight_file(str(p), n_features=20, zero_based=False)
    np.testing.assert_array_equal(sp.vstack(Xs).toarray(), X2.toarray())


def test_chunk_boundaries_skip_blank_and_comment_lines(tmp_path):
    lines = []
    for i in range(10):
        lines += ["# comment", "", f"{i % 3} {i + 1}:1"]
    p = _write_lines(tmp_path / "c.svm", lines)
    reader = iter_svmlight_chunks(p, chunk_size=4, n_features=10)
    chunks = list(reader)
    assert [len(y) for _, y in chunks] == [4, 4, 2]
    X = sp.vstack([x for x, _ in chunks]).toarray()
    np.testing.assert_array_equal(X, np.eye(10))
    assert reader.rows_read == 10
    assert reader.lines_read == 30


def test_trailing_blank_line_and_no_final_newline(tmp_path):
    p = tmp_path / "t.svm"
    p.write_bytes(b"1 1:1\n-1 2:1\n\n")
    X, y = load_svmlight(p, n_features=2)
    assert X.shape == (2, 2)
    p.write_bytes(b"1 1:1\n-1 2:1")
    X, y = load_svmlight(p, n_features=2)
    assert X.shape == (2, 2) and list(y) == [1, -1]


def test_crlf_line_endings(tmp_path):
    p = tmp_path / "crlf.svm"
    p.write_bytes(b"1 1:1\r\n2 2:3\r\n")
    X, y = load_svmlight(p, n_features=2)
    np.testing.assert_array_equal(X.toarray(), [[1, 0], [0, 3]])


@pytest.mark.parametrize(
    ("suffix", "opener"),
    [(".gz", gzip.open), (".bz2", bz2.open), (".xz", lzma.open), (".data", gzip.open)],
)
def test_compressed_files_are_recognised_by_content(tmp_path, suffix, opener):
    X, y = _random_data(n=30)
    plain = tmp_path / "plain.svm"
    dump_svmlight(X, y, plain)
    packed = tmp_path / ("packed" + suffix)  # ".data": gzip content under a neutral name
    with opener(packed, "wb") as f:
        f.write(plain.read_bytes())
    for chunk_size in (7, 100):
        parts = list(iter_svmlight_chunks(packed, chunk_size=chunk_size, n_features=20))
        np.testing.assert_array_equal(sp.vstack([a for a, _ in parts]).toarray(), X.toarray())
    with open_maybe_compressed(packed) as f:
        assert f.read() == plain.read_bytes()


@pytest.mark.parametrize("suffix", [".svm", ".svm.gz", ".svm.bz2", ".svm.xz"])
def test_dump_then_load_round_trip(tmp_path, suffix):
    X, y = _random_data(n=25, d=12)
    p = tmp_path / ("out" + suffix)
    dump_svmlight(X, y, p, comment="written by a test")
    if suffix != ".svm":
        assert p.read_bytes()[:2] in (b"\x1f\x8b", b"BZ", b"\xfd7")
    X2, y2 = load_svmlight(p, n_features=12)
    np.testing.assert_array_equal(X2.toarray(), X.toarray())
    np.testing.assert_array_equal(y2, y)
    first = open_maybe_compressed(p).read().decode()
    # 1-based indices and integer labels without a decimal point
    data_line = next(line for line in first.splitlines() if line and not line.startswith("#"))
    assert re.fullmatch(r"-?\d+( \d+:\S+)*", data_line)


def test_streaming_more_rows_than_a_chunk_reports_progress(tmp_path):
    X, y = _random_data(n=2500, d=50, density=0.1, seed=3)
    p = tmp_path / "big.svm.bz2"
    dump_svmlight(X, y, p)
    reader = iter_svmlight_chunks(p, chunk_size=300, n_features=50)
    assert reader.total_bytes == p.stat().st_size
    n_chunks = 0
    positions = []
    for Xc, _ in reader:
        n_chunks += 1
        assert Xc.shape[0] <= 300
        positions.append(reader.bytes_read)
    assert n_chunks == 9
    assert positions == sorted(positions)
    assert positions[-1] == reader.total_bytes
    assert reader.rows_read == 2500


def test_n_features_none_scans_the_file(tmp_path):
    p = _write_lines(tmp_path / "a.svm", ["1 2:1", "2 9:1", "1 4:1"])
    assert svmlight_n_features(p) == 9
    chunks = list(iter_svmlight_chunks(p, chunk_size=1))
    assert [x.shape for x, _ in chunks] == [(1, 9)] * 3
    X, _ = load_svmlight(p)
    assert X.shape == (3, 9)
    assert X[1, 8] == 1.0


def test_n_features_larger_than_highest_index(tmp_path):
    p = _write_lines(tmp_path / "a.svm", ["1 2:1", "2 3:1"])
    X, _ = load_svmlight(p, n_features=123)
    assert X.shape == (2, 123)


def test_file_object_source(tmp_path):
    data = b"1 1:1\n2 2:2\n3 3:3\n"
    chunks = list(iter_svmlight_chunks(io.BytesIO(data), chunk_size=2, n_features=3))
    assert [len(y) for _, y in chunks] == [2, 1]
    chunks = list(iter_svmlight_chunks(io.BytesIO(data), chunk_size=2))
    assert chunks[0][0].shape == (2, 3)


def test_empty_file(tmp_path):
    p = tmp_path / "empty.svm"
    p.write_bytes(b"# only a comment\n\n")
    assert list(iter_svmlight_chunks(p, n_features=4)) == []
    X, y = load_svmlight(p, n_features=4)
    assert X.shape == (0, 4) and y.shape == (0,)


def test_float_labels_kept_with_label_dtype_none(tmp_path):
    p = _write_lines(tmp_path / "r.svm", ["0.5 1:1", "-2.25 2:1"])
    _, y = load_svmlight(p, n_features=2, label_dtype=None)
    np.testing.assert_array_equal(y, [0.5, -2.25])


def test_zero_based_option(tmp_path):
    p = _write_lines(tmp_path / "z.svm", ["1 0:1 2:5"])
    X, _ = load_svmlight(p, n_features=3, zero_based=True)
    np.testing.assert_array_equal(X.toarray(), [[1, 0, 5]])
    with pytest.raises(ValueError, match="zero_based must be True or False"):
        iter_svmlight_chunks(p, n_features=3, zero_based="auto")


def test_missing_file():
    with pytest.raises(FileNotFoundError):
        load_svmlight("no/such/file.svm", n_features=3)


def test_invalid_arguments(tmp_path):
    p = _write_lines(tmp_path / "a.svm", ["1 1:1"])
    with pytest.raises(ValueError, match="chunk_size"):
        iter_svmlight_chunks(p, chunk_size=0, n_features=2)
    with pytest.raises(ValueError, match="n_features"):
        iter_svmlight_chunks(p, n_features=0)


# -- malformed lines ---------------------------------------------------------------------------

GOOD = [f"{1 + i % 3} {1 + i % 5}:1 {6 + i % 4}:0.5" for i in range(40)]

BAD_LINES = [
    ("1 3:abc", "not a number"),
    ("abc 1:1", "label 'abc' is not a number"),
    ("1 0:1", "below 1"),
    ("1 -2:1", "below 1"),
    ("1 4:1 2:1", "not strictly increasing"),
    ("1 2:1 2:1", "not strictly increasing"),
    ("1 2 3", "not of the form index:value"),
    ("1 2:1 junk", "not of the form index:value"),
    ("1 x:1", "not an integer"),
    ("1 11:1", "larger than n_features=10"),
    ("1,2 1:1", "list of labels"),
    ("1.5 1:1", "label 1.5 is not an integer"),
    ("1 2:nan", "non-finite"),
    ("1 2:inf", "non-finite"),
]


@pytest.mark.parametrize(("bad", "reason"), BAD_LINES)
@pytest.mark.parametrize("chunk_size", [3, 10000])
def test_malformed_line_error_names_file_and_line(tmp_path, bad, reason, chunk_size):
    # line 7 of the file is bad; line 1 is a comment and line 4 is blank, so it is the 5th example
    lines = ["# header comment", GOOD[0], GOOD[1], "", GOOD[2], GOOD[3], bad, *GOOD[4:20]]
    p = _write_lines(tmp_path / "bad.svm", lines)
    with pytest.raises(ValueError) as info:
        for _ in iter_svmlight_chunks(p, chunk_size=chunk_size, n_features=10):
            pass
    msg = str(info.value)
    assert msg.startswith(f"{p}: line 7: "), msg
    assert reason in msg
    assert "line 17" not in msg


@pytest.mark.parametrize("position", [1, 2, 25, 40])
def test_malformed_line_number_in_later_chunks_and_compressed(tmp_path, position):
    lines = list(GOOD)
    lines[position - 1] = "2 5:1 3:1"
    p = _write_lines(tmp_path / "bad.svm.bz2", lines, opener=bz2.open)
    with pytest.raises(ValueError, match=rf": line {position}: feature indices are not strictly"):
        load_svmlight(p, n_features=10, chunk_size=8)
    with pytest.raises(ValueError, match=rf": line {position}: "):
        load_svmlight(p, chunk_size=8)  # n_features=None path


def test_malformed_line_found_by_the_feature_count_scan(tmp_path):
    p = _write_lines(tmp_path / "bad.svm", [*GOOD[:9], "3 7:oops", *GOOD[9:]])
    with pytest.raises(ValueError, match=r": line 10: value in '7:oops' is not a number"):
        iter_svmlight_chunks(p)  # the n_features scan happens at construction
    with pytest.raises(ValueError, match=r"line 10"):
        svmlight_n_features(p, chunk_size=4)


def test_error_message_quotes_the_line(tmp_path):
    p = _write_lines(tmp_path / "bad.svm", ["1 1:1", "1 2:zzz 3:1"])
    with pytest.raises(ValueError, match=r"\(line: '1 2:zzz 3:1'\)"):
        load_svmlight(p, n_features=3)


def test_nonfinite_allowed_on_request(tmp_path):
    p = _write_lines(tmp_path / "nan.svm", ["1 1:nan 2:1"])
    X, _ = load_svmlight(p, n_features=2, allow_nonfinite=True)
    assert np.isnan(X[0, 0])


def test_prefetch_gives_the_same_chunks_and_errors_and_stops_its_thread(tmp_path, monkeypatch):
    import threading

    from onlinelearn.io import _blocks as blocks_mod

    monkeypatch.setattr(blocks_mod, "BLOCK_SIZE", 512)  # many blocks, so the thread runs ahead
    X, y = _random_data(n=700, d=30, density=0.2, seed=5)
    p = tmp_path / "pf.svm.gz"
    dump_svmlight(X, y, p)
    plain = list(iter_svmlight_chunks(p, chunk_size=64, n_features=30))
    ahead = list(iter_svmlight_chunks(p, chunk_size=64, n_features=30, prefetch=True))
    assert len(ahead) == len(plain) == 11
    for (Xa, ya), (Xb, yb) in zip(plain, ahead, strict=True):
        assert (Xa != Xb).nnz == 0
        np.testing.assert_array_equal(ya, yb)
    before = threading.active_count()
    # closed early: the thread stops before the file is closed
    with iter_svmlight_chunks(p, chunk_size=64, n_features=30, prefetch=True) as reader:
        next(reader)
    assert reader._file.closed and threading.active_count() == before
    # a bad line far into the file: the same error, after the same good chunks
    lines = [f"{i % 3} {1 + i % 7}:0.5" for i in range(600)]
    lines[450] = "1 3:x"
    q = _write_lines(tmp_path / "bad.svm", lines)
    for prefetch in (False, True):
        got = []
        with pytest.raises(ValueError, match=r"bad.svm: line 451: value in '3:x' is not a"):
            for Xc, _ in iter_svmlight_chunks(q, chunk_size=100, n_features=8, prefetch=prefetch):
                got.append(Xc.shape[0])
        assert got == [100] * 4
    assert threading.active_count() == before


@pytest.mark.parametrize("source", ["path", "bytesio", "gzip"])
def test_whole_file_arrays_grow_past_a_sparse_start_and_keep_no_spare_room(
    tmp_path, monkeypatch, source
):
    from onlinelearn.io import _blocks as blocks_mod

    monkeypatch.setattr(blocks_mod, "BLOCK_SIZE", 256)
    # sparse first blocks, then dense lines: the size estimated from the first block is short
    lines = [f"{i % 2} {1 + i % 5}:1" for i in range(60)]
    lines += [
        f"{i % 2} " + " ".join(f"{j}:{(i * j) % 7 - 3}" for j in range(1, 40)) for i in range(30)
    ]
    p = _write_lines(tmp_path / "grow.svm", lines)
    if source == "gzip":
        p = _write_lines(tmp_path / "grow.svm.gz", lines, gzip.open)
    src = io.BytesIO(p.read_bytes()) if source == "bytesio" else p
    for dtype in (np.float32, np.float64):
        if source == "bytesio":
            src.seek(0)
        X, y = load_svmlight(src, n_features=40, dtype=dtype)
        X2, y2 = load_svmlight_file(str(p), n_features=40, dtype=dtype, zero_based=False)
        np.testing.assert_array_equal(X.indptr, X2.indptr)
        np.testing.assert_array_equal(X.indices, X2.indices)
        np.testing.assert_array_equal(X.data, X2.data)
        np.testing.assert_array_equal(y, y2)
        for a in (X.data, X.indices):  # the room for a dense block was given back
            assert (a.base if a.base is not None else a).shape == (X.nnz,)


def test_compressed_file_objects_are_binary_streams(tmp_path):
    """gzip/bz2 file objects have an int ``mode``; they are binary and must be read, while a
    text-mode file object is refused with the clear message."""
    import bz2
    import gzip

    from onlinelearn.io import iter_svmlight_chunks

    lines = b"1 1:0.5\n2 2:1\n"
    for opener, name in ((gzip.open, "d.gz"), (bz2.open, "d.bz2")):
        path = tmp_path / name
        with opener(path, "wb") as f:
            f.write(lines)
        with opener(path, "rb") as f, iter_svmlight_chunks(f, n_features=2) as reader:
            ((X, y),) = list(reader)
        np.testing.assert_array_equal(X.toarray(), [[0.5, 0.0], [0.0, 1.0]])
        np.testing.assert_array_equal(y, [1, 2])
    text = tmp_path / "t.svm"
    text.write_bytes(lines)
    with open(text, encoding="utf-8") as f, pytest.raises(TypeError, match="text mode"):
        iter_svmlight_chunks(f, n_features=2)
