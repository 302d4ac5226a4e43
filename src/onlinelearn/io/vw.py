"""Reading Vowpal Wabbit's text format, with the features hashed into ``2**n_bits`` columns.

A line is ``[label [importance]] [tag]|ns[:scale] name[:value] ... |ns2 ...``; the features are
hashed by MurmurHash3 exactly as scikit-learn's ``FeatureHasher`` hashes strings, so a file
read here and the same rows given to :class:`onlinelearn.features.Hasher` (or to
``FeatureHasher`` on the strings below) have the same columns.  The precise rules (what the
header holds, how a namespace's feature becomes the string ``ns^name`` that is hashed, the
interactions ``-q ab`` as ``ns^name*ns2^name2``) are in :mod:`onlinelearn._core.vw` and
``docs/io.md``.

The file is read in blocks of bytes (a few MiB; plain, gzip, bzip2 or xz, recognised by their
first bytes), each block parsed and hashed by one compiled call, and the rows re-cut into chunks
of ``chunk_size`` rows, as :func:`onlinelearn.io.iter_svmlight_chunks` does.  A malformed line
raises a :class:`ValueError` naming the file and the 1-based line number, what is wrong, and
quoting the line; no row of the block holding it is returned.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import scipy.sparse as sp

from .._core import vw as K
from ..shell.validation import check_binary_stream, first_inexact_label
from ._blocks import _ChunkReaderClose, _recut, _signature_of
from ._cut import _cut_blocks
from ._lines import _snippet
from ._open import _opened, _source_name

__all__ = ["VWChunkReader", "iter_vw_chunks", "load_vw", "check_interactions", "MAX_BITS"]

#: the most bits: 2**30 columns (scikit-learn's ``FeatureHasher`` takes at most 2**31 - 1)
MAX_BITS = 30

BLOCK_SIZE = 1 << 22

_REASON = {
    K.NO_BAR: "no '|': a line is 'label [importance] [tag]|namespace feature[:value] ...'",
    K.HEADER: (
        "more than a label, an importance weight and a tag before the first '|' (an initial "
        "prediction is not supported; a tag must touch the '|' or start with ')"
    ),
    K.EMPTY_NAME: "a feature has an empty name",
    K.EMPTY_VALUE: "a ':' is not followed by a value",
    K.NEG_WEIGHT: "the importance weight is negative",
}
_ROLE = {K.LABEL: "label", K.WEIGHT: "importance weight", K.SCALE: "namespace scale",
         K.VALUE: "feature value"}  # fmt: skip


def check_n_bits(n_bits) -> int:
    if isinstance(n_bits, bool) or not isinstance(n_bits, int | np.integer):
        raise ValueError(f"n_bits must be an integer in [1, {MAX_BITS}], got {n_bits!r}")
    if not 1 <= n_bits <= MAX_BITS:
        raise ValueError(f"n_bits must be an integer in [1, {MAX_BITS}], got {n_bits!r}")
    return int(n_bits)


def check_interactions(interactions) -> list[str]:
    """The interactions as a list of two-character strings (``"ab"``: namespaces whose name
    starts with ``a`` times those starting with ``b``); a clear ValueError otherwise."""
    if interactions is None:
        return []
    if isinstance(interactions, str):
        interactions = [interactions]
    out = []
    for pair in interactions:
        if (
            not isinstance(pair, str)
            or len(pair) != 2
            or not all(c.isascii() and c.isprintable() and c not in " |:" for c in pair)
        ):
            raise ValueError(
                "an interaction is two characters, the first letters of two namespaces "
                f"(e.g. 'ab', as VW's -q ab), got {pair!r}"
            )
        out.append(pair)
    return out


def _inter_array(pairs: list[str]) -> np.ndarray:
    arr = np.array([[ord(a), ord(b)] for a, b in pairs], dtype=np.int64)
    return arr.reshape(len(pairs), 2)


class _VWBlock:
    __slots__ = ("X_data", "indices", "indptr", "labels", "weights", "lines")

    def __init__(self, data, indices, indptr, labels, weights, lines):
        self.X_data, self.indices, self.indptr = data, indices, indptr
        self.labels, self.weights, self.lines = labels, weights, lines

    @property
    def n_rows(self) -> int:
        return self.indptr.shape[0] - 1


class _VWOptions:
    __slots__ = ("name", "n_features", "inter", "dtype", "label_dtype")

    def __init__(self, name, n_bits, interactions, dtype, label_dtype):
        self.name = name
        self.n_features = 1 << check_n_bits(n_bits)
        self.inter = _inter_array(check_interactions(interactions))
        self.dtype = np.dtype(dtype)
        if self.dtype not in (np.dtype(np.float32), np.dtype(np.float64)):
            raise ValueError(f"dtype must be float32 or float64, got {dtype!r}")
        self.label_dtype = None if label_dtype is None else np.dtype(label_dtype)


def _line_at(part: bytes, rel: int) -> bytes:
    pos = 0
    for _ in range(rel):
        pos = part.index(b"\n", pos) + 1
    end = part.find(b"\n", pos)
    return part[pos : len(part) if end < 0 else end]


def _error(opt, part: bytes, rel: int, lines_before: int, why: str) -> ValueError:
    line = _line_at(part, rel)
    where = f"{opt.name}: line {lines_before + rel + 1}"
    return ValueError(f"{where}: {why} (line: {_snippet(line)!r})")


def _parse_part(buf: np.ndarray, n: int, lines_before: int, opt: _VWOptions):
    """Parse and hash the complete lines of ``buf[:n]``; ``(block, lines in it)``."""
    none = np.empty(0, dtype=np.float64)
    res = K.parse_vw_block(buf, n, np.int64(opt.n_features), opt.inter, none)
    status, err, n_lines, slow = res[0], res[1], res[2], res[9]
    if status == K.BAD_BUFFER:
        raise AssertionError("VW block without its final newline or padding")
    text = []

    def part() -> bytes:
        if not text:
            text.append(buf[:n].tobytes())
        return text[0]

    if slow.shape[0]:
        values = np.empty(slow.shape[0], dtype=np.float64)
        for k, (role, s, e, rel) in enumerate(slow.tolist()):
            token = buf[s:e].tobytes()
            what = f"the {_ROLE[role]} {token.decode(errors='replace')!r}"
            try:
                values[k] = float(token)
            except ValueError:
                raise _error(opt, part(), rel, lines_before, f"{what} is not a number") from None
            if not np.isfinite(values[k]):
                raise _error(opt, part(), rel, lines_before, f"{what} is not finite")
        if status == K.OK:
            res = K.parse_vw_block(buf, n, np.int64(opt.n_features), opt.inter, values)
            status, err, n_lines = res[0], res[1], res[2]
    if status != K.OK:
        rel = part().count(b"\n", 0, err)
        raise _error(opt, part(), rel, lines_before, _REASON[status])
    _, _, _, indptr, indices, data, labels, weights, row_line, _ = res
    if data.shape[0] and not np.isfinite(data).all():  # products or scales beyond float64
        row = int(np.searchsorted(indptr, np.flatnonzero(~np.isfinite(data))[0], "right") - 1)
        raise _error(
            opt,
            part(),
            int(row_line[row]),
            lines_before,
            "a feature value times its namespace scale (or an interaction) overflows",
        )
    if opt.label_dtype is not None:
        if opt.label_dtype.kind in "iu":
            bad = ~(np.isfinite(labels) & (labels == np.round(labels)))
            if bad.any():
                row = int(np.flatnonzero(bad)[0])
                why = (
                    "the line has no label"
                    if np.isnan(labels[row])
                    else f"label {float(labels[row])!r} is not an integer"
                )
                raise _error(opt, part(), int(row_line[row]), lines_before,
                             why + " (pass label_dtype=None to keep float labels, NaN when "
                             "absent)")  # fmt: skip
            row = first_inexact_label(labels)
            if row >= 0:
                raise _error(opt, part(), int(row_line[row]), lines_before,
                             f"label {float(labels[row])!r} is beyond 2**53")  # fmt: skip
        elif np.isnan(labels).any():
            row = int(np.flatnonzero(np.isnan(labels))[0])
            raise _error(opt, part(), int(row_line[row]), lines_before, "the line has no label")
        labels = labels.astype(opt.label_dtype)
    if opt.dtype != data.dtype:
        data = data.astype(opt.dtype)
    block = _VWBlock(data, indices, indptr, labels, weights, row_line + lines_before + 1)
    return block, int(n_lines)


def _iter_vw_blocks(f, opt: _VWOptions, block_size: int | None = None):
    """Parsed blocks of the binary stream ``f``, each with the lines read so far
    (:func:`onlinelearn.io._cut._cut_blocks` with the VW kernel)."""
    if block_size is None:
        block_size = BLOCK_SIZE
    return _cut_blocks(
        f, opt.name, block_size, lambda buf, cut, lines: _parse_part(buf, cut, lines, opt)
    )


def _concat(pieces, opt: _VWOptions):
    """``(X, y, sample_weight, last_line)`` of row ranges ``(block, a, b)``."""
    data = [p.X_data[p.indptr[a] : p.indptr[b]] for p, a, b in pieces]
    indices = [p.indices[p.indptr[a] : p.indptr[b]] for p, a, b in pieces]
    counts = [np.diff(p.indptr[a : b + 1]) for p, a, b in pieces]
    indptr = np.zeros(sum(c.shape[0] for c in counts) + 1, dtype=np.int64)
    if counts:
        np.cumsum(np.concatenate(counts), out=indptr[1:])
    n = indptr.shape[0] - 1
    label_dtype = np.float64 if opt.label_dtype is None else opt.label_dtype
    y = np.concatenate([np.empty(0, dtype=label_dtype)] + [p.labels[a:b] for p, a, b in pieces])
    w = np.concatenate([np.empty(0)] + [p.weights[a:b] for p, a, b in pieces])
    X = sp.csr_matrix(
        (
            np.concatenate([np.empty(0, dtype=opt.dtype)] + data),
            np.concatenate([np.empty(0, dtype=np.int32)] + indices),
            indptr,
        ),
        shape=(n, opt.n_features),
    )
    last_line = int(pieces[-1][0].lines[pieces[-1][2] - 1]) if n else 0
    return X, y, w, last_line


def _iter_row_chunks(blocks, chunk_size: int, opt: _VWOptions, progress: list):
    return _recut(blocks, chunk_size, lambda pieces: _concat(pieces, opt), progress)


class VWChunkReader(_ChunkReaderClose, Iterator):
    """Iterator over ``(X, y)`` (or ``(X, y, sample_weight)``) chunks of a VW text file; see
    :func:`iter_vw_chunks`.  Progress as :class:`onlinelearn.io.SvmlightChunkReader`:
    :attr:`bytes_read`, :attr:`total_bytes`, :attr:`rows_read`, :attr:`lines_read`;
    :attr:`n_features` is ``2**n_bits``; :attr:`sample_weight` holds the importance weights of
    the chunk last returned (None when they are all 1)."""

    def __init__(
        self,
        source,
        chunk_size: int = 10000,
        n_bits: int = 18,
        interactions=None,
        dtype=np.float64,
        label_dtype=np.int64,
        return_weights: bool = False,
        prefetch: bool = False,
    ):
        if not isinstance(chunk_size, int | np.integer) or chunk_size < 1:
            raise ValueError(f"chunk_size must be a positive integer, got {chunk_size!r}")
        check_binary_stream(source)
        self.name = _source_name(source)
        opt = _VWOptions(self.name, n_bits, interactions, dtype, label_dtype)
        self.n_bits = int(n_bits)
        self.n_features = opt.n_features
        self.interactions = check_interactions(interactions)
        self.chunk_size = int(chunk_size)
        self.return_weights = bool(return_weights)
        self.rows_read = 0
        self.lines_read = 0
        self.sample_weight = None
        self._open(source)
        recut = lambda blocks, seen: _iter_row_chunks(blocks, self.chunk_size, opt, seen)  # noqa: E731
        self._start(_iter_vw_blocks(self._file, opt), prefetch, recut)

    def _emit(self, X, y, w):
        """(X, y, w) or (X, y); ``sample_weight``: the chunk's weights, None when all are 1."""
        self.sample_weight = None if bool(np.all(w == 1.0)) else w
        return (X, y, w) if self.return_weights else (X, y)


@_signature_of(VWChunkReader)
def iter_vw_chunks(path, *args, **kwargs) -> VWChunkReader:
    """Stream a Vowpal Wabbit text file as hashed ``(X, y)`` chunks of at most ``chunk_size``
    rows.

    Parameters
    ----------
    path : str, path-like or binary file object
        The file; gzip, bzip2 and xz are recognised (for a path) and undone on the fly.
    chunk_size : int
        Examples per chunk (blank lines do not count).
    n_bits : int, default=18
        ``X`` has ``2**n_bits`` columns (VW's ``-b``), 1 to 30.
    interactions : str or list of str, optional
        Quadratic interactions, each two characters ``"ab"`` (VW's ``-q ab``): every feature of
        the namespaces whose name starts with ``a`` times every feature of those starting with
        ``b`` (each unordered pair once when ``a == b``).
    dtype : float32 or float64
        Dtype of ``X`` (values are computed in float64, summed, then rounded once).
    label_dtype : numpy dtype or None
        Labels are converted to it (default int64: a non-integral or absent label raises; -1/1,
        0/1 and 1..k labels are all read as they are).  None keeps float64 labels, NaN where a
        line has none (for regression, or to predict unlabelled lines).
    return_weights : bool, default=False
        Yield ``(X, y, sample_weight)``: the importance weight of every line (1 if absent).
    prefetch : bool, default=False
        Read and parse the next blocks on a background thread (as the svmlight reader).

    Raises
    ------
    ValueError
        On a malformed line: the message names the file, the 1-based line, what is wrong, and
        quotes the line.  No row of the block (a few MiB) holding the bad line is yielded.
    """
    return VWChunkReader(path, *args, **kwargs)


def load_vw(
    path,
    n_bits: int = 18,
    interactions=None,
    dtype=np.float64,
    label_dtype=np.int64,
    return_weights: bool = False,
):
    """Read a whole VW text file: ``(X, y)`` or ``(X, y, sample_weight)``, ``X`` a CSR matrix of
    ``2**n_bits`` columns; parameters as :func:`iter_vw_chunks`."""
    opt = _VWOptions(_source_name(path), n_bits, interactions, dtype, label_dtype)
    check_binary_stream(path)
    with _opened(path) as (f, _raw):
        pieces = [(b, 0, b.n_rows) for b, _ in _iter_vw_blocks(f, opt)]
    pieces = [p for p in pieces if p[2]]
    if pieces:
        X, y, w, _ = _concat(pieces, opt)
    else:
        X = sp.csr_matrix((0, opt.n_features), dtype=opt.dtype)
        y = np.empty(0, dtype=np.float64 if opt.label_dtype is None else opt.label_dtype)
        w = np.empty(0)
    return (X, y, w) if return_weights else (X, y)
