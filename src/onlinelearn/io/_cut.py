"""A byte stream cut into blocks of complete lines, each handed to a parser: the one loop the
svmlight reader (:mod:`onlinelearn.io._blocks`) and the VW reader (:mod:`onlinelearn.io.vw`)
share, with its buffer that grows for a line longer than a block."""

from __future__ import annotations

import lzma
import zlib
from collections.abc import Iterator

import numpy as np

from .._core import svmlight as K


def _fill(f, buf: np.ndarray, lo: int, hi: int) -> int:
    """Read from ``f`` into ``buf[lo:hi]`` until it is full or the stream ends; bytes read."""
    readinto = getattr(f, "readinto", None)
    got = lo
    if readinto is None:  # a stream with only read()
        while got < hi:
            raw = f.read(hi - got)
            if not raw:
                break
            buf[got : got + len(raw)] = np.frombuffer(raw, dtype=np.uint8)
            got += len(raw)
        return got - lo
    view = memoryview(buf)
    while got < hi:
        k = readinto(view[got:hi])
        if not k:
            break
        got += k
    return got - lo


def _last_newline(buf: np.ndarray, have: int) -> int:
    """Index of the last newline in ``buf[:have]``, -1 if none (searched from the end)."""
    hi = have
    step = 1 << 12
    while hi > 0:
        lo = max(0, hi - step)
        k = buf[lo:hi].tobytes().rfind(b"\n")
        if k >= 0:
            return lo + k
        hi = lo
        step *= 4
    return -1


def _cut_blocks(f, name: str, block_size: int, parse) -> Iterator[tuple[object, int]]:
    """``(parse(buf, cut, lines_before), lines read so far)`` for the blocks of complete lines
    of the binary stream ``f``; ``parse`` returns ``(block, lines in it)``.  Shared by the
    svmlight and the VW readers.

    Reads ``block_size`` bytes at a time into one buffer (``readinto``: the file's bytes are
    copied once); the part after the last newline moves to the buffer's front for the next
    read (a line longer than the buffer makes it grow until its end is in), so memory is
    bounded by the block size and the longest line.  The buffer keeps one byte more, for the
    newline a last line without one is given, and ``K.PAD`` for the kernels' 8-byte reads."""
    cap = max(1, int(block_size))
    buf = np.empty(cap + 1 + K.PAD, dtype=np.uint8)
    have = 0
    lines_before = 0
    eof = False
    while not eof:
        if have == cap:  # no newline in a full buffer: a line longer than it
            grown = np.empty(2 * cap + 1 + K.PAD, dtype=np.uint8)
            grown[:have] = buf[:have]
            buf, cap = grown, 2 * cap
        try:
            got = _fill(f, buf, have, cap)
        except (EOFError, OSError, lzma.LZMAError, zlib.error) as exc:
            if isinstance(exc, FileNotFoundError | PermissionError):
                raise
            line = lines_before + int(np.count_nonzero(buf[:have] == 10))
            raise ValueError(
                f"{name}: the compressed data is corrupted or truncated after line {line}: {exc}"
            ) from None
        have += got
        if got == 0 or have < cap:  # a short fill: the stream has ended
            eof = True
            if have == 0:
                return
            if buf[have - 1] != 10:
                buf[have] = 10
                have += 1
            cut = have
        else:
            cut = _last_newline(buf, have) + 1
            if cut == 0:
                continue
        block, n_lines = parse(buf, cut, lines_before)
        lines_before += n_lines
        rest = have - cut
        if cap > block_size and rest < block_size:  # back to the block size after a long line
            cap = max(1, int(block_size))
            buf = np.concatenate([buf[cut:have], np.empty(cap + 1 + K.PAD - rest, dtype=np.uint8)])
        elif rest:
            buf[:rest] = buf[cut:have].copy()
        have = rest
        yield block, lines_before
