"""MurmurHash3 (x86, 32-bit) in numba, and the column of a hashed feature, as scikit-learn's
``FeatureHasher`` computes them.

What
    :func:`murmur3_32` is Austin Appleby's MurmurHash3_x86_32 over the bytes ``buf[start:end]``
    with a 32-bit seed, returned as a *signed* int32: the value of
    ``sklearn.utils.murmurhash3_32(bytes, seed, positive=False)`` (the hash of a ``str`` there is
    the hash of its UTF-8 bytes).  The algorithm: the bytes are read as little-endian 32-bit
    blocks k; each block is mixed ``k *= c1; k = rotl(k, 15); k *= c2`` into the state
    ``h ^= k; h = rotl(h, 13); h = 5 h + 0xe6546b64``; the 1-3 tail bytes are mixed the same way
    without the rotate-multiply of h; then ``h ^= len`` and the finalizer ``fmix32`` (xor-shifts
    by 16, 13, 16 with the multiplications by 0x85ebca6b and 0xc2b2ae35).  All arithmetic is
    modulo 2^32 (done in uint64 and masked).

Column and sign
    :func:`column_sign` maps the hash h of a feature's name to scikit-learn's column and sign
    (``sklearn.feature_extraction._hashing_fast.transform``): column ``|h| mod n_features``
    (with ``|-2^31| = 2^31``) and sign ``+1`` if ``h >= 0`` else ``-1`` (``alternate_sign``).
"""

from __future__ import annotations

import numpy as np

from .config import njit

_M32 = np.uint64(0xFFFFFFFF)
_C1 = np.uint64(0xCC9E2D51)
_C2 = np.uint64(0x1B873593)


@njit(inline="always")
def _rotl(x, r):
    return ((x << np.uint64(r)) | (x >> np.uint64(32 - r))) & _M32


@njit(inline="always")
def _mix_k(k):
    k = (k * _C1) & _M32
    k = _rotl(k, 15)
    return (k * _C2) & _M32


@njit(inline="always")
def _mix_block(h, k):
    """The state ``h`` after one full 4-byte block ``k``."""
    h ^= _mix_k(k)
    h = _rotl(h, 13)
    return (h * np.uint64(5) + np.uint64(0xE6546B64)) & _M32


@njit(inline="always")
def murmur3_32(buf, start, end, seed):
    """MurmurHash3_x86_32 of ``buf[start:end]`` (uint8 array) with ``seed``, as a signed int32
    value in an int64 (``sklearn.utils.murmurhash3_32(b, seed)``)."""
    h = np.uint64(seed) & _M32
    n = end - start
    nblocks = n >> 2
    i = start
    for _ in range(nblocks):
        k = (
            np.uint64(buf[i])
            | (np.uint64(buf[i + 1]) << np.uint64(8))
            | (np.uint64(buf[i + 2]) << np.uint64(16))
            | (np.uint64(buf[i + 3]) << np.uint64(24))
        )
        h = _mix_block(h, k)
        i += 4
    tail = n & 3
    k = np.uint64(0)
    if tail == 3:
        k ^= np.uint64(buf[i + 2]) << np.uint64(16)
    if tail >= 2:
        k ^= np.uint64(buf[i + 1]) << np.uint64(8)
    if tail:
        k ^= np.uint64(buf[i])
    return murmur3_finish(h, k, tail, n)


@njit(inline="always")
def column_sign(h, n_features):
    """``(column, sign)`` of a feature whose name hashes to ``h`` (signed), as scikit-learn's
    ``FeatureHasher``: ``|h| mod n_features`` and ``+1.0`` if ``h >= 0`` else ``-1.0``."""
    a = -h if h < 0 else h
    return a % n_features, 1.0 if h >= 0 else -1.0


@njit
def murmur3_many(data, offsets, seed):
    """The hashes of the byte strings ``data[offsets[i]:offsets[i + 1]]`` (int64 array of
    signed 32-bit values); for tests and for hashing many names from Python at once."""
    out = np.empty(offsets.shape[0] - 1, dtype=np.int64)
    for i in range(out.shape[0]):
        out[i] = murmur3_32(data, offsets[i], offsets[i + 1], seed)
    return out


def murmurhash3_32(key, seed: int = 0) -> int:
    """MurmurHash3_x86_32 of ``key`` (``str``, hashed as UTF-8, or ``bytes``) as a signed int,
    from the compiled kernel; equals ``sklearn.utils.murmurhash3_32(key, seed)``."""
    if isinstance(key, str):
        key = key.encode("utf-8")
    if not isinstance(key, bytes | bytearray):
        raise TypeError(f"key must be str or bytes, got {type(key).__name__}")
    if not 0 <= int(seed) < 2**32:
        raise ValueError(f"seed must be in [0, 2**32), got {seed!r}")
    buf = np.frombuffer(bytes(key), dtype=np.uint8)
    offsets = np.array([0, buf.shape[0]], dtype=np.int64)
    return int(murmur3_many(buf, offsets, np.int64(seed))[0])


# -- the same hash fed one byte at a time (for a string made of pieces, without copying them) ---


@njit(inline="always")
def murmur3_feed(h, carry, t, c):
    """MurmurHash3_x86_32's state after one more byte ``c``: ``h`` the state (uint64 < 2^32),
    ``carry`` the ``t`` (0-3) bytes of the block being filled, little-endian.  A full block is
    mixed into ``h`` as :func:`murmur3_32` mixes it."""
    carry |= np.uint64(c) << np.uint64(8 * t)
    t += 1
    if t == 4:
        h = _mix_block(h, carry)
        carry = np.uint64(0)
        t = 0
    return h, carry, t


@njit(inline="always")
def murmur3_finish(h, carry, t, n):
    """The hash (signed, as :func:`murmur3_32`) of the ``n`` bytes fed: the tail block, the
    length, the finalizer."""
    if t:
        h ^= _mix_k(carry)
    h ^= np.uint64(n) & _M32
    h ^= h >> np.uint64(16)
    h = (h * np.uint64(0x85EBCA6B)) & _M32
    h ^= h >> np.uint64(13)
    h = (h * np.uint64(0xC2B2AE35)) & _M32
    h ^= h >> np.uint64(16)
    v = np.int64(h)
    return v - np.int64(1 << 32) if v >= np.int64(1 << 31) else v
