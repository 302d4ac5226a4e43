"""Opening what the readers read: a path (opened here, gzip, bzip2 or xz recognised by the
file's first bytes and undone on the fly) or a binary stream (read as it is, left open)."""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import BinaryIO

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


def _is_path(source) -> bool:
    """True for a path (the reader opens and closes it), False for a stream of the caller's."""
    return isinstance(source, str | bytes | os.PathLike)


def _source_name(source) -> str:
    if _is_path(source):
        return os.fsdecode(source)
    return str(getattr(source, "name", "<stream>"))


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


def _size_on_disk(raw) -> int | None:
    """Size of the file under ``raw``, or None when it has none (a stream)."""
    try:
        return os.fstat(raw.fileno()).st_size
    except (OSError, AttributeError, io.UnsupportedOperation):
        return None


@contextmanager
def _opened(source) -> Iterator[tuple[BinaryIO, BinaryIO]]:
    """``(stream, raw)`` of ``source``: a path is opened here and closed on exit; a stream is
    both and stays open."""
    if not _is_path(source):
        yield source, source
        return
    f, raw = _open_with_raw(source)
    try:
        yield f, raw
    finally:
        f.close()
        if raw is not f:
            raw.close()
