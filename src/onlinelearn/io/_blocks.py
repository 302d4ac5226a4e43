"""The svmlight text, block by block: cut a byte stream into blocks of complete lines, parse each
with the compiled kernel (:func:`onlinelearn._core.svmlight.parse_block`), turn its status codes
into messages that name the file and the line, and re-cut the parsed blocks into row chunks.
:mod:`onlinelearn.io` opens the files and offers the public readers on top of this; the words
for a bad line are in :mod:`onlinelearn.io._lines`, the reading thread in
:mod:`onlinelearn.io._prefetch`.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator

import numpy as np
import scipy.sparse as sp

from .._core import svmlight as K
from ..shell.validation import first_inexact_label
from ._cut import _cut_blocks
from ._lines import _describe_line, _snippet
from ._open import _is_path, _open_with_raw, _size_on_disk
from ._prefetch import _prefetched

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
    """Parsed rows of one block: CSR arrays, labels, the 1-based line number of every row.

    ``data`` and ``indices`` are None when the values went to a shared :class:`_Growing`
    (``indptr`` then holds offsets into it)."""

    __slots__ = ("data", "indices", "indptr", "labels", "lines", "qid", "has_qid", "max_index")

    def __init__(self, data, indices, indptr, labels, lines, qid, has_qid, max_index=-1):
        self.data, self.indices, self.indptr = data, indices, indptr
        self.labels, self.lines, self.qid, self.has_qid = labels, lines, qid, has_qid
        self.max_index = int(max_index)

    @property
    def n_rows(self) -> int:
        return self.indptr.shape[0] - 1


#: value dtypes the kernel writes directly (others are parsed as float64, then cast)
_KERNEL_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


class _Growing:
    """One pair of value / index arrays that the blocks of a whole file are parsed into, so that
    no block is copied again at the end.  Before a block, there must be room for the most values
    it can hold (``K.block_room``); when there is not, the arrays grow: with ``size_hint`` (the
    bytes of text, when known) to the values per byte seen so far times the file's size, so a
    plain file is sized once after its first block; else by doubling."""

    def __init__(self, dtype, size_hint: int | None = None):
        self.data = np.empty(0, dtype=dtype)
        self.indices = np.empty(0, dtype=np.int32)
        self.nnz = 0
        self.size_hint = size_hint
        self.bytes_done = 0

    def reserve(self, room: int) -> None:
        """Room for ``room`` more values."""
        need = self.nnz + room
        cap = self.data.shape[0]
        if need <= cap:
            return
        new = max(need, 2 * cap)
        if self.size_hint and self.bytes_done:
            per_byte = self.nnz / self.bytes_done
            new = max(need, int(per_byte * self.size_hint * 1.02) + room)
        for name in ("data", "indices"):
            old = getattr(self, name)
            grown = np.empty(new, dtype=old.dtype)
            grown[: self.nnz] = old[: self.nnz]
            setattr(self, name, grown)

    def parsed(self, nnz: int, n_bytes: int) -> None:
        """A block of ``n_bytes`` bytes was parsed; the values now end at ``nnz``."""
        self.nnz = nnz
        self.bytes_done += n_bytes

    def arrays(self):
        """The values and indices written; the spare room is given back (in place when the
        arrays allow it, which costs no copy)."""
        for name in ("data", "indices"):
            a = getattr(self, name)
            if a.shape[0] != self.nnz:
                try:
                    a.resize(self.nnz, refcheck=False)  # no view of them exists
                except ValueError:
                    setattr(self, name, a[: self.nnz].copy())
        return self.data, self.indices


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


def _parse_part(
    buf: np.ndarray, n: int, lines_before: int, opt: _Options, out: _Growing | None = None
):
    """Parse the complete lines of ``buf[:n]`` (uint8, ending with a newline, followed by
    ``K.PAD`` bytes of room); returns the block and its number of lines.  The values go to
    ``out`` if given (``opt.dtype`` is then one the kernel writes), else to arrays of the
    block's own.  Raises on bad data."""
    view = buf[:n]
    room = K.block_room(n)
    kdtype = opt.dtype if opt.dtype in _KERNEL_DTYPES else np.dtype(np.float64)
    if out is None:
        data = np.empty(room, dtype=kdtype)
        indices = np.empty(room, dtype=np.int32)
        nnz0 = 0
    else:
        out.reserve(room)
        data, indices, nnz0 = out.data, out.indices, out.nnz
    (status, err, n_lines, nnz, indptr, labels, span, row_line, slow, qid, has_qid,
     max_index) = K.parse_block(buf, n, opt.zero_based, opt.multilabel, opt.query_id, data,
                                indices, nnz0)  # fmt: skip
    if status == K.BAD_BUFFER:
        raise AssertionError("svmlight block without its final newline, padding or room")
    text = []  # the block as bytes, made only for an error message

    def part() -> bytes:
        if not text:
            text.append(view.tobytes())
        return text[0]

    def row_of(pos):
        return int(np.searchsorted(indptr, pos, side="right") - 1)

    def fail(row, reason=None):
        if row >= len(row_line) and status != K.OK:
            # the row the kernel stopped in (found by the hostile fuzzer: b"0 1: ::"): it has
            # no line entry yet; report the kernel's own error, at its byte offset
            line_no = lines_before + part().count(b"\n", 0, err) + 1
            return _line_error(opt, part(), err, line_no, reason or _STATUS_REASON[status])
        rel = int(row_line[row])
        return _line_error(opt, part(), _line_offset(part(), rel), lines_before + rel + 1, reason)

    # tokens outside the kernel's exact fast path: Python's float() (rows before any error),
    # rounded once to the value dtype as scikit-learn's cast does
    if slow.shape[0]:
        values = np.empty(slow.shape[0], dtype=np.float64)
        for k, (pos, s, e) in enumerate(slow):
            try:
                values[k] = float(view[s:e].tobytes())
            except ValueError:
                raise fail(row_of(pos)) from None
        with np.errstate(over="ignore"):  # beyond float32's range: inf, as scikit-learn
            data[slow[:, 0]] = values.astype(kdtype)
    if opt.multilabel:
        out_labels = []
        for row, (s, e) in enumerate(span):
            try:
                token = view[s:e].tobytes()
                out_labels.append(
                    tuple(sorted(float(v) for v in token.split(b","))) if e > s else ()
                )
            except ValueError:
                raise fail(row) from None
        labels = out_labels
    else:
        for row in np.flatnonzero(np.isnan(labels)):
            s, e = span[row]
            try:
                labels[row] = float(view[s:e].tobytes())
            except ValueError:
                raise fail(int(row)) from None
    if status != K.OK:
        line_no = lines_before + part().count(b"\n", 0, err) + 1
        raise _line_error(opt, part(), err, line_no, _STATUS_REASON[status])
    if opt.n_features is not None and max_index >= opt.n_features:
        bad = nnz0 + int(np.flatnonzero(indices[nnz0:nnz] >= opt.n_features)[0])
        raise fail(row_of(bad))
    # only the values left to Python can be non-finite (the fast path's are finite and within
    # float32's range), unless the values are cast to another dtype below
    check = slow[:, 0]
    if kdtype != opt.dtype:
        with np.errstate(over="ignore"):
            data = data[:nnz].astype(opt.dtype)
        check = np.arange(nnz)
    if not opt.allow_nonfinite and check.size and not np.isfinite(data[check]).all():
        bad = int(check[np.flatnonzero(~np.isfinite(data[check]))[0]])
        row = row_of(bad)
        rel = int(row_line[row])
        start = _line_offset(part(), rel)
        end = part().find(b"\n", start)
        line = part()[start : len(part()) if end < 0 else end]
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
                raise _label_error(opt, part(), row_line[row], lines_before, labels[row])
            row = first_inexact_label(labels)  # 2**63 - 1 would wrap to -2**63
            if row >= 0:
                raise _label_error(
                    opt, part(), row_line[row], lines_before, labels[row], _BEYOND_EXACT
                )
        labels = labels.astype(opt.label_dtype)
    lines = row_line + lines_before + 1
    if out is None:
        block = _Block(data[:nnz], indices[:nnz], indptr, labels, lines, qid, has_qid, max_index)
    else:
        block = _Block(None, None, indptr, labels, lines, qid, has_qid, max_index)
    if out is not None:
        out.parsed(nnz, n)
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


def _iter_blocks(
    f, opt: _Options, block_size: int | None = None, out: _Growing | None = None
) -> Iterator[tuple[_Block, int]]:
    """Parsed blocks of the binary stream ``f``, each with the number of lines read so far
    (:func:`_cut_blocks` with the svmlight kernel).  ``out``: see :func:`_parse_part`."""
    if block_size is None:
        block_size = BLOCK_SIZE  # read at call time, so that tests can make blocks tiny
    return _cut_blocks(
        f, opt.name, block_size, lambda buf, cut, lines: _parse_part(buf, cut, lines, opt, out)
    )


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


def _whole(blocks, out: _Growing, opt: _Options, width: int):
    """``(X, y, qid)`` of whole blocks whose values were parsed into ``out``."""
    indptr = np.concatenate([np.zeros(1, dtype=np.int64)] + [b.indptr[1:] for b in blocks])
    if opt.multilabel:
        y = [lab for b in blocks for lab in b.labels]
    else:
        y = np.concatenate([b.labels for b in blocks])
    data, indices = out.arrays()
    X = sp.csr_matrix((data, indices, indptr), shape=(indptr.shape[0] - 1, width))
    qid = np.concatenate([b.qid[b.has_qid] for b in blocks])
    return X, y, qid


def _recut(blocks, chunk_size: int, concat, progress: list):
    """Re-cut parsed blocks into chunks of ``chunk_size`` rows (the last may be shorter), each
    made by ``concat(pieces)`` from ``(block, first row, end row)`` pieces; ``progress[0]``
    holds the lines read so far.  Shared by the svmlight and the VW readers."""
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
            yield concat(pieces)
    if avail:
        yield concat([(b_, a, b_.n_rows) for b_, a in pending])


def _iter_row_chunks(blocks, chunk_size: int, opt: _Options, width: int, progress: list):
    """:func:`_recut` of svmlight blocks: yields ``(X, y, qid, last_line)``."""
    return _recut(blocks, chunk_size, lambda pieces: _concat(pieces, opt, width), progress)


class _ChunkReaderClose:
    """What the chunk readers (svmlight, VW) share: iteration over ``self._chunks`` (the
    ``(X, y, third, last_line)`` tuples of :func:`_recut`) with the counters, closing on the
    end or an error, progress in bytes, and closing: the reading thread of ``_blocks`` stops
    before the file it reads is closed; also as a context manager and on garbage collection.
    A reader defines :meth:`_emit`, what one chunk gives its caller."""

    def _emit(self, X, y, third):
        raise NotImplementedError

    def _open(self, source) -> None:
        """``_file`` (decompressed) and ``_raw`` (on disk) of a path, opened here and closed by
        :meth:`close`; a stream is both and is left open.  ``total_bytes``: the size on disk."""
        self._owns = _is_path(source)
        if self._owns:
            self._file, self._raw = _open_with_raw(source)
            self.total_bytes: int | None = _size_on_disk(self._raw)
        else:
            self._file = self._raw = source
            self.total_bytes = None

    def _start(self, blocks, prefetch: bool, recut) -> None:
        """Read ``blocks`` (on a thread with ``prefetch``) and re-cut them into the chunks
        ``recut(blocks, progress)`` yields."""
        self._lines_seen = [0]
        self.prefetch = bool(prefetch)
        if self.prefetch:
            blocks = _prefetched(blocks)
        self._blocks = blocks
        self._chunks = recut(blocks, self._lines_seen)
        self._done = False

    @property
    def bytes_read(self) -> int:
        try:
            return int(self._raw.tell())
        except (OSError, ValueError, AttributeError):
            return 0

    def __iter__(self):
        return self

    def __next__(self):
        if self._done:
            raise StopIteration
        try:
            X, y, third, last_line = next(self._chunks)
        except StopIteration:
            self.lines_read = max(self.lines_read, self._lines_seen[0])
            self.close()
            raise
        except BaseException:
            self.close()
            raise
        self.lines_read = last_line
        self.rows_read += X.shape[0]
        return self._emit(X, y, third)

    def close(self) -> None:
        self._done = True
        blocks = getattr(self, "_blocks", None)
        if blocks is not None and hasattr(blocks, "close"):
            blocks.close()
        if getattr(self, "_owns", False) and not self._file.closed:
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


def _signature_of(reader):
    """Decorate ``iter_..._chunks(path, *args, **kwargs)``, which returns ``reader(path, *args,
    **kwargs)``, with the signature of ``reader`` (its first parameter named as the function's):
    ``help()`` and ``inspect`` show every parameter and default, written once, in the reader's
    ``__init__``."""

    def decorate(f):
        own = inspect.signature(f)
        sig = inspect.signature(reader)
        first, *rest = sig.parameters.values()
        first = first.replace(name=next(iter(own.parameters)))
        f.__signature__ = sig.replace(
            parameters=[first, *rest], return_annotation=own.return_annotation
        )
        return f

    return decorate
