"""Compiled reader of Vowpal Wabbit's text format over a block of bytes, with the features hashed
as scikit-learn's ``FeatureHasher`` hashes them (the hot loop of :mod:`onlinelearn.io.vw`).

Format (one example per line; blank lines are skipped)::

    [label [importance]] [tag]|ns[:scale] name[:value] name[:value] ... |ns2 ...

* The *header* is everything before the first ``|``, cut at whitespace.  Its last token is the
  tag when it touches the ``|`` or starts with ``'`` (as in VW); the tag is read and ignored.
  The tokens left are the label (absent: an unlabelled line, label NaN) and the importance
  weight (default 1; it must be >= 0).  A third number (VW's initial prediction) is an error.
* Every ``|`` opens a namespace.  Its name is the bytes after the ``|`` up to whitespace or
  ``:``; an empty name (``|`` followed by whitespace) is the default namespace.  ``|ns:s``
  multiplies every value of the namespace by ``s``.
* A feature is ``name`` (value 1) or ``name:value``, cut at the first ``:``; a name ends at
  whitespace, ``:`` or ``|``.  A value of 0 (after the namespace's scale) drops the feature.

Hashing (the contract shared with :class:`onlinelearn.features.Hasher`)
    The feature ``name`` of namespace ``ns`` is the byte string ``ns + b"^" + name`` (just
    ``name`` in the default namespace); its hash h is MurmurHash3_x86_32 of those bytes with
    seed 0, its column ``|h| mod 2^b``, its value ``sign(h) * value * scale`` (sign +1 for
    h >= 0): scikit-learn's ``FeatureHasher(n_features=2**b, alternate_sign=True)`` on the
    pair ``(string, value * scale)``.  An interaction ``(a, b)`` (``-q ab``) adds, for every
    feature i of the namespaces whose name starts with the byte ``a`` and every feature j of
    those starting with ``b``, the feature ``string_i + b"*" + string_j`` with value
    ``v_i * v_j`` (only ``j >= i`` in the line's order when ``a == b``, as VW: each unordered
    pair once, squares kept).  Equal columns of a row are summed and the columns sorted.

Numbers
    Labels, weights, scales and values are read by :func:`onlinelearn._core.svmlight.fast_float`
    (Clinger's exact fast path: the value is Python's ``float()`` of the token).  A token outside
    it is recorded in ``slow`` (its role, byte span and line) and NaN stands for it; the caller
    reads those with ``float()`` and calls the kernel again with them in ``overrides`` (in the
    order they were recorded), so every number is exactly Python's.

Errors
    A status code and the byte offset of the bad line's start; nothing of that line is written.
"""

from __future__ import annotations

import numpy as np

from .config import njit
from .hashing import murmur3_32, murmur3_feed, murmur3_finish
from .svmlight import PAD, _at, _is_space, fast_float

OK = 0
#: a line with data but no ``|``
NO_BAR = 1
#: more than label, importance and tag before the first ``|``
HEADER = 2
#: a feature token with an empty name (``:2``, ``|ns :1``)
EMPTY_NAME = 3
#: ``name:`` with nothing after the colon
EMPTY_VALUE = 4
#: a negative importance weight
NEG_WEIGHT = 5
#: the block does not end with a newline or its buffer lacks the padding (a caller's error)
BAD_BUFFER = 6

#: roles of the numbers left to Python (column 0 of ``slow``)
LABEL, WEIGHT, SCALE, VALUE = 0, 1, 2, 3

_NL = 10
_BAR = 124
_COLON = 58
_QUOTE = 39
_CARET = 94
_STAR = 42
_LOW32 = np.int64(0xFFFFFFFF)


def _table(stops: bytes) -> np.ndarray:
    t = np.zeros(256, dtype=np.bool_)
    t[list(stops)] = True
    return t


#: bytes that end a name (of a feature or a namespace): whitespace, newline, ':', '|'
_ENDS_NAME = _table(b" \t\r\x0b\x0c\n:|")
#: bytes that end a number after ':': whitespace, newline, '|'
_ENDS_VALUE = _table(b" \t\r\x0b\x0c\n|")


@njit(inline="always")
def _grow(a, used):
    out = np.empty((2 * a.shape[0] + 16,) + a.shape[1:], dtype=a.dtype)
    out[:used] = a[:used]
    return out


@njit
def _sort_keys(keys, tmp, count, m, bits):
    """Sort ``keys[:m]`` (``column << 32 | position``, columns below ``2**bits``) by column,
    stably: insertion sort for a short row, else an LSD radix sort on 8-bit digits of the
    column (``tmp`` and ``count`` (256) are workspace).  A comparison sort of every row was
    half of the reader's time on raw text."""
    if m <= 32:
        for i in range(1, m):
            k = keys[i]
            j = i - 1
            while j >= 0 and keys[j] >> 32 > k >> 32:
                keys[j + 1] = keys[j]
                j -= 1
            keys[j + 1] = k
        return
    n_pass = 0
    shift = 32
    while shift < 32 + bits:
        src = keys if n_pass % 2 == 0 else tmp
        dst = tmp if n_pass % 2 == 0 else keys
        count[:] = 0
        for i in range(m):
            count[(src[i] >> shift) & 255] += 1
        total = 0
        for d in range(256):
            c = count[d]
            count[d] = total
            total += c
        for i in range(m):
            d = (src[i] >> shift) & 255
            dst[count[d]] = src[i]
            count[d] += 1
        shift += 8
        n_pass += 1
    if n_pass % 2 == 1:
        keys[:m] = tmp[:m]


@njit(inline="always")
def _feed_name(h, carry, t, buf, ns_s, ns_e, s, e):
    """Feed the feature string ``ns^name`` (or ``name``) to the hash state."""
    if ns_e > ns_s:
        for q in range(ns_s, ns_e):
            h, carry, t = murmur3_feed(h, carry, t, buf[q])
        h, carry, t = murmur3_feed(h, carry, t, _CARET)
    for q in range(s, e):
        h, carry, t = murmur3_feed(h, carry, t, buf[q])
    return h, carry, t


@njit(inline="always")
def _put_name(scratch, k, buf, ns_s, ns_e, s, e):
    """Write the feature string ``ns^name`` (or ``name``) into ``scratch[k:]``; the end."""
    if ns_e > ns_s:
        for q in range(ns_s, ns_e):
            scratch[k] = buf[q]
            k += 1
        scratch[k] = _CARET
        k += 1
    for q in range(s, e):
        scratch[k] = buf[q]
        k += 1
    return k


@njit(fastmath=False)
def parse_vw_block(buf, n, n_features, inter, overrides):
    """Parse the complete lines of ``buf[:n]`` (uint8; ``buf[n - 1]`` a newline, :data:`PAD`
    bytes more after it) into hashed CSR rows of ``n_features`` columns (a power of two: the
    column ``|h| mod n_features`` of :func:`onlinelearn._core.hashing.column_sign` is then
    ``|h| & (n_features - 1)``, also for ``h = -2^31``).

    ``inter`` (k, 2) int64: the first bytes of the namespaces of each interaction.
    ``overrides`` float64: the values of the tokens left to Python by a previous call on the
    same block (empty on a first call).  Returns ``(status, err_offset, n_lines, indptr,
    indices, data, labels, weights, row_line, slow)``: ``indptr`` int64 from 0, ``indices``
    int32 (sorted, unique per row), ``data`` float64, ``labels`` (NaN: no label, or a token left
    to Python), ``weights``, ``row_line`` the 0-based line of every row in the block, ``slow``
    (m, 4) int64: role, start, end, 0-based line of every number left to Python.
    """
    cap = n // 64 + 16
    indptr = np.zeros(cap + 1, dtype=np.int64)
    labels = np.empty(cap, dtype=np.float64)
    weights = np.empty(cap, dtype=np.float64)
    row_line = np.empty(cap, dtype=np.int64)
    dcap = n // 4 + 16
    indices = np.empty(dcap, dtype=np.int32)
    data = np.empty(dcap, dtype=np.float64)
    slow = np.empty((16, 4), dtype=np.int64)
    # the features of the current line
    f_hash = np.empty(64, dtype=np.int64)
    f_val = np.empty(64, dtype=np.float64)
    f_span = np.empty((64, 4), dtype=np.int64)  # ns start, ns end, name start, name end
    f_first = np.empty(64, dtype=np.int64)  # first byte of the namespace's name (-1: default)
    scratch = np.empty(256, dtype=np.uint8)
    r_col = np.empty(64, dtype=np.int64)
    r_tmp = np.empty(64, dtype=np.int64)
    count = np.empty(256, dtype=np.int64)
    bits = 0
    while (np.int64(1) << bits) < n_features:
        bits += 1
    r_val = np.empty(64, dtype=np.float64)
    mask = np.int64(n_features - 1)  # n_features is a power of two: |h| mod n = |h| & mask
    n_slow = 0
    n_over = overrides.shape[0]
    nnz = 0
    row = 0
    line = 0
    pos = 0
    status = OK
    err = 0
    if n > 0 and (buf[n - 1] != _NL or buf.shape[0] < n + PAD):
        return (BAD_BUFFER, n - 1, 0, indptr[:1], indices[:0], data[:0], labels[:0],
                weights[:0], row_line[:0], slow[:0])  # fmt: skip
    while pos < n:
        line_start = pos
        p = pos
        c = _at(buf, p)
        while _is_space(c):
            p += 1
            c = _at(buf, p)
        if c == _NL:
            pos = p + 1
            line += 1
            continue
        bar = p
        while _at(buf, bar) != _BAR and _at(buf, bar) != _NL:
            bar += 1
        if _at(buf, bar) == _NL:
            status = NO_BAR
            err = line_start
            break
        eol = bar
        while _at(buf, eol) != _NL:
            eol += 1
        # room for everything the line can hold, made here and not in the loops below: an
        # array reassigned inside numba's token loop costs reference counting on every token
        most = (eol - line_start) // 2 + 2  # features (each takes a byte and a separator)
        if f_hash.shape[0] < most:
            f_hash = np.empty(2 * most, dtype=np.int64)
            f_val = np.empty(2 * most, dtype=np.float64)
            f_span = np.empty((2 * most, 4), dtype=np.int64)
            f_first = np.empty(2 * most, dtype=np.int64)
        if scratch.shape[0] < 2 * (eol - line_start) + 4:
            scratch = np.empty(4 * (eol - line_start) + 8, dtype=np.uint8)
        if slow.shape[0] < n_slow + 2 * most + 4:
            grown = np.empty((2 * (n_slow + 2 * most + 4), 4), dtype=np.int64)
            grown[:n_slow] = slow[:n_slow]
            slow = grown
        # ---- header: up to 3 tokens (label, importance, tag)
        t_s0 = t_e0 = t_s1 = t_e1 = t_s2 = t_e2 = np.int64(0)
        ntok = 0
        q = p
        while q < bar:
            c = _at(buf, q)
            if _is_space(c):
                q += 1
                continue
            s = q
            while q < bar and not _is_space(_at(buf, q)):
                q += 1
            if ntok == 0:
                t_s0, t_e0 = s, q
            elif ntok == 1:
                t_s1, t_e1 = s, q
            elif ntok == 2:
                t_s2, t_e2 = s, q
            ntok += 1
            if ntok > 3:
                break
        if ntok > 3:
            status = HEADER
            err = line_start
            break
        if ntok > 0:
            ls = t_s0 if ntok == 1 else (t_s1 if ntok == 2 else t_s2)
            le = t_e0 if ntok == 1 else (t_e1 if ntok == 2 else t_e2)
            if le == bar or _at(buf, ls) == _QUOTE:
                ntok -= 1  # the tag
        if ntok > 2:
            status = HEADER
            err = line_start
            break
        label = np.nan
        weight = 1.0
        for k in range(ntok):
            s = t_s0 if k == 0 else t_s1
            e = t_e0 if k == 0 else t_e1
            ok, v, q = fast_float(buf, s)
            if not (ok and q == e):
                slow[n_slow, 0] = LABEL if k == 0 else WEIGHT
                slow[n_slow, 1] = s
                slow[n_slow, 2] = e
                slow[n_slow, 3] = line
                v = overrides[n_slow] if n_slow < n_over else np.nan
                n_slow += 1
            if k == 0:
                label = v
            else:
                weight = v
        if weight < 0:
            status = NEG_WEIGHT
            err = line_start
            break
        # ---- namespaces
        nf = 0
        p = bar
        c = _at(buf, p)
        while c == _BAR:
            p += 1
            ns_s = p
            c = _at(buf, p)
            while not _ENDS_NAME[c]:
                p += 1
                c = _at(buf, p)
            ns_e = p
            scale = 1.0
            if c == _COLON:
                p += 1
                s = p
                c = _at(buf, p)
                while not _ENDS_VALUE[c]:
                    p += 1
                    c = _at(buf, p)
                if p == s:
                    status = EMPTY_VALUE
                    break
                ok, v, q = fast_float(buf, s)
                if not (ok and q == p):
                    slow[n_slow, 0] = SCALE
                    slow[n_slow, 1] = s
                    slow[n_slow, 2] = p
                    slow[n_slow, 3] = line
                    v = overrides[n_slow] if n_slow < n_over else np.nan
                    n_slow += 1
                scale = v
            first = np.int64(_at(buf, ns_s)) if ns_e > ns_s else np.int64(-1)
            while True:
                while _is_space(c):
                    p += 1
                    c = _at(buf, p)
                if c == _NL or c == _BAR:
                    break
                s = p
                while not _ENDS_NAME[c]:
                    p += 1
                    c = _at(buf, p)
                e = p
                v = 1.0
                if c == _COLON:
                    p += 1
                    vs = p
                    c = _at(buf, p)
                    while not _ENDS_VALUE[c]:
                        p += 1
                        c = _at(buf, p)
                    if p == vs:
                        status = EMPTY_VALUE
                        break
                    ok, v, q = fast_float(buf, vs)
                    if not (ok and q == p):
                        slow[n_slow, 0] = VALUE
                        slow[n_slow, 1] = vs
                        slow[n_slow, 2] = p
                        slow[n_slow, 3] = line
                        v = overrides[n_slow] if n_slow < n_over else np.nan
                        n_slow += 1
                if e == s:
                    status = EMPTY_NAME
                    break
                v = v * scale
                if v == 0.0:
                    continue
                k = _put_name(scratch, 0, buf, ns_s, ns_e, s, e)
                f_hash[nf] = murmur3_32(scratch, 0, k, 0)
                f_val[nf] = v
                f_span[nf, 0] = ns_s
                f_span[nf, 1] = ns_e
                f_span[nf, 2] = s
                f_span[nf, 3] = e
                f_first[nf] = first
                nf += 1
            if status != OK:
                break
        if status != OK:
            err = line_start
            break
        # ---- the row: linear features, then interactions, into r_col / r_val
        most = nf
        for t in range(inter.shape[0]):
            n_a = n_b = 0
            for i in range(nf):
                n_a += f_first[i] == inter[t, 0]
                n_b += f_first[i] == inter[t, 1]
            most += n_a * n_b
        if r_col.shape[0] < most:
            r_col = np.empty(2 * most, dtype=np.int64)
            r_tmp = np.empty(2 * most, dtype=np.int64)
            r_val = np.empty(2 * most, dtype=np.float64)
        if indices.shape[0] < nnz + most:
            size = max(2 * indices.shape[0], nnz + most)
            grown_i = np.empty(size, dtype=np.int32)
            grown_i[:nnz] = indices[:nnz]
            indices = grown_i
            grown_d = np.empty(size, dtype=np.float64)
            grown_d[:nnz] = data[:nnz]
            data = grown_d
        m = 0
        for i in range(nf):
            h = f_hash[i]
            r_col[m] = ((-h if h < 0 else h) & mask) << 32 | m
            r_val[m] = f_val[i] if h >= 0 else -f_val[i]
            m += 1
        for t in range(inter.shape[0]):
            a = inter[t, 0]
            b = inter[t, 1]
            for i in range(nf):
                if f_first[i] != a:
                    continue
                # the hash state after "string_i*", continued by each string_j (no copies)
                h0, carry0, t0 = _feed_name(np.uint64(0), np.uint64(0), 0, buf, f_span[i, 0],
                                            f_span[i, 1], f_span[i, 2], f_span[i, 3])
                h0, carry0, t0 = murmur3_feed(h0, carry0, t0, _STAR)
                len_i = (f_span[i, 1] - f_span[i, 0] + (f_span[i, 1] > f_span[i, 0])
                         + f_span[i, 3] - f_span[i, 2] + 1)
                for j in range(i if a == b else 0, nf):
                    if f_first[j] != b:
                        continue
                    v = f_val[i] * f_val[j]
                    if v == 0.0:
                        continue
                    hj, carry, tj = _feed_name(h0, carry0, t0, buf, f_span[j, 0], f_span[j, 1],
                                               f_span[j, 2], f_span[j, 3])
                    k = (len_i + f_span[j, 1] - f_span[j, 0] + (f_span[j, 1] > f_span[j, 0])
                         + f_span[j, 3] - f_span[j, 2])
                    h = murmur3_finish(hj, carry, tj, k)
                    r_col[m] = ((-h if h < 0 else h) & mask) << 32 | m
                    r_val[m] = v if h >= 0 else -v
                    m += 1
        # sort the keys column << 32 | position by column (stably: equal columns keep the
        # line's order, so duplicates are summed in it) and sum equal columns
        _sort_keys(r_col, r_tmp, count, m, bits)
        last = np.int64(-1)
        for k in range(m):
            key = r_col[k]
            col = key >> 32
            val = r_val[key & _LOW32]
            if col == last:
                data[nnz - 1] += val
            else:
                indices[nnz] = col
                data[nnz] = val
                nnz += 1
                last = col
        if row == cap:
            indptr = _grow(indptr, row + 1)
            labels = _grow(labels, row)
            weights = _grow(weights, row)
            row_line = _grow(row_line, row)
            cap = labels.shape[0]
        labels[row] = label
        weights[row] = weight
        row_line[row] = line
        row += 1
        indptr[row] = nnz
        while _at(buf, p) != _NL:
            p += 1
        pos = p + 1
        line += 1
    return (status, err, line, indptr[: row + 1], indices[:nnz], data[:nnz], labels[:row],
            weights[:row], row_line[:row], slow[:n_slow])  # fmt: skip
