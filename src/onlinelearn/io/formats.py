"""Input formats of the command line: ``--format NAME`` -> a chunk reader.

A format is one function ``reader(source, *, chunk_size, n_features, task, prefetch)`` returning
an iterator of ``(X, y)`` chunks (X a CSR matrix of ``n_features`` columns) that also has
``lines_read``, ``bytes_read``, ``total_bytes`` and ``close()`` (as
:class:`onlinelearn.io.SvmlightChunkReader`), and one function ``n_features(source, task)``
that scans a file for its width (None when the format fixes it, e.g. by hashing).  ``task`` is
``'classification'`` (integer labels), ``'regression'`` (real targets) or ``'ranking'``
(multi-label rows: tuples of labels).  Adding a format is one entry of :data:`FORMATS`.

``source`` is a path or a binary stream; :func:`open_stdin` gives standard input as one,
decompressed when its first bytes are those of gzip, bzip2 or xz.  This module imports nothing
heavy at import time (the command line builds ``--format``'s choices from it).
"""

from __future__ import annotations

import io
import sys
from typing import NamedTuple

__all__ = ["FORMATS", "Format", "chunk_reader", "open_stdin", "scan_n_features"]


class Format(NamedTuple):
    reader: object  # (source, *, chunk_size, n_features, task, prefetch) -> chunk iterator
    n_features: object  # (source, task) -> int, or None when the format fixes the width


def _svmlight_reader(source, *, chunk_size, n_features, task, prefetch=False):
    import numpy as np

    from . import iter_svmlight_chunks

    return iter_svmlight_chunks(
        source,
        chunk_size=chunk_size,
        n_features=n_features,
        label_dtype=np.int64 if task == "classification" else None,
        multilabel=task == "ranking",
        prefetch=prefetch,
    )


def _svmlight_n_features(source, task) -> int:
    from . import svmlight_n_features

    return svmlight_n_features(source, multilabel=task == "ranking")


def _vw_reader(source, *, chunk_size, n_features, task, prefetch=False, interactions=None):
    """Vowpal Wabbit text hashed into ``n_features`` (a power of two) columns
    (:mod:`onlinelearn.io.vw`); ``interactions`` as VW's ``-q``."""
    import numpy as np

    from .vw import iter_vw_chunks

    if task == "ranking":
        raise ValueError("the VW format has no multi-label rows; use svmlight for label ranking")
    bits = int(n_features).bit_length() - 1
    if n_features < 2 or 1 << bits != n_features:
        raise ValueError(
            f"{n_features} features is not a power of two: not a model trained on --format vw"
        )
    return iter_vw_chunks(
        source,
        chunk_size=chunk_size,
        n_bits=bits,
        interactions=interactions,
        label_dtype=np.int64 if task == "classification" else None,
        prefetch=prefetch,
    )


#: ``--format`` name -> :class:`Format`
FORMATS: dict[str, Format] = {
    "svmlight": Format(_svmlight_reader, _svmlight_n_features),
    "vw": Format(_vw_reader, None),  # the width is 2**bits, fixed by hashing
}


def _format(fmt: str) -> Format:
    try:
        return FORMATS[fmt]
    except KeyError:
        raise ValueError(f"unknown format {fmt!r} (known: {', '.join(FORMATS)})") from None


def chunk_reader(fmt, source, *, chunk_size, n_features, task, prefetch=False, **options):
    """The chunk reader of format ``fmt`` over ``source`` (a path or a binary stream);
    ``options`` go to that format's reader (``interactions`` for ``vw``)."""
    return _format(fmt).reader(
        source, chunk_size=chunk_size, n_features=n_features, task=task, prefetch=prefetch,
        **options,
    )  # fmt: skip


def scan_n_features(fmt, source, task="classification") -> int | None:
    """The number of columns of ``source`` in format ``fmt`` (one pass), or None when the format
    fixes it without reading."""
    scan = _format(fmt).n_features
    return None if scan is None else scan(source, task)


def open_stdin(stream=None):
    """Standard input (or ``stream``) as a binary stream, decompressed on the fly when its first
    bytes are those of a gzip, bzip2 or xz stream (as files are)."""
    import bz2
    import gzip
    import lzma

    from ._open import _compression_of

    raw = stream if stream is not None else sys.stdin.buffer
    if not hasattr(raw, "peek"):
        raw = io.BufferedReader(raw)
    kind = _compression_of(raw.peek(6)[:6])
    if kind is None:
        return raw
    if kind == "gzip":
        unpacked = gzip.GzipFile(fileobj=raw, mode="rb")
    elif kind == "bz2":
        unpacked = bz2.BZ2File(raw, mode="rb")
    else:
        unpacked = lzma.LZMAFile(raw, mode="rb")
    # the decompressors' ``mode`` is not a string (GzipFile's is an int): show "rb"
    return io.BufferedReader(_Unpacked(unpacked), 1 << 20)


class _Unpacked(io.RawIOBase):
    """A decompressing stream as a raw binary stream of mode ``'rb'``."""

    mode = "rb"

    def __init__(self, f):
        self._f = f

    def readable(self):
        return True

    def readinto(self, b):
        return self._f.readinto(b)

    def close(self):
        self._f.close()
        super().close()
