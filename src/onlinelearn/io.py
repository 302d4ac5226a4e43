"""Reading and writing svmlight / LIBSVM files, in chunks so that files larger than memory work.

The format is one example per line::

    <label> <index>:<value> <index>:<value> ... [# comment]

with 1-based, strictly increasing feature indices (the LIBSVM convention) and zero values left
out.  Parsing is done by scikit-learn's compiled reader
(:func:`sklearn.datasets.load_svmlight_file`), which is fed one chunk of lines at a time with a
fixed number of features; this module only cuts the file into chunks, opens compressed files, and
turns parser errors into messages that name the file and the line.

Plain, gzip (``.gz``), bzip2 (``.bz2``) and xz (``.xz``) files are recognised by their first bytes,
not by their names.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
from collections.abc import Iterator
from typing import BinaryIO

import numpy as np
import scipy.sparse as sp
from sklearn.datasets import dump_svmlight_file, load_svmlight_file

from ._checks import check_binary_stream, first_inexact_label

__all__ = [
    "SvmlightChunkReader",
    "dump_svmlight",
    "iter_svmlight_chunks",
    "load_svmlight",
    "open_maybe_compressed",
    "svmlight_n_features",
]

_MAGIC = {
    b"\x1f\x8b": "gzip",
    b"BZh": "bz2",
    b"\xfd7zXZ\x00": "xz",
}


def _compression_of(head: bytes) -> str | None:
    for magic, kind in _MAGIC.items():
        if head.startswith(magic):
            return kind
    return None


def _source_name(source) -> str:
    if isinstance(source, str | bytes | os.PathLike):
        return os.fsdecode(source)
    return str(getattr(source, "name", "<stream>"))


def open_maybe_compressed(path) -> BinaryIO:
    """Open ``path`` for reading bytes, decompressing gzip, bzip2 or xz on the fly.

    The compression is recognised from the file's first bytes, so a misnamed file still works.
    Raises :class:`FileNotFoundError` if the file does not exist.
    """
    return _open_with_raw(path)[0]


def _open_with_raw(path) -> tuple[BinaryIO, BinaryIO]:
    """``(decompressed stream, raw file on disk)``; both must be closed by the caller."""
    raw = open(path, "rb")  # noqa: SIM115 - returned to the caller
    try:
        head = raw.read(6)
        raw.seek(0)
    except BaseException:
        raw.close()
        raise
    kind = _compression_of(head)
    if kind is None:
        return raw, raw
    if kind == "gzip":
        return gzip.GzipFile(fileobj=raw, mode="rb"), raw
    if kind == "bz2":
        return bz2.BZ2File(raw, mode="rb"), raw
    return lzma.LZMAFile(raw, mode="rb"), raw


def _is_data_line(line: bytes) -> bool:
    """True if the line holds an example (not blank, not only a comment)."""
    s = line.lstrip()
    return bool(s) and not s.startswith(b"#")


def _describe_line(line: bytes, n_features: int | None, zero_based: bool) -> str | None:
    """Say in words what is wrong with one svmlight line, or None if nothing obvious is.

    Only used to explain an error found by the real parser; it never parses data.
    """
    tokens = line.split(b"#", 1)[0].split()
    if not tokens:
        return None
    label = tokens[0]
    if b"," in label:
        text = label.decode(errors="replace")
        return f"label {text!r} is a list of labels (multi-label data is not supported)"
    try:
        float(label)
    except ValueError:
        return f"label {label.decode(errors='replace')!r} is not a number"
    lowest = 0 if zero_based else 1
    previous = None
    for tok in tokens[1:]:
        text = tok.decode(errors="replace")
        idx, sep, val = tok.partition(b":")
        if not sep:
            return f"token {text!r} is not of the form index:value"
        if idx == b"qid":
            continue
        try:
            i = int(idx)
        except ValueError:
            return f"feature index in {text!r} is not an integer"
        if i < lowest:
            return f"feature index {i} is below {lowest} (indices are {lowest}-based)"
        try:
            float(val)
        except ValueError:
            return f"value in {text!r} is not a number"
        if previous is not None and i <= previous:
            return f"feature indices are not strictly increasing ({previous} then {i})"
        width = i + 1 if zero_based else i
        if n_features is not None and width > n_features:
            return f"feature index {i} is larger than n_features={n_features}"
        previous = i
    return None


def _snippet(line: bytes, limit: int = 60) -> str:
    text = line.rstrip(b"\r\n").decode(errors="replace")
    return text if len(text) <= limit else text[: limit - 3] + "..."


class SvmlightChunkReader(Iterator):
    """Iterator over ``(X, y)`` chunks of an svmlight file; see :func:`iter_svmlight_chunks`.

    Besides iterating, it exposes the progress made so far: :attr:`bytes_read` (bytes consumed from
    the file on disk, i.e. *compressed* bytes for a compressed file), :attr:`total_bytes` (size of
    the file on disk, or None for a stream), :attr:`rows_read` and :attr:`lines_read`.
    """

    def __init__(
        self,
        source,
        chunk_size: int = 10000,
        n_features: int | None = None,
        dtype=np.float64,
        zero_based: bool = False,
        label_dtype=np.int64,
        allow_nonfinite: bool = False,
    ):
        if not isinstance(chunk_size, int | np.integer) or chunk_size < 1:
            raise ValueError(f"chunk_size must be a positive integer, got {chunk_size!r}")
        if n_features is not None and (
            not isinstance(n_features, int | np.integer) or n_features < 1
        ):
            raise ValueError(f"n_features must be a positive integer or None, got {n_features!r}")
        if zero_based not in (True, False):
            raise ValueError(
                "zero_based must be True or False (guessing per chunk could differ between "
                f"chunks), got {zero_based!r}"
            )
        check_binary_stream(source)  # a text-mode file object: a clear TypeError
        self.name = _source_name(source)
        self.chunk_size = int(chunk_size)
        self.dtype = dtype
        self.zero_based = bool(zero_based)
        self.label_dtype = None if label_dtype is None else np.dtype(label_dtype)
        self.allow_nonfinite = allow_nonfinite
        self.rows_read = 0
        self.lines_read = 0
        self._owns = isinstance(source, str | bytes | os.PathLike)
        if n_features is None:
            n_features = svmlight_n_features(source, zero_based=zero_based)
            if not self._owns:
                source.seek(0)
        self.n_features = int(n_features)
        if self._owns:
            self._file, self._raw = _open_with_raw(source)
            try:
                self.total_bytes: int | None = os.fstat(self._raw.fileno()).st_size
            except (OSError, AttributeError, io.UnsupportedOperation):
                self.total_bytes = None
        else:
            self._file = source
            self._raw = source
            self.total_bytes = None
        self._done = False

    # -- progress ---------------------------------------------------------------------------
    @property
    def bytes_read(self) -> int:
        try:
            return int(self._raw.tell())
        except (OSError, ValueError, AttributeError):
            return 0

    # -- iteration --------------------------------------------------------------------------
    def __iter__(self):
        return self

    def __next__(self) -> tuple[sp.csr_matrix, np.ndarray]:
        if self._done:
            raise StopIteration
        chunk = _read_chunk(self._file, self.chunk_size, self.lines_read)
        if chunk is None:
            self.close()
            raise StopIteration
        lines, data_lines = chunk
        first_line = self.lines_read + 1
        self.lines_read += len(lines)
        try:
            X, y = _parse_chunk(
                lines,
                data_lines,
                first_line,
                self.name,
                self.n_features,
                self.dtype,
                self.zero_based,
                self.label_dtype,
                self.allow_nonfinite,
            )
        except BaseException:
            self.close()
            raise
        self.rows_read += X.shape[0]
        return X, y

    def close(self) -> None:
        self._done = True
        if self._owns and not self._file.closed:
            self._file.close()
            if self._raw is not self._file and not self._raw.closed:
                self._raw.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


def _read_chunk(f, chunk_size: int, lines_before: int):
    """Read lines until ``chunk_size`` data lines are collected; None if none is left.

    Returns ``(lines, data_lines)``: every line read (blank and comment lines included, so that
    line numbers can be recovered) and the 1-based line number of each data line.
    """
    lines: list[bytes] = []
    data_lines: list[int] = []
    number = lines_before
    for line in f:
        number += 1
        lines.append(line)
        if _is_data_line(line):
            data_lines.append(number)
            if len(data_lines) >= chunk_size:
                break
    if not data_lines:  # end of file (possibly after blank or comment lines)
        return None
    return lines, data_lines


def _parse(buffer: bytes, n_features, dtype, zero_based):
    return load_svmlight_file(
        io.BytesIO(buffer), n_features=n_features, dtype=dtype, zero_based=zero_based
    )


def _parse_chunk(
    lines, data_lines, first_line, name, n_features, dtype, zero_based, label_dtype, allow_nonfinite
):
    try:
        X, y = _parse(b"".join(lines), n_features, dtype, zero_based)
    except ValueError as exc:
        raise _locate_error(lines, first_line, name, n_features, dtype, zero_based, exc) from None
    if X.shape[0] != len(data_lines):  # pragma: no cover - parser and line splitter disagree
        raise ValueError(
            f"{name}: lines {first_line}-{first_line + len(lines) - 1}: found "
            f"{len(data_lines)} example lines but the parser returned {X.shape[0]} rows"
        )
    if not allow_nonfinite and X.nnz and not np.all(np.isfinite(X.data)):
        bad = np.flatnonzero(~np.isfinite(X.data))[0]
        row = int(np.searchsorted(X.indptr, bad, side="right") - 1)
        line = lines[data_lines[row] - first_line]
        raise ValueError(
            f"{name}: line {data_lines[row]}: feature {int(X.indices[bad]) + (not zero_based)} "
            f"has the non-finite value {float(X.data[bad])!r} (line: {_snippet(line)!r})"
        )
    if label_dtype is not None and label_dtype.kind in "iu":
        integral = np.isfinite(y) & (y == np.round(y))
        if not np.all(integral):
            row = int(np.flatnonzero(~integral)[0])
            line = lines[data_lines[row] - first_line]
            raise ValueError(
                f"{name}: line {data_lines[row]}: label {float(y[row])!r} is not an integer "
                "(class labels must be integers; pass label_dtype=None to keep float labels) "
                f"(line: {_snippet(line)!r})"
            )
        row = first_inexact_label(y)
        if row >= 0:
            line = lines[data_lines[row] - first_line]
            raise ValueError(
                f"{name}: line {data_lines[row]}: label {float(y[row])!r} is beyond 2**53: read "
                "as float64 it is no longer an exact integer (pass label_dtype=None to keep "
                f"float labels) (line: {_snippet(line)!r})"
            )
        y = y.astype(label_dtype)
    elif label_dtype is not None:
        y = y.astype(label_dtype)
    if not sp.isspmatrix_csr(X):  # pragma: no cover - sklearn always returns CSR
        X = sp.csr_matrix(X)
    return X, y


def _locate_error(lines, first_line, name, n_features, dtype, zero_based, exc) -> ValueError:
    """Find the first line of a chunk that the parser rejects and explain it."""
    for offset, line in enumerate(lines):
        if not _is_data_line(line):
            continue
        try:
            _parse(line, n_features, dtype, zero_based)
        except ValueError as line_exc:
            reason = _describe_line(line, n_features, zero_based) or str(line_exc)
            return ValueError(
                f"{name}: line {first_line + offset}: {reason} (line: {_snippet(line)!r})"
            )
    return ValueError(
        f"{name}: lines {first_line}-{first_line + len(lines) - 1}: malformed svmlight data: {exc}"
    )


def iter_svmlight_chunks(
    path,
    chunk_size: int = 10000,
    n_features: int | None = None,
    dtype=np.float64,
    zero_based: bool = False,
    label_dtype=np.int64,
    allow_nonfinite: bool = False,
) -> SvmlightChunkReader:
    """Stream an svmlight / LIBSVM file as ``(X, y)`` chunks of at most ``chunk_size`` rows.

    Parameters
    ----------
    path : str, path-like or binary file object
        The file; gzip, bzip2 and xz compression are recognised and undone on the fly (for a
        path; a file object is read as it is, and must be seekable if ``n_features`` is None).
    chunk_size : int
        Number of examples per chunk (blank and comment lines do not count).
    n_features : int or None
        Number of columns of every chunk.  **Pass it when you know it** (e.g. 123 for a9a): the
        highest index present in a file can be lower than the true dimension.  If None, the file
        is read once more beforehand to find its highest index.
    dtype : numpy dtype
        Dtype of ``X``.
    zero_based : bool
        False (default, the LIBSVM convention): indices start at 1 and column ``j - 1`` holds
        feature ``j``.  True: indices start at 0.
    label_dtype : numpy dtype or None
        Labels are converted to this dtype (default int64); a non-integral label then raises.
        None keeps the parser's float64 labels.
    allow_nonfinite : bool
        If False (default), a NaN or infinite feature value raises.

    Yields
    ------
    X : scipy.sparse.csr_matrix, shape (n_rows, n_features)
    y : numpy.ndarray, shape (n_rows,)

    Raises
    ------
    FileNotFoundError
        If the file does not exist.
    ValueError
        On a malformed line; the message names the file and the 1-based line number, says what is
        wrong and quotes the line.

    Notes
    -----
    The returned :class:`SvmlightChunkReader` also reports progress (``bytes_read``,
    ``total_bytes``, ``rows_read``) and can be used as a context manager to close the file early.
    """
    return SvmlightChunkReader(
        path,
        chunk_size=chunk_size,
        n_features=n_features,
        dtype=dtype,
        zero_based=zero_based,
        label_dtype=label_dtype,
        allow_nonfinite=allow_nonfinite,
    )


def _iter_unsized(
    source,
    chunk_size: int,
    zero_based: bool,
    dtype=np.float64,
    label_dtype=None,
    allow_nonfinite: bool = True,
):
    """Chunks parsed without a fixed width (each chunk as wide as its highest index)."""
    name = _source_name(source)
    owns = isinstance(source, str | bytes | os.PathLike)
    f = open_maybe_compressed(source) if owns else source
    try:
        lines_read = 0
        while True:
            chunk = _read_chunk(f, chunk_size, lines_read)
            if chunk is None:
                return
            lines, data_lines = chunk
            first_line = lines_read + 1
            lines_read += len(lines)
            yield _parse_chunk(
                lines,
                data_lines,
                first_line,
                name,
                None,
                dtype,
                zero_based,
                None if label_dtype is None else np.dtype(label_dtype),
                allow_nonfinite,
            )
    finally:
        if owns:
            f.close()


def svmlight_n_features(path, zero_based: bool = False, chunk_size: int = 10000) -> int:
    """Highest feature index in an svmlight file, as a number of columns (one pass over it).

    The result can be lower than the true dimension of the data set, so prefer a known value.
    Returns at least 1.
    """
    width = 1
    for X, _ in _iter_unsized(path, chunk_size, zero_based):
        width = max(width, X.shape[1])
    return width


def load_svmlight(
    path,
    n_features: int | None = None,
    dtype=np.float64,
    zero_based: bool = False,
    label_dtype=np.int64,
    allow_nonfinite: bool = False,
    chunk_size: int = 50000,
) -> tuple[sp.csr_matrix, np.ndarray]:
    """Load a whole svmlight / LIBSVM file; see :func:`iter_svmlight_chunks` for the parameters.

    Returns ``(X, y)`` with ``X`` a CSR matrix of shape (n_samples, n_features).  With
    ``n_features=None`` the width is the highest index found in the file (read once only).
    """
    if n_features is None:
        parts = list(
            _iter_unsized(path, chunk_size, zero_based, dtype, label_dtype, allow_nonfinite)
        )
        width = max([1] + [X.shape[1] for X, _ in parts])
        parts = [
            (sp.csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], width)), y)
            for X, y in parts
        ]
    else:
        parts = list(
            iter_svmlight_chunks(
                path,
                chunk_size=chunk_size,
                n_features=n_features,
                dtype=dtype,
                zero_based=zero_based,
                label_dtype=label_dtype,
                allow_nonfinite=allow_nonfinite,
            )
        )
        width = n_features
    if not parts:
        label_out = np.float64 if label_dtype is None else label_dtype
        return sp.csr_matrix((0, width), dtype=dtype), np.empty(0, dtype=label_out)
    X = sp.vstack([X for X, _ in parts], format="csr")
    y = np.concatenate([y for _, y in parts])
    return X, y


def dump_svmlight(X, y, path, zero_based: bool = False, comment: str | None = None) -> None:
    """Write ``X, y`` as an svmlight / LIBSVM file (1-based indices by default).

    ``path`` ending in ``.gz``, ``.bz2`` or ``.xz`` is compressed accordingly.  Integer labels are
    written without a decimal point.  Uses :func:`sklearn.datasets.dump_svmlight_file`.
    """
    name = os.fsdecode(path)
    if name.endswith(".gz"):
        opener = gzip.open
    elif name.endswith(".bz2"):
        opener = bz2.open
    elif name.endswith(".xz"):
        opener = lzma.open
    else:
        opener = open
    with opener(path, "wb") as f:
        dump_svmlight_file(X, np.asarray(y), f, zero_based=zero_based, comment=comment)
