"""Online message categorisation with the 6 label-ranking algorithms of thesis ch. 8 (Table 8.1).

Each algorithm (update I / II / III x squared norm (8.2) / relative entropy (8.3), see
:class:`onlinelearn.LabelRanker`) makes one online pass over a stream of messages in a fixed order
and counts its *mistakes* as the thesis does (Sec. 8.2): on round t the ranking made before the
update is a mistake when some irrelevant label scores at least as high as some relevant label.
The table reports the average number of online mistakes, 100 M / m (percent of the m messages),
the figure of Table 8.1.

Corpora (the thesis's Enron folder data, 7 users' own folders, is not available here):

* ``enron``: the multi-label Enron messages prepared by MULAN (``enron_multilabel/``: 1702
  messages, 53 labels, 3.4 relevant labels per message, binary bag of 1001 words), in file order
  (the train file, then the test file);
* ``20news``: the raw 20 newsgroups "bydate" messages (headers included), one label per message
  (its group), in date order as far as the archive allows, represented as a binary bag of words
  (``CountVectorizer(binary=True)``).  The bydate distribution has *no* ``Date:`` header (it was
  stripped; none of the 18846 messages has one), so the order is reconstructed: the split first
  (the bydate split is by date: every training message is older than every test message), then,
  within a split, each group's messages by article number (the news server numbers articles in
  arrival order), the 20 groups interleaved by relative position (message k of n in its group at
  (k + 1/2) / n).  A message that does carry a parseable ``Date:`` header would be ordered by it
  within its split, before the undated ones.  The vocabulary is fitted on the whole stream: it only
  names the feature coordinates and uses no label, and a word's weight can only move once it has
  occurred in a message (the score of x uses only the words present in x); for the entropy
  complexity the vocabulary size n sets the starting weights 1/n.
"""

from __future__ import annotations

import email.utils
import io
import math
import tarfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import scipy.sparse as sp

#: Table 8.1 of the thesis: user -> (|Y|, m, [sq-norm I, II, III], [entropy I, II, III])
THESIS_TABLE_8_1 = {
    "beck-s": (101, 1971, (58.5, 55.2, 51.9), (54.0, 50.2, 47.1)),
    "farmer-d": (25, 3672, (29.5, 23.3, 22.7), (27.6, 22.6, 22.0)),
    "kaminski-v": (41, 4477, (50.2, 44.5, 41.9), (46.7, 42.9, 40.0)),
    "kitchen-l": (47, 4015, (48.2, 41.9, 40.4), (41.9, 38.3, 36.0)),
    "lokay-m": (11, 2489, (24.9, 19.1, 18.4), (24.0, 18.7, 18.2)),
    "sanders-r": (30, 1188, (31.7, 28.3, 27.2), (28.3, 24.2, 23.4)),
    "williams-w3": (18, 2769, (5.0, 4.5, 4.4), (4.2, 3.4, 3.1)),
}

UPDATES = ("I", "II", "III")
COMPLEXITIES = ("euclidean", "entropy")
CORPORA = ("enron", "20news")


@dataclass
class CorpusResult:
    name: str
    n_labels: int
    n_messages: int
    mistakes: dict = field(default_factory=dict)  # (complexity, update) -> percent
    seconds: dict = field(default_factory=dict)
    ip_iterations_max: int = 0


@dataclass
class MessageFoldersResult:
    corpora: list
    params: dict

    def claims(self):
        """The two claims of Sec. 8.4, checked per corpus: a list of (claim, holds, detail)."""
        out = []
        for c in self.corpora:
            for comp in COMPLEXITIES:
                m = [c.mistakes[(comp, u)] for u in UPDATES]
                holds = m[2] <= m[1] <= m[0]
                out.append(
                    (f"{c.name}, {_CNAME[comp]}: III <= II <= I", holds,
                     f"{m[2]:.1f} <= {m[1]:.1f} <= {m[0]:.1f}")
                )  # fmt: skip
            for u in UPDATES:
                e, s = c.mistakes[("entropy", u)], c.mistakes[("euclidean", u)]
                out.append(
                    (f"{c.name}, update {u}: entropy <= squared norm", e <= s,
                     f"{e:.1f} vs {s:.1f}")
                )  # fmt: skip
        return out

    def format_table(self):
        head = (
            "| data | \\|Y\\| | m | sq-norm I | sq-norm II | sq-norm III | entropy I | entropy II "
            "| entropy III |"
        )
        lines = [head, "|" + "---|" * 9]
        for c in self.corpora:
            vals = [c.mistakes[(comp, u)] for comp in COMPLEXITIES for u in UPDATES]
            lines.append(
                f"| **{c.name}** (ours) | {c.n_labels} | {c.n_messages} | "
                + " | ".join(f"{v:.1f}" for v in vals)
                + " |"
            )
        for user, (k, m, sq, ent) in THESIS_TABLE_8_1.items():
            lines.append(
                f"| {user} (thesis) | {k} | {m} | "
                + " | ".join(f"{v:.1f}" for v in (*sq, *ent))
                + " |"
            )
        lines.append("")
        lines.append(
            "Average online mistakes, 100 M / m (% of messages whose ranking put an irrelevant "
            "label at or above a relevant one). Thesis rows: Table 8.1, Enron *folder* data of 7 "
            "users (not available here) -- different data from ours."
        )
        lines.append("")
        lines.append("Claims of Sec. 8.4:")
        for claim, holds, detail in self.claims():
            lines.append(f"  [{'holds' if holds else 'FAILS'}] {claim}  ({detail})")
        return "\n".join(lines)


_CNAME = {"euclidean": "squared norm", "entropy": "entropy"}


# ------------------------------------------------------------------------------ corpora
def load_enron_stream(data_dir):
    """(X csr binary, Y indicator (n, 53)) of the MULAN Enron messages in file order."""
    from sklearn.datasets import load_svmlight_file

    root = Path(data_dir) / "enron_multilabel"
    parts = [load_svmlight_file(root / f"enron.{s}.svm.bz2", n_features=1001, multilabel=True)
             for s in ("train", "test")]  # fmt: skip
    X = sp.vstack([p[0] for p in parts]).tocsr()
    labels = [lab for p in parts for lab in p[1]]
    Y = np.zeros((X.shape[0], 53), dtype=np.int8)
    for i, labs in enumerate(labels):
        Y[i, [int(v) for v in labs]] = 1
    return X, Y


def _message_date(text):
    for line in text.split("\n", 60)[:60]:
        if line[:5].lower() == "date:":
            try:
                d = email.utils.parsedate_to_datetime(line[5:].strip())
            except (TypeError, ValueError, IndexError, OverflowError):
                return math.inf
            if d is None:
                return math.inf
            try:
                return d.timestamp()
            except (OverflowError, ValueError, OSError):
                return math.inf
        if not line.strip():
            break  # end of the headers
    return math.inf


def load_20news_messages(data_dir, max_messages=None):
    """(texts, labels, group names, number of messages with a Date: header) of the raw 20
    newsgroups messages in date order (see the module docstring)."""
    path = Path(data_dir) / "20newsgroups" / "20news-bydate.tar.xz"
    texts, groups, split, number = [], [], [], []
    with tarfile.open(path, "r:xz") as tar:
        for member in tar:
            if not member.isfile():
                continue
            parts = member.name.split("/")
            if len(parts) < 3:
                continue
            f = tar.extractfile(member)
            texts.append(io.TextIOWrapper(f, encoding="latin-1").read())
            groups.append(parts[-2])
            split.append(0 if "train" in parts[-3] else 1)
            number.append(int(parts[-1]) if parts[-1].isdigit() else 0)
    n = len(texts)
    dates = np.array([_message_date(t) for t in texts])
    split = np.array(split)
    number = np.array(number)
    gidx = np.unique(np.array(groups), return_inverse=True)[1]
    position = np.zeros(n)
    for key in np.unique(split * 100 + gidx):
        sel = np.flatnonzero(split * 100 + gidx == key)
        rank = np.argsort(np.argsort(number[sel], kind="stable"), kind="stable")
        position[sel] = (rank + 0.5) / sel.size
    order = np.lexsort((gidx, position, dates, split))
    if max_messages is not None:
        order = order[:max_messages]
    names = sorted(set(groups))
    index = {g: k for k, g in enumerate(names)}
    labels = np.array([index[groups[i]] for i in order])
    return [texts[i] for i in order], labels, names, int(np.isfinite(dates).sum())


def load_20news_stream(data_dir, max_messages=None):
    from sklearn.feature_extraction.text import CountVectorizer

    texts, labels, names, n_dated = load_20news_messages(data_dir, max_messages)
    X = CountVectorizer(binary=True, dtype=np.float64).fit_transform(texts).tocsr()
    Y = np.zeros((len(labels), len(names)), dtype=np.int8)
    Y[np.arange(len(labels)), labels] = 1
    return X, Y


# ------------------------------------------------------------------------------ the run
def table_row(name, X, Y, params, progress=None) -> CorpusResult:
    """One row of Table 8.1: LabelRanker's three updates x two complexities, one online pass
    over (X, Y) each, with their mistake rates (% of rounds), times and the largest number of
    interior-point iterations."""
    from onlinelearn import LabelRanker

    res = CorpusResult(name, Y.shape[1], Y.shape[0])
    for comp in COMPLEXITIES:
        for upd in UPDATES:
            est = LabelRanker(update=upd, complexity=comp, **params)
            t0 = time.perf_counter()
            est.partial_fit(X, Y)
            res.seconds[(comp, upd)] = time.perf_counter() - t0
            res.mistakes[(comp, upd)] = 100.0 * est.n_mistakes_ / Y.shape[0]
            res.ip_iterations_max = max(res.ip_iterations_max, est.ip_iterations_max_)
            if progress is not None:
                progress(f"  {name} {comp} {upd}: {res.mistakes[(comp, upd)]:.1f}% "
                         f"({res.seconds[(comp, upd)]:.1f} s)")  # fmt: skip
    return res


def run_message_folders(data_dir, corpora=CORPORA, quick=False, params=None, progress=None):
    """Run the 6 algorithms online over each corpus; returns a :class:`MessageFoldersResult`.

    ``quick``: the first 600 Enron messages and the first 3000 20 newsgroups messages (in date
    order).  ``params``: extra :class:`~onlinelearn.LabelRanker` parameters (default: its
    defaults); ``progress``: a callable receiving one line per finished run."""
    params = dict(params or {})
    results = []
    for name in corpora:
        if name == "enron":
            X, Y = load_enron_stream(data_dir)
            if quick:
                X, Y = X[:600], Y[:600]
        elif name == "20news":
            X, Y = load_20news_stream(data_dir, 3000 if quick else None)
        else:
            raise ValueError(f"unknown corpus {name!r}; choose from {CORPORA}")
        results.append(table_row(name, X, Y, params, progress))
    return MessageFoldersResult(results, params)
