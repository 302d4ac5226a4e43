"""A compiled map from wide column indices (e.g. hashed features, ``0 <= j < 2**b``) to compact
ones ``0, 1, 2, ...`` given in the order the columns first appear.

The table is open addressing with linear probing: ``keys`` (int64, ``-1`` marks an empty slot)
and ``vals`` (the compact index of each key), of a power-of-two size ``2**s``; a key's first
slot is Fibonacci hashing, the top ``s`` bits of ``key * 0x9E3779B97F4A7C15 mod 2**64``, so that
consecutive or strided indices spread over the table too.  ``cols[c]`` is the wide index of the
compact column ``c`` (the inverse map).  The table is at most half full, so a probe ends after
a couple of slots on average: a lookup costs O(1), a batch O(its nonzeros), whatever the width
of the wide index space.
"""

from __future__ import annotations

import numpy as np

from .config import njit

#: the key of an empty slot
EMPTY = -1
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


@njit
def _first_slot(key, shift):
    return np.int64((np.uint64(key) * _GOLDEN) >> np.uint64(shift))


@njit
def map_columns(indices, keys, vals, cols, n_seen, add, out, start, shift):
    """Write into ``out[i]`` the compact index of ``indices[i]`` for ``i >= start``.

    A wide index not in the table is added (``add``: its compact index is ``n_seen``, then
    ``n_seen`` grows by one and ``cols[n_seen]`` records it) or mapped to ``-1`` (not ``add``).
    ``shift``: 64 - s for a table of ``2**s`` slots (s >= 1).
    Returns ``(i, n_seen)``: ``i == len(indices)`` when done; else the table is half full
    (``n_seen == len(keys) // 2``) and the caller grows it and calls again from ``start = i``.
    """
    size = keys.shape[0]
    mask = size - 1
    limit = size >> 1
    for i in range(start, indices.shape[0]):
        key = np.int64(indices[i])
        slot = _first_slot(key, shift)
        while True:
            k = keys[slot]
            if k == key:
                out[i] = vals[slot]
                break
            if k == EMPTY:
                if not add:
                    out[i] = -1
                    break
                if n_seen >= limit:
                    return i, n_seen
                keys[slot] = key
                vals[slot] = n_seen
                cols[n_seen] = key
                out[i] = n_seen
                n_seen += 1
                break
            slot = (slot + 1) & mask
    return indices.shape[0], n_seen


@njit
def build_table(cols, n_seen, keys, vals, shift):
    """Fill the empty table ``keys``/``vals`` (size ``2**s`` at least ``2 n_seen``,
    ``shift = 64 - s``) with
    ``cols[c] -> c`` for ``c < n_seen``; returns the first ``c`` whose index is already in the
    table (a repeated column), or ``n_seen`` when all are distinct."""
    size = keys.shape[0]
    mask = size - 1
    for c in range(n_seen):
        key = np.int64(cols[c])
        slot = _first_slot(key, shift)
        while True:
            k = keys[slot]
            if k == key:
                return c
            if k == EMPTY:
                keys[slot] = key
                vals[slot] = c
                break
            slot = (slot + 1) & mask
    return n_seen
