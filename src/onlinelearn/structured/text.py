"""Raw text to tagger input: a CoNLL-U reader and hashed token features."""

from __future__ import annotations

import bz2
import gzip
import lzma
import os
import re
import zlib

import numpy as np
import scipy.sparse as sp

__all__ = ["read_conllu", "token_features"]


def _open_text(path):
    path = os.fspath(path)
    if path.endswith(".xz"):
        return lzma.open(path, "rt", encoding="utf-8")
    if path.endswith(".gz"):
        return gzip.open(path, "rt", encoding="utf-8")
    if path.endswith(".bz2"):
        return bz2.open(path, "rt", encoding="utf-8")
    return open(path, encoding="utf-8")


def read_conllu(path):
    """Read a CoNLL-U file (plain, ``.xz``, ``.gz`` or ``.bz2``).

    Returns ``(sentences, upos)``: a list of token lists (column FORM) and a list of UPOS tag
    lists (column 4), one per sentence.  Comment lines, multi-word token lines (ID ``3-4``) and
    empty nodes (ID ``5.1``) are skipped, as the format prescribes.  A word line with fewer than
    10 tab-separated columns raises ``ValueError`` naming the line.
    """
    sentences, tags = [], []
    words, upos = [], []
    with _open_text(path) as f:
        for lineno, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip():
                if words:
                    sentences.append(words)
                    tags.append(upos)
                    words, upos = [], []
                continue
            if line.startswith("#"):
                continue
            cols = line.split("\t")
            if len(cols) != 10:
                raise ValueError(
                    f"{os.fspath(path)}:{lineno}: expected 10 tab-separated columns, "
                    f"got {len(cols)}"
                )
            if "-" in cols[0] or "." in cols[0]:
                continue
            words.append(cols[1])
            upos.append(cols[3])
    if words:
        sentences.append(words)
        tags.append(upos)
    return sentences, tags


_UPPER = re.compile(r"[A-Z]")
_LOWER = re.compile(r"[a-z]")
_DIGIT = re.compile(r"[0-9]")


def _shape(word):
    s = _DIGIT.sub("d", _LOWER.sub("x", _UPPER.sub("X", word)))
    short = re.sub(r"(.)\1+", r"\1", s)
    return s[:8], short


def _hash(s, n_features):
    return zlib.crc32(s.encode("utf-8")) % n_features


#: neighbour roles: (offset, what is hashed)
_NEIGHBOURS = (("l-1", -1), ("l+1", 1), ("l-2", -2), ("l+2", 2), ("s-1", -1), ("s+1", 1))


def _word_features(word, n_features):
    """Indices of the features of a word on its own, and of the word seen as a neighbour."""
    lw = word.lower()
    shape, short = _shape(word)
    own = [
        "b",
        "w=" + word,
        "l=" + lw,
        "p1=" + lw[:1],
        "p2=" + lw[:2],
        "p3=" + lw[:3],
        "s1=" + lw[-1:],
        "s2=" + lw[-2:],
        "s3=" + lw[-3:],
        "sh=" + shape,
        "ss=" + short,
    ]
    nb = [role + "=" + (lw[-3:] if role[0] == "s" else lw) for role, _ in _NEIGHBOURS]
    return [_hash(s, n_features) for s in own], [_hash(s, n_features) for s in nb]


def token_features(sentences, n_features=2**18):
    """Hashed sparse features of every token, one CSR matrix (n_tokens, n_features) a sentence.

    Each token gets value-1 features (hashed with CRC-32, so stable across runs and machines):
    a bias, the word, the lower-cased word, prefixes and suffixes of 1-3 characters, the word
    shape (``Xxxxx``, ``dd-dd``; full to 8 characters and with repeats collapsed), the lower-cased
    words at offsets -2..+2 and the 3-character suffixes of the two neighbours (``<s>`` / ``</s>``
    beyond the sentence).  Hash collisions inside a row are summed.

    Parameters
    ----------
    sentences : list of list of str
        Tokenised sentences (e.g. the first output of :func:`read_conllu`).
    n_features : int, default=2**18
        Size of the hashed feature space.
    """
    if isinstance(sentences, str) or not hasattr(sentences, "__iter__"):
        raise TypeError("sentences must be a list of token lists")
    n_features = int(n_features)
    if n_features < 1:
        raise ValueError(f"n_features must be positive, got {n_features}")
    vocab = {}
    own_rows, nb_rows = [], []

    def word_id(w):
        i = vocab.get(w)
        if i is None:
            if not isinstance(w, str):
                raise TypeError(f"tokens must be str, got {type(w).__name__}")
            i = vocab[w] = len(own_rows)
            own, nb = _word_features(w, n_features)
            own_rows.append(own)
            nb_rows.append(nb)
        return i

    bos, eos = word_id("<s>"), word_id("</s>")
    ids = []
    for s, sent in enumerate(sentences):
        if isinstance(sent, str):
            raise TypeError(f"sentences[{s}] is a str; pass a list of tokens")
        ids.append(np.array([word_id(w) for w in sent], dtype=np.int64))
    OWN = np.array(own_rows, dtype=np.int32).reshape(len(own_rows), -1)
    NB = np.array(nb_rows, dtype=np.int32).reshape(len(nb_rows), -1)
    n_own = OWN.shape[1]
    width = n_own + NB.shape[1]
    out = []
    for w in ids:
        n = w.shape[0]
        padded = np.concatenate([[bos, bos], w, [eos, eos]])
        cols = np.empty((n, width), dtype=np.int32)
        cols[:, :n_own] = OWN[w]
        for r, (_, off) in enumerate(_NEIGHBOURS):
            cols[:, n_own + r] = NB[padded[2 + off : 2 + off + n], r]
        X = sp.csr_matrix(
            (np.ones(n * width), cols.ravel(), np.arange(0, n * width + 1, width)),
            shape=(n, n_features),
        )
        X.sum_duplicates()
        out.append(X)
    return out
