"""Compiled svmlight / LIBSVM parser over a block of bytes (the hot loop of :mod:`onlinelearn.io`).

What
    :func:`parse_block` turns a block of complete lines ``<label> [qid:<q>] <index>:<value> ...
    [# comment]`` into CSR arrays in one sweep over the bytes, with no Python object per token.
    It follows scikit-learn's reader (``sklearn.datasets.load_svmlight_file``) token for token:
    a line is cut at its first ``#``; tokens are separated by ASCII whitespace (space, tab, CR,
    VT, FF); a line with no token is skipped; the first token is the label; ``qid:<int>`` is
    read only as the first token after the label; every other token is ``<index>:<value>`` with
    a non-negative integer index, the indices strictly increasing along the line.

Numbers
    A value or label is read by the exact fast path of Clinger (1990): an optional sign, at most
    18 decimal digits with an optional point, an optional exponent; when the digits form an
    integer m <= 2^53 and the decimal exponent e satisfies |e| <= 22, m and 10^|e| are exact
    doubles and the one IEEE operation m * 10^e or m / 10^-e is correctly rounded, i.e. equal
    to Python's ``float()`` of the token (then rounded once more to float32 if that is the
    value dtype, as scikit-learn's cast does).  Every other token (more digits, a larger
    exponent, ``nan``, ``inf``, anything unusual) is left to the caller, which applies Python's
    ``float()`` to it: the result is then Python's by construction, or its error.  This module is
    compiled without fastmath (a reciprocal-multiply would break the rounding).  Runs of digits
    (indices, integer and fractional parts) are read 8 bytes at a time (:func:`_digit_run`).

Output
    The caller gives the value and index arrays, with room for the most values a block can hold
    (:func:`block_room`: no count pass), and may pass one pair for a whole file, each block
    written after the previous one; the kernel writes the values directly in their dtype
    (float32 or float64).
    Errors are reported as a code and the byte offset of the line; the caller turns them into a
    message with the line number and the reason.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import types
from numba.core.extending import intrinsic
from numba.cpython.unsafe.numbers import trailing_zeros

from .config import njit

OK = 0
#: a token after the label (or the qid) is not ``<digits>:<value>``
BAD_TOKEN = 1
#: an index is 0 with 1-based indices, or negative
BAD_INDEX = 2
#: indices not strictly increasing along the line
UNSORTED = 3
#: an index beyond the int32 range of the CSR indices
INDEX_OVERFLOW = 4
#: a qid that is not an integer
BAD_QID = 5
#: the block does not end with a newline, its buffer lacks the padding, or the output arrays
#: lack room (a caller's error)
BAD_BUFFER = 6

INT32_MAX = 2147483647
_POW10 = np.array([10.0**k for k in range(23)])
_MAX_EXACT = np.uint64(2**53)

#: bytes a block's buffer must hold after its data: an 8-byte read at its last byte stays inside
PAD = 8
_POW10_U = np.array([10**k for k in range(9)], dtype=np.uint64)
_F0 = np.uint64(0xF0F0F0F0F0F0F0F0)
_X30 = np.uint64(0x3030303030303030)
_X06 = np.uint64(0x0606060606060606)
_X0F = np.uint64(0x0F0F0F0F0F0F0F0F)
_LOW8 = np.uint64(0x00FF00FF00FF00FF)
_LOW16 = np.uint64(0x0000FFFF0000FFFF)

_NL = 10
_HASH = 35
_COLON = 58


@njit(inline="always")
def _is_space(c):
    return c == 32 or c == 9 or c == 13 or c == 11 or c == 12


@njit(inline="always")
def _skip_space(buf, p):
    """``(p, c)``: the first byte at or after ``p`` that is not whitespace (a newline is not),
    and its value."""
    c = _at(buf, p)
    while _is_space(c):
        p += 1
        c = _at(buf, p)
    return p, c


@njit(inline="always")
def _line_end(buf, p):
    """The offset of the newline at or after ``p``."""
    while _at(buf, p) != _NL:
        p += 1
    return p


@njit(inline="always")
def _is_digit(c):
    return 48 <= c <= 57


@njit(inline="always")
def _ends_token(c):
    """True when the byte c ends a token: whitespace, newline or '#'."""
    return c == 32 or c == _NL or c == _HASH or c == 9 or c == 13 or c == 11 or c == 12


@intrinsic
def _load8(typingctx, buf, i):
    """The 8 bytes ``buf[i : i + 8]`` as one little-endian uint64 (an unaligned load, no bound
    check: the caller guarantees them, see :data:`PAD`)."""
    if not (isinstance(buf, types.Array) and buf.dtype == types.uint8):
        return None
    sig = types.uint64(buf, types.intp)

    def codegen(context, builder, sig, args):
        arr = context.make_array(sig.args[0])(context, builder, args[0])
        ptr = builder.gep(arr.data, [args[1]])
        return builder.load(builder.bitcast(ptr, ir.IntType(64).as_pointer()), align=1)

    return sig, codegen


@intrinsic
def _at(typingctx, buf, i):
    """``buf[i]`` for a non-negative ``i`` inside the buffer: one load, without the wraparound
    of negative indices that numba's indexing adds."""
    if not (isinstance(buf, types.Array) and buf.dtype == types.uint8):
        return None
    sig = types.uint8(buf, types.intp)

    def codegen(context, builder, sig, args):
        arr = context.make_array(sig.args[0])(context, builder, args[0])
        return builder.load(builder.gep(arr.data, [args[1]]))

    return sig, codegen


@intrinsic
def _set(typingctx, arr, i, v):
    """``arr[i] = v`` (``v`` converted to the array's dtype as numba's assignment does) for a
    non-negative ``i`` inside the array, without the negative-index wraparound."""
    if not (isinstance(arr, types.Array) and arr.ndim == 1):
        return None
    sig = types.void(arr, types.intp, v)

    def codegen(context, builder, sig, args):
        a = context.make_array(sig.args[0])(context, builder, args[0])
        val = context.cast(builder, args[2], sig.args[2], sig.args[0].dtype)
        builder.store(val, builder.gep(a.data, [args[1]]))
        return context.get_dummy_value()

    return sig, codegen


@njit(inline="always")
def _sign(buf, i):
    """``(negative, i')``: whether the byte at ``i`` is a '-', and the offset after an optional
    '+' or '-' there."""
    c = _at(buf, i)
    if c == 43 or c == 45:  # + -
        return c == 45, i + 1
    return False, i


@njit(inline="always")
def _digit_run(buf, i, m):
    """``(m', k, i')``: the run of decimal digits at ``buf[i]`` appended to ``m`` (uint64, so
    ``m' = m 10^k + digits``, wrapping beyond 19 digits), ``k`` digits, ``i'`` the first byte
    after them.  Eight bytes at a time (SWAR, after Lemire's eight-digit conversion): a byte is
    a digit when its high nibble is 3 and its low nibble plus 6 stays below 16; the digits of a
    word are shifted to its top (the bytes below read as leading zeros) and combined pairwise
    with three multiplications."""
    k = 0
    while True:
        w = _load8(buf, i)
        bad = ((w & _F0) ^ _X30) | (((w + _X06) & _F0) ^ _X30)
        run = 8 if bad == 0 else np.int64(trailing_zeros(bad)) >> 3
        if run == 0:
            break
        v = (w << np.uint64(64 - 8 * run)) & _X0F
        v = (v * np.uint64(2561)) >> np.uint64(8)
        v = ((v & _LOW8) * np.uint64(6553601)) >> np.uint64(16)
        v = ((v & _LOW16) * np.uint64(42949672960001)) >> np.uint64(32)
        m = m * _POW10_U[run] + v
        k += run
        i += run
        if run < 8:
            break
    return m, k, i


@njit(fastmath=False, inline="always")
def fast_float(buf, s):
    """(ok, value, end) for the number starting at ``buf[s]``, by Clinger's exact fast path.

    Reads an optional sign, digits with an optional point, an optional exponent, and stops at
    the first other byte (``end``); the data must end with a byte that is none of these (the
    newline the blocks end with), so no scan needs a bound.  ok is False when the number is not
    of that simple form or outside the exact range (the caller then applies Python's
    ``float()`` to the whole token); the caller also checks that ``end`` ends the token."""
    neg, i = _sign(buf, s)
    # every digit goes into m (leading zeros add nothing); more than 18 digits in all could
    # overflow int64 and is left to Python
    m, n_digits, i = _digit_run(buf, i, np.uint64(0))
    c = _at(buf, i)
    exp10 = 0
    if c == 46:  # .
        m, n_frac, i = _digit_run(buf, i + 1, m)
        c = _at(buf, i)
        exp10 = -n_frac
        n_digits += n_frac
    if n_digits == 0:
        return False, 0.0, i
    if c == 101 or c == 69:  # e E
        eneg, i = _sign(buf, i + 1)
        c = _at(buf, i)
        if not _is_digit(c):
            return False, 0.0, i
        ev = 0
        while _is_digit(c):
            if ev < 100000:
                ev = ev * 10 + (c - 48)
            i += 1
            c = _at(buf, i)
        exp10 += -ev if eneg else ev
    if n_digits > 18 or m > _MAX_EXACT:
        return False, 0.0, i
    if m == 0:
        return True, -0.0 if neg else 0.0, i
    v = float(np.int64(m))
    if exp10 > 0:
        if exp10 > 22:
            return False, 0.0, i
        v = v * _POW10[exp10]
    elif exp10 < 0:
        if exp10 < -22:
            return False, 0.0, i
        v = v / _POW10[-exp10]
    return True, -v if neg else v, i


@njit
def block_room(n):
    """The most values a block of ``n`` bytes can hold: each takes a digit, ``:`` and a
    separator at least."""
    return n // 3 + 1


@njit(inline="always")
def _grown(a, size, used):
    """A copy of ``a`` with ``size`` rows, the first ``used`` of them copied."""
    out = np.empty((size,) + a.shape[1:], dtype=a.dtype)
    out[:used] = a[:used]
    return out


@njit(fastmath=False)
def parse_block(buf, n, zero_based, multilabel, query_id, data, indices, nnz0):
    """Parse the complete lines of ``buf[:n]`` (uint8) into ``data[nnz0:]``, ``indices[nnz0:]``.

    ``buf[n - 1]`` must be a newline (the caller appends one to a last line without it): every
    scan inside a line stops there, so none needs a bound; and ``buf`` must hold :data:`PAD`
    bytes more (of any value) for the 8-byte reads of the digit runs.  ``data`` (float32 or
    float64; a value is computed in float64 and rounded once to that dtype) and ``indices``
    (int32) must have room for ``n // 3 + 1`` values after ``nnz0`` (every value takes at
    least 3 bytes: a digit, ``:`` and a separator), so no count pass is needed; the row arrays
    grow as they fill.  Otherwise nothing is written and the status is :data:`BAD_BUFFER`.
    Returns ``(status, err_offset, n_lines, nnz, indptr, labels, label_span, row_line, slow,
    qid, has_qid, max_index)``:

    * ``n_lines`` the lines read, ``nnz`` the end of the rows written, ``indptr`` int64
      (rows + 1) offsets in ``data`` starting at ``nnz0``; indices are 0-based (1 is
      subtracted unless ``zero_based``);
    * ``labels`` float64 (NaN where the label token was left to Python), ``label_span`` (rows,
      2) byte range of each label token (empty for a multi-label line without labels);
    * ``row_line`` the 0-based line of each row within the block;
    * ``slow`` (k, 3): position in ``data``, start, end of the values left to Python (NaN is
      written in their place);
    * ``qid``, ``has_qid`` per row; ``max_index`` the largest 0-based index written (-1 if
      none);
    * ``status`` one of the codes above and ``err_offset`` the offset of the first bad line.
    ``multilabel``: a first token holding ``:`` is a feature (the line has no labels).
    ``query_id``: a qid that is not an integer is an error (otherwise the token is skipped
    unread, as scikit-learn does).
    """
    cap = n // 64 + 16  # rows; grown by doubling
    indptr = np.empty(cap + 1, dtype=np.int64)
    indptr[0] = nnz0
    labels = np.empty(cap, dtype=np.float64)
    label_span = np.empty((cap, 2), dtype=np.int64)
    row_line = np.empty(cap, dtype=np.int64)
    slow = np.empty((16, 3), dtype=np.int64)
    qid = np.empty(cap, dtype=np.int64)
    has_qid = np.empty(cap, dtype=np.bool_)
    lowest = 0 if zero_based else 1
    max_index = np.int64(-1)
    nnz = nnz0
    n_slow = 0
    row = 0
    line = 0
    pos = 0
    status = OK
    err = 0
    room = block_room(n)
    if (n > 0 and (buf[n - 1] != _NL or buf.shape[0] < n + PAD)) or min(
        data.shape[0], indices.shape[0]
    ) < nnz0 + room:
        return (BAD_BUFFER, n - 1, 0, nnz, indptr[:1], labels[:0], label_span[:0], row_line[:0],
                slow[:0], qid[:0], has_qid[:0], max_index)  # fmt: skip
    while pos < n:
        line_start = pos
        # the line ends at its newline; its data at the first '#'
        p, c = _skip_space(buf, pos)
        if c == _NL or c == _HASH:
            pos = _line_end(buf, p) + 1
            line += 1
            continue
        if row == cap:
            cap *= 2
            indptr = _grown(indptr, cap + 1, row + 1)
            labels = _grown(labels, cap, row)
            label_span = _grown(label_span, cap, row)
            row_line = _grown(row_line, cap, row)
            qid = _grown(qid, cap, row)
            has_qid = _grown(has_qid, cap, row)
        qid[row] = 0
        has_qid[row] = False
        # ---- label
        s = p
        has_colon = False
        while not _ends_token(c):
            has_colon |= c == _COLON
            p += 1
            c = _at(buf, p)
        label_span[row, 0] = s
        if multilabel and has_colon:
            p = s  # no labels: the token is a feature
            label_span[row, 1] = s
            labels[row] = np.nan
        else:
            label_span[row, 1] = p
            ok, v, q = fast_float(buf, s)
            labels[row] = v if (ok and q == p and not multilabel) else np.nan
        row_line[row] = line
        # ---- features
        prev = np.int64(-1)
        first = True
        while True:
            p, c = _skip_space(buf, p)
            if c == _NL or c == _HASH:
                break
            # qid:<int> as the first token after the label
            if (
                first
                and c == 113
                and _at(buf, p + 1) == 105
                and _at(buf, p + 2) == 100
                and _at(buf, p + 3) == _COLON
            ):
                qneg, p = _sign(buf, p + 4)
                c = _at(buf, p)
                qv = np.int64(0)
                nq = 0
                while _is_digit(c) and nq < 18:
                    qv = qv * 10 + (c - 48)
                    nq += 1
                    p += 1
                    c = _at(buf, p)
                if nq == 0 or not _ends_token(c):
                    if query_id:
                        status = BAD_QID
                        err = line_start
                        break
                    while not _ends_token(_at(buf, p)):
                        p += 1
                    first = False
                    continue
                qid[row] = -qv if qneg else qv
                has_qid[row] = True
                first = False
                continue
            first = False
            # index
            if c == 43:  # '+'
                p += 1
                c = _at(buf, p)
            if c == 45:  # a negative index
                status = BAD_INDEX
                err = line_start
                break
            s = p
            mu, nd, p = _digit_run(buf, p, np.uint64(0))
            c = _at(buf, p)
            idx = np.int64(mu)
            if nd > 18:  # could wrap: read again, saturating (leading zeros keep it small)
                idx = np.int64(0)
                for q in range(s, p):
                    if idx <= INT32_MAX:
                        idx = idx * 10 + (_at(buf, q) - 48)
            if nd == 0 or c != _COLON:
                status = BAD_TOKEN
                err = line_start
                break
            if idx > INT32_MAX + lowest:
                status = INDEX_OVERFLOW
                err = line_start
                break
            if idx < lowest:
                status = BAD_INDEX
                err = line_start
                break
            if idx <= prev:
                status = UNSORTED
                err = line_start
                break
            prev = idx
            p += 1
            s = p
            ok, v, p = fast_float(buf, s)
            if not (ok and _ends_token(_at(buf, p))):
                while not _ends_token(_at(buf, p)):
                    p += 1
                if n_slow == slow.shape[0]:
                    grown = np.empty((2 * n_slow, 3), dtype=np.int64)
                    grown[:n_slow] = slow
                    slow = grown
                slow[n_slow, 0] = nnz
                slow[n_slow, 1] = s
                slow[n_slow, 2] = p
                n_slow += 1
                v = np.nan
            _set(data, nnz, v)
            _set(indices, nnz, idx - lowest)
            nnz += 1
        if status != OK:
            break
        if prev - lowest > max_index:
            max_index = prev - lowest
        row += 1
        indptr[row] = nnz
        pos = _line_end(buf, p) + 1
        line += 1
    return (
        status,
        err,
        line,
        nnz,
        indptr[: row + 1],
        labels[:row],
        label_span[:row],
        row_line[:row],
        slow[:n_slow],
        qid[:row],
        has_qid[:row],
        max_index,
    )
