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
from collections.abc import Iterator
from typing import BinaryIO

import numpy as np
import scipy.sparse as sp
from sklearn.datasets import dump_svmlight_file

from ..shell.validation import check_binary_stream
from ._blocks import (
    _KERNEL_DTYPES,
    _ChunkReaderClose,
    _concat,
    _Growing,
    _iter_blocks,
    _iter_row_chunks,
    _Options,
    _signature_of,
    _whole,
)
from ._open import _is_path, _open_with_raw, _opened, _source_name

__all__ = [
    "SvmlightChunkReader",
    "dump_svmlight",
    "iter_svmlight_chunks",
    "load_svmlight",
    "open_maybe_compressed",
    "svmlight_n_features",
]


def open_maybe_compressed(path) -> BinaryIO:
    """Open ``path`` for reading bytes, decompressing gzip, bzip2 or xz on the fly.

    The compression is recognised from the file's first bytes, so a misnamed file still works.
    Raises :class:`FileNotFoundError` if the file does not exist.
    """
    return _open_with_raw(path)[0]


class SvmlightChunkReader(_ChunkReaderClose, Iterator):
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
        prefetch: bool = False,
        multilabel: bool = False,
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
        self.multilabel = bool(multilabel)
        if self.multilabel:
            label_dtype = None  # the labels are tuples of floats (as load_svmlight's)
        self.label_dtype = None if label_dtype is None else np.dtype(label_dtype)
        self.allow_nonfinite = allow_nonfinite
        self.rows_read = 0
        self.lines_read = 0
        if n_features is None:
            n_features = svmlight_n_features(source, zero_based=zero_based)
            if not _is_path(source):
                source.seek(0)
        self.n_features = int(n_features)
        opt = _Options(self.name, self.n_features, dtype, zero_based, label_dtype,
                       allow_nonfinite, self.multilabel)  # fmt: skip
        self._open(source)
        recut = lambda blocks, seen: _iter_row_chunks(  # noqa: E731
            blocks, self.chunk_size, opt, self.n_features, seen
        )
        self._start(_iter_blocks(self._file, opt), prefetch, recut)

    # -- iteration (``__next__``, ``bytes_read``: the shared _ChunkReaderClose) --------------
    def _emit(self, X, y, qid) -> tuple[sp.csr_matrix, np.ndarray]:
        return X, y


@_signature_of(SvmlightChunkReader)
def iter_svmlight_chunks(path, *args, **kwargs) -> SvmlightChunkReader:
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
    prefetch : bool
        If True, a background thread reads and parses the next blocks (at most two, 4 MiB of
        text each) while the caller works on the current chunk; the reading and the compiled
        parser release the GIL, so with two cores parsing overlaps learning, as in Vowpal
        Wabbit's driver.  Errors are raised at the same chunk as without it.  Default False
        (one thread).
    multilabel : bool
        If True, labels are comma-separated lists (``1,3``) and ``y`` is a list of sorted tuples
        of floats, as :func:`load_svmlight` with ``multilabel=True`` (``label_dtype`` does not
        apply).

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
    The file is read in blocks of 4 MiB, each parsed by one compiled call,
    so memory is bounded by a block plus a chunk.  The returned :class:`SvmlightChunkReader`
    also reports progress (``bytes_read``, ``total_bytes``, ``rows_read``) and can be used as a
    context manager to close the file early.
    """
    return SvmlightChunkReader(path, *args, **kwargs)


def _bytes_left(f) -> int | None:
    """Bytes from the position of the (uncompressed) binary stream ``f`` to its end, or None
    when it cannot say (a pipe)."""
    try:
        if hasattr(f, "fileno"):
            return max(0, os.fstat(f.fileno()).st_size - f.tell())
    except (OSError, AttributeError, io.UnsupportedOperation):
        pass
    try:
        if f.seekable():
            here = f.tell()
            end = f.seek(0, os.SEEK_END)
            f.seek(here)
            return max(0, end - here)
    except (OSError, AttributeError, io.UnsupportedOperation):
        pass
    return None


def _blocks_of(source, opt: _Options, sink: bool = False):
    """Parsed blocks of a path (opened, decompressed and closed here) or a binary stream.

    With ``sink``, the first item is the :class:`_Growing` the values are parsed into (sized
    from the bytes left when it is a plain file or a seekable stream), then the blocks."""
    with _opened(source) as (f, raw):
        out = None
        if sink:
            out = _Growing(opt.dtype, _bytes_left(f) if f is raw else None)
            yield out
        yield from _iter_blocks(f, opt, out=out)


def svmlight_n_features(
    path, zero_based: bool = False, chunk_size: int = 10000, *, multilabel: bool = False
) -> int:
    """Highest feature index in an svmlight file, as a number of columns (one pass over it).

    The result can be lower than the true dimension of the data set, so prefer a known value.
    Returns at least 1.  ``chunk_size`` is accepted for compatibility and unused (the file is
    read in blocks of bytes).  ``multilabel``: the labels are comma-separated lists (``1,3``).
    """
    opt = _Options(_source_name(path), None, np.float64, zero_based, None, True, multilabel)
    width = 1
    for block, _ in _blocks_of(path, opt):
        width = max(width, block.max_index + 1)
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
    sink = opt.dtype in _KERNEL_DTYPES
    blocks = list(_blocks_of(path, opt, sink=sink))
    out = blocks.pop(0) if sink else None
    blocks = [b for b, _ in blocks]
    width = n_features
    if width is None:
        width = max([1] + [b.max_index + 1 for b in blocks])
    blocks = [b for b in blocks if b.n_rows]
    if blocks and out is not None:
        X, y, qid = _whole(blocks, out, opt, width)
    elif blocks:
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
