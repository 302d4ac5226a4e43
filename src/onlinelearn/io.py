"""Reading and writing svmlight / LIBSVM files, in chunks so that files larger than memory work.

The format is one example per line::

    <label> <index>:<value> <index>:<value> ... [# comment]

with 1-based, strictly increasing feature indices (the LIBSVM convention) and zero values left
out.  The file is read in blocks of bytes (a few MiB, so memory stays bounded whatever the file's
size) and each block of complete lines is parsed by the compiled kernel
:func:`onlinelearn._core.svmlight.parse_block` (numba), which follows scikit-learn's reader
token for token (:func:`sklearn.datasets.load_svmlight_file`: comments, ``qid:``, multi-label
labels ``1,3``) and gives the same matrices.  Values are exactly Python's ``float()`` of each
token: Clinger's exact fast path in the kernel, Python's ``float()`` for the rare token outside
it.  Compressed files are decompressed by Python's modules, block by block.  This module cuts
the blocks, and turns errors into messages that name the file and the line.

Plain, gzip (``.gz``), bzip2 (``.bz2``) and xz (``.xz``) files are recognised by their first bytes,
not by their names.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import zlib
from collections.abc import Iterator
from typing import BinaryIO

import numpy as np
import scipy.sparse as sp
from sklearn.datasets import dump_svmlight_file

from ._checks import check_binary_stream, first_inexact_label
from ._core import svmlight as K

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


def _describe_line(
    line: bytes, n_features: int | None, zero_based: bool, multilabel: bool = False
) -> str | None:
    """Say in words what is wrong with one svmlight line, or None if nothing obvious is.

    Only used to explain an error found by the parser; it never parses data.
    """
    tokens = line.split(b"#", 1)[0].split()
    if not tokens:
        return None
    label = tokens[0]
    if multilabel and b":" in label:
        tokens = [b"", *tokens]
    elif multilabel:
        for part in label.split(b","):
            try:
                float(part)
            except ValueError:
                return f"label {label.decode(errors='replace')!r} is not a list of numbers"
    elif b"," in label:
        text = label.decode(errors="replace")
        return f"label {text!r} is a list of labels (multi-label data: pass multilabel=True)"
    else:
        try:
            float(label)
        except ValueError:
            return f"label {label.decode(errors='replace')!r} is not a number"
    lowest = 0 if zero_based else 1
    previous = None
    for pos, tok in enumerate(tokens[1:]):
        text = tok.decode(errors="replace")
        idx, sep, val = tok.partition(b":")
        if not sep:
            return f"token {text!r} is not of the form index:value"
        if idx == b"qid" and pos == 0:
            try:
                int(val)
            except ValueError:
                return f"qid in {text!r} is not an integer"
            continue
        try:
            i = int(idx)
        except ValueError:
            return f"feature index in {text!r} is not an integer"
        if i < lowest:
            return f"feature index {i} is below {lowest} (indices are {lowest}-based)"
        if i - lowest > K.INT32_MAX:
            return (
                f"feature index {i} is beyond the range of the sparse matrix indices "
                f"(at most {K.INT32_MAX + lowest})"
            )
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


#: Bytes read from the (decompressed) file per block; a block is parsed by one compiled call.
BLOCK_SIZE = 1 << 22

_STATUS_REASON = {
    K.BAD_TOKEN: "a token is not of the form index:value",
    K.BAD_INDEX: "a feature index is out of range",
    K.UNSORTED: "feature indices are not strictly increasing",
    K.INDEX_OVERFLOW: "a feature index is beyond the range of the sparse matrix indices",
    K.BAD_QID: "the qid is not an integer",
}


class _Block:
    """Parsed rows of one block: CSR arrays, labels, the 1-based line number of every row."""

    __slots__ = ("data", "indices", "indptr", "labels", "lines", "qid", "has_qid")

    def __init__(self, data, indices, indptr, labels, lines, qid, has_qid):
        self.data, self.indices, self.indptr = data, indices, indptr
        self.labels, self.lines, self.qid, self.has_qid = labels, lines, qid, has_qid

    @property
    def n_rows(self) -> int:
        return self.indptr.shape[0] - 1


class _Options:
    """What the reader was asked for (one object instead of eight arguments)."""

    __slots__ = (
        "name",
        "n_features",
        "dtype",
        "zero_based",
        "label_dtype",
        "allow_nonfinite",
        "multilabel",
        "query_id",
    )

    def __init__(self, name, n_features, dtype, zero_based, label_dtype, allow_nonfinite,
                 multilabel=False, query_id=False):  # fmt: skip
        self.name = name
        self.n_features = n_features
        self.dtype = np.dtype(dtype)
        self.zero_based = bool(zero_based)
        self.label_dtype = None if label_dtype is None else np.dtype(label_dtype)
        self.allow_nonfinite = allow_nonfinite
        self.multilabel = bool(multilabel)
        self.query_id = bool(query_id)


def _line_error(opt: _Options, part: bytes, offset: int, line_no: int, reason: str | None):
    """ValueError naming the file and line, saying what is wrong and quoting the line."""
    end = part.find(b"\n", offset)
    line = part[offset : len(part) if end < 0 else end]
    why = _describe_line(line, opt.n_features, opt.zero_based, opt.multilabel) or reason
    return ValueError(f"{opt.name}: line {line_no}: {why} (line: {_snippet(line)!r})")


def _line_offset(part: bytes, rel_line: int) -> int:
    """Byte offset of the 0-based line ``rel_line`` of ``part``."""
    pos = 0
    for _ in range(rel_line):
        pos = part.index(b"\n", pos) + 1
    return pos


def _parse_part(part: bytes, lines_before: int, opt: _Options) -> tuple[_Block, int]:
    """Parse complete lines; returns the block and its number of lines. Raises on bad data."""
    buf = np.frombuffer(part, dtype=np.uint8)
    (status, err, n_lines, data, indices, indptr, labels, span, row_line, slow, qid,
     has_qid) = K.parse_block(buf, opt.zero_based, opt.multilabel, opt.query_id)  # fmt: skip

    def fail(row, reason=None):
        if row >= len(row_line) and status != K.OK:
            # the row the kernel stopped in (found by the hostile fuzzer: b"0 1: ::"): it has
            # no line entry yet; report the kernel's own error, at its byte offset
            line_no = lines_before + part.count(b"\n", 0, err) + 1
            return _line_error(opt, part, err, line_no, reason or _STATUS_REASON[status])
        rel = int(row_line[row])
        return _line_error(opt, part, _line_offset(part, rel), lines_before + rel + 1, reason)

    # tokens outside the kernel's exact fast path: Python's float() (rows before any error)
    for pos, s, e in slow:
        try:
            data[pos] = float(part[s:e])
        except ValueError:
            raise fail(int(np.searchsorted(indptr, pos, side="right") - 1)) from None
    if opt.multilabel:
        out = []
        for row, (s, e) in enumerate(span):
            try:
                out.append(tuple(sorted(float(v) for v in part[s:e].split(b","))) if e > s else ())
            except ValueError:
                raise fail(row) from None
        labels = out
    else:
        for row in np.flatnonzero(np.isnan(labels)):
            s, e = span[row]
            try:
                labels[row] = float(part[s:e])
            except ValueError:
                raise fail(int(row)) from None
    if status != K.OK:
        line_no = lines_before + part.count(b"\n", 0, err) + 1
        raise _line_error(opt, part, err, line_no, _STATUS_REASON[status])
    if opt.n_features is not None and indices.size and int(indices.max()) >= opt.n_features:
        bad = int(np.flatnonzero(indices >= opt.n_features)[0])
        raise fail(int(np.searchsorted(indptr, bad, side="right") - 1))
    if data.dtype != opt.dtype:
        with np.errstate(over="ignore"):  # beyond float32's range: inf, as scikit-learn
            data = data.astype(opt.dtype)
    if not opt.allow_nonfinite and data.size and not np.isfinite(data).all():
        bad = int(np.flatnonzero(~np.isfinite(data))[0])
        row = int(np.searchsorted(indptr, bad, side="right") - 1)
        rel = int(row_line[row])
        start = _line_offset(part, rel)
        end = part.find(b"\n", start)
        line = part[start : len(part) if end < 0 else end]
        raise ValueError(
            f"{opt.name}: line {lines_before + rel + 1}: feature "
            f"{int(indices[bad]) + (not opt.zero_based)} has the non-finite value "
            f"{float(data[bad])!r} (line: {_snippet(line)!r})"
        )
    if not opt.multilabel and opt.label_dtype is not None:
        if opt.label_dtype.kind in "iu":
            integral = np.isfinite(labels) & (labels == np.round(labels))
            if not integral.all():
                row = int(np.flatnonzero(~integral)[0])
                raise _label_error(opt, part, row_line[row], lines_before, labels[row])
            row = first_inexact_label(labels)  # 2**63 - 1 would wrap to -2**63
            if row >= 0:
                raise _label_error(
                    opt, part, row_line[row], lines_before, labels[row], _BEYOND_EXACT
                )
        labels = labels.astype(opt.label_dtype)
    block = _Block(data, indices, indptr, labels, row_line + lines_before + 1, qid, has_qid)
    return block, int(n_lines)


_NOT_INTEGER = "is not an integer (class labels must be integers"
_BEYOND_EXACT = "is beyond 2**53: read as float64 it is no longer an exact integer ("


def _label_error(opt, part, rel, lines_before, value, what=_NOT_INTEGER):
    start = _line_offset(part, int(rel))
    end = part.find(b"\n", start)
    line = part[start : len(part) if end < 0 else end]
    return ValueError(
        f"{opt.name}: line {lines_before + int(rel) + 1}: label {float(value)!r} {what}; "
        "pass label_dtype=None to keep float labels) "
        f"(line: {_snippet(line)!r})"
    )


def _iter_blocks(f, opt: _Options, block_size: int = BLOCK_SIZE) -> Iterator[tuple[_Block, int]]:
    """Parsed blocks of the binary stream ``f``, each with the number of lines read so far.

    Reads ``block_size`` bytes at a time; the part after the last newline waits for the next
    read (a line longer than a block makes the block grow until its end is in), so memory is
    bounded by the block size and the longest line."""
    carry = b""
    lines_before = 0
    while True:
        try:
            raw = f.read(block_size)
        except (EOFError, OSError, lzma.LZMAError, zlib.error) as exc:
            if isinstance(exc, FileNotFoundError | PermissionError):
                raise
            line = lines_before + carry.count(b"\n")
            raise ValueError(
                f"{opt.name}: the compressed data is corrupted or truncated after line "
                f"{line}: {exc}"
            ) from None
        if raw:
            buf = carry + raw if carry else raw
            cut = buf.rfind(b"\n")
            if cut < 0:
                carry = buf
                continue
            part, carry = buf[: cut + 1], buf[cut + 1 :]
        elif carry:
            part, carry = carry, b""
        else:
            return
        block, n_lines = _parse_part(part, lines_before, opt)
        lines_before += n_lines
        yield block, lines_before


def _concat(pieces, opt: _Options, width: int):
    """One chunk from row ranges ``(block, a, b)`` of consecutive blocks."""
    data = [p.data[p.indptr[a] : p.indptr[b]] for p, a, b in pieces]
    indices = [p.indices[p.indptr[a] : p.indptr[b]] for p, a, b in pieces]
    counts = [np.diff(p.indptr[a : b + 1]) for p, a, b in pieces]
    indptr = np.zeros(sum(c.shape[0] for c in counts) + 1, dtype=np.int64)
    np.cumsum(np.concatenate(counts), out=indptr[1:])
    n = indptr.shape[0] - 1
    if opt.multilabel:
        y = [lab for p, a, b in pieces for lab in p.labels[a:b]]
    else:
        y = np.concatenate([p.labels[a:b] for p, a, b in pieces])
    X = sp.csr_matrix(
        (np.concatenate(data).astype(opt.dtype, copy=False), np.concatenate(indices), indptr),
        shape=(n, width),
    )
    qid = np.concatenate([p.qid[a:b][p.has_qid[a:b]] for p, a, b in pieces])
    last_line = pieces[-1][0].lines[pieces[-1][2] - 1] if n else 0
    return X, y, qid, int(last_line)


def _iter_row_chunks(blocks, chunk_size: int, opt: _Options, width: int, progress: list):
    """Re-cut parsed blocks into chunks of ``chunk_size`` rows (the last may be shorter).

    Yields ``(X, y, qid, last_line)``; ``progress[0]`` holds the lines read so far."""
    pending: list[list] = []  # [block, first row not yet used]
    avail = 0
    for block, lines in blocks:
        progress[0] = lines
        if block.n_rows:
            pending.append([block, 0])
            avail += block.n_rows
        while avail >= chunk_size:
            pieces = []
            need = chunk_size
            while need:
                block_i, a = pending[0]
                b = min(block_i.n_rows, a + need)
                pieces.append((block_i, a, b))
                need -= b - a
                if b == block_i.n_rows:
                    pending.pop(0)
                else:
                    pending[0][1] = b
            avail -= chunk_size
            yield _concat(pieces, opt, width)
    if avail:
        yield _concat([(b_, a, b_.n_rows) for b_, a in pending], opt, width)


class SvmlightChunkReader(Iterator):
    """Iterator over ``(X, y)`` chunks of an svmlight file; see :func:`iter_svmlight_chunks`.

    Besides iterating, it exposes the progress made so far: :attr:`bytes_read` (bytes consumed from
    the file on disk, i.e. *compressed* bytes for a compressed file), :attr:`total_bytes` (size of
    the file on disk, or None for a stream), :attr:`rows_read` and :attr:`lines_read` (the line of
    the last row returned; every line once the file is exhausted).
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
        opt = _Options(self.name, self.n_features, dtype, zero_based, label_dtype,
                       allow_nonfinite)  # fmt: skip
        self._lines_seen = [0]
        self._chunks = _iter_row_chunks(
            _iter_blocks(self._file, opt), self.chunk_size, opt, self.n_features, self._lines_seen
        )
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
        try:
            X, y, _, last_line = next(self._chunks)
        except StopIteration:
            self.lines_read = max(self.lines_read, self._lines_seen[0])
            self.close()
            raise
        except BaseException:
            self.close()
            raise
        self.lines_read = last_line
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
        Dtype of ``X`` (values are parsed as doubles, then cast, as scikit-learn does).
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
        wrong and quotes the line.  Also for a feature index beyond the int32 range of the
        sparse matrix indices.

    Notes
    -----
    The file is read in blocks of :data:`BLOCK_SIZE` bytes, each parsed by one compiled call,
    so memory is bounded by a block plus a chunk.  The returned :class:`SvmlightChunkReader`
    also reports progress (``bytes_read``, ``total_bytes``, ``rows_read``) and can be used as a
    context manager to close the file early.
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


def _blocks_of(source, opt: _Options):
    """Parsed blocks of a path (opened, decompressed and closed here) or a binary stream."""
    owns = isinstance(source, str | bytes | os.PathLike)
    f = open_maybe_compressed(source) if owns else source
    try:
        yield from _iter_blocks(f, opt)
    finally:
        if owns:
            f.close()


def svmlight_n_features(path, zero_based: bool = False, chunk_size: int = 10000) -> int:
    """Highest feature index in an svmlight file, as a number of columns (one pass over it).

    The result can be lower than the true dimension of the data set, so prefer a known value.
    Returns at least 1.  ``chunk_size`` is accepted for compatibility and unused (the file is
    read in blocks of bytes).
    """
    opt = _Options(_source_name(path), None, np.float64, zero_based, None, True)
    width = 1
    for block, _ in _blocks_of(path, opt):
        if block.indices.size:
            width = max(width, int(block.indices.max()) + 1)
    return width


def load_svmlight(
    path,
    n_features: int | None = None,
    dtype=np.float64,
    zero_based: bool = False,
    label_dtype=np.int64,
    allow_nonfinite: bool = False,
    chunk_size: int = 50000,
    *,
    multilabel: bool = False,
    query_id: bool = False,
):
    """Load a whole svmlight / LIBSVM file with the compiled parser.

    Returns ``(X, y)`` with ``X`` a CSR matrix of shape (n_samples, n_features), the same
    matrix and labels as ``sklearn.datasets.load_svmlight_file(path, n_features=n_features,
    dtype=dtype, zero_based=zero_based)`` (values exactly Python's ``float()`` of each token),
    read in one pass of bounded blocks.  With ``n_features=None`` the width is the highest index
    found.  See :func:`iter_svmlight_chunks` for the other parameters; ``chunk_size`` is kept
    for compatibility and unused.

    multilabel : bool, default=False
        Labels are comma-separated lists (``1,3``); ``y`` is then a list of sorted tuples of
        floats, as scikit-learn returns (``label_dtype`` does not apply).  Without it, such a
        label is an error.
    query_id : bool, default=False
        Also return the ``qid:`` values: ``(X, y, qid)``, one entry per line that has one (as
        scikit-learn).  ``qid:<int>`` is read as the first token after the label and otherwise
        ignored.
    """
    if n_features is not None and (not isinstance(n_features, int | np.integer) or n_features < 1):
        raise ValueError(f"n_features must be a positive integer or None, got {n_features!r}")
    if zero_based not in (True, False):
        raise ValueError(f"zero_based must be True or False, got {zero_based!r}")
    opt = _Options(_source_name(path), n_features, dtype, zero_based,
                   None if multilabel else label_dtype, allow_nonfinite, multilabel,
                   query_id)  # fmt: skip
    blocks = [b for b, _ in _blocks_of(path, opt)]
    width = n_features
    if width is None:
        width = max([1] + [int(b.indices.max()) + 1 for b in blocks if b.indices.size])
    blocks = [b for b in blocks if b.n_rows]
    if blocks:
        X, y, qid, _ = _concat([(b, 0, b.n_rows) for b in blocks], opt, width)
    else:
        label_out = np.float64 if (label_dtype is None or multilabel) else label_dtype
        X = sp.csr_matrix((0, width), dtype=dtype)
        y = [] if multilabel else np.empty(0, dtype=label_out)
        qid = np.empty(0, dtype=np.int64)
    return (X, y, qid) if query_id else (X, y)


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
