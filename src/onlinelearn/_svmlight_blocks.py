"""The svmlight text, block by block: cut a byte stream into blocks of complete lines, parse each
with the compiled kernel (:func:`onlinelearn._core.svmlight.parse_block`), turn its status codes
into messages that name the file and the line, and re-cut the parsed blocks into row chunks.
:mod:`onlinelearn.io` opens the files and offers the public readers on top of this."""

from __future__ import annotations

import lzma
import zlib
from collections.abc import Iterator

import numpy as np
import scipy.sparse as sp

from ._checks import first_inexact_label
from ._core import svmlight as K


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


def _iter_blocks(f, opt: _Options, block_size: int | None = None) -> Iterator[tuple[_Block, int]]:
    """Parsed blocks of the binary stream ``f``, each with the number of lines read so far.

    Reads ``block_size`` bytes at a time; the part after the last newline waits for the next
    read (a line longer than a block makes the block grow until its end is in), so memory is
    bounded by the block size and the longest line."""
    if block_size is None:
        block_size = BLOCK_SIZE  # read at call time, so that tests can make blocks tiny
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
