"""Positions and indices that the structured learners' compiled code indexes with are checked:
a bad one raises ValueError, never a signal.

Compiled code does not check bounds, so an unchecked timing (``Aligner.feature_map``: outside
the sequence, not increasing, of the wrong length) or a CSR column index beyond the features
(``SequenceTagger``) read outside the arrays, and could kill the process with a segmentation
fault.  Every bad case runs in a child process: a signal there fails the test instead of
killing pytest.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

#: run in the child: ``cases`` maps a name to a callable that must raise ValueError; prints
#: {name: outcome} as JSON
_RUNNER = """
import json
def run(cases):
    out = {}
    for name, call in cases.items():
        try:
            call()
            out[name] = "no error"
        except ValueError as exc:
            out[name] = "ValueError: " + str(exc)
        except Exception as exc:
            out[name] = type(exc).__name__ + ": " + str(exc)
    print(json.dumps(out))
"""

_ALIGNER_CASES = """
import numpy as np
from onlinelearn.structured import Aligner, make_alignment
X, Y = make_alignment(6, random_state=0)
al = Aligner(random_state=0).fit(X, Y)
raw, y = X[0], Y[0]
checked = al._inputs([raw])[0][0]
T, K = raw[0].shape[0], len(y)
w = al.coef_
bad = {
    "beyond the end": np.append(y[:-1], T + 10**6),
    "last at T": np.append(y[:-1], T),
    "far beyond": y + 10**9,
    "negative": y - 10**6,
    "first at -1": np.append(-1, y[1:]),
    "decreasing": y[::-1].copy(),
    "repeated start": np.append(y[0], y[:-1]),
    "one short": y[:-1],
    "one long": np.append(y, T - 1),
    "empty": np.array([], dtype=np.int64),
    "2-D": y[None, :],
    "non-integer": y + 0.5,
    "NaN": np.where(np.arange(K) == 1, np.nan, y),
    "inf": np.where(np.arange(K) == 1, np.inf, y),
    "1e300": np.full(K, 1e300),
    "strings": y.astype(str),
    "bools": np.ones(K, dtype=bool),
}
cases = {}
for form, x in (("raw", raw), ("checked", checked)):
    for name, t in bad.items():
        cases[f"feature_map {form} {name}"] = lambda x=x, t=t: al.feature_map(x, t)
        cases[f"loss_augmented_argmax {form} {name}"] = (
            lambda x=x, t=t: al.loss_augmented_argmax(w, x, t))
    for name, ww in (("short w", w[:3]), ("long w", np.append(w, 1.0)), ("NaN w", w * np.nan)):
        cases[f"argmax {form} {name}"] = lambda x=x, ww=ww: al.argmax(ww, x)
frames, ev, G = raw
cases["feature_map raw G one column short"] = lambda: al.feature_map((frames, ev, G[:, :-1]), y)
cases["feature_map event code out of range"] = lambda: al.feature_map((frames, ev + 100, G), y)
cases["feature_map non-integer event codes"] = lambda: al.feature_map((frames, ev + 0.5, G), y)
cases["fit non-integer timing"] = lambda: al.fit(X, [Y[0] + 0.5] + Y[1:])
cases["fit timing of another length"] = lambda: al.fit(X, [Y[0][:-1]] + Y[1:])
cases["cost of timings of different lengths"] = lambda: al.cost(y, y[:-1])
cases["score with a short timing"] = lambda: al.score(X[:1], [y[:1]])
run(cases)
"""

_TAGGER_CASES = """
import numpy as np
import scipy.sparse as sp
from onlinelearn.structured import SequenceTagger
Xs = [sp.csr_matrix(np.eye(3, 5)), sp.csr_matrix(np.eye(2, 5))]
tags = [["a", "b", "a"], ["b", "a"]]
tagger = SequenceTagger(n_epochs=1, random_state=0).fit(Xs, tags)
def broken(kind):
    X = sp.csr_matrix(np.eye(3, 5))
    if kind == "index beyond the features":
        X.indices[1] = 10**6
    elif kind == "index at n_features":
        X.indices[1] = 5
    elif kind == "negative index":
        X.indices[1] = -7
    elif kind == "indptr past the data":
        X.indptr[-1] = 10**6
    elif kind == "decreasing indptr":
        X.indptr[1] = 3
    elif kind == "CSC row index beyond the rows":
        X = sp.csc_matrix(np.eye(3, 5))
        X.indices[1] = 10**6
    return X
cases = {}
for kind in ("index beyond the features", "index at n_features", "negative index",
             "indptr past the data", "decreasing indptr", "CSC row index beyond the rows"):
    cases["predict " + kind] = lambda kind=kind: tagger.predict([broken(kind)])
    cases["score " + kind] = lambda kind=kind: tagger.score([broken(kind)], [["a", "b", "a"]])
    cases["partial_fit " + kind] = (
        lambda kind=kind: tagger.partial_fit([broken(kind)], [["a", "b", "a"]]))
    cases["fit " + kind] = (
        lambda kind=kind: SequenceTagger(n_epochs=1).fit([broken(kind)], [["a", "b", "a"]]))
run(cases)
"""


def _run_in_child(cases_code):
    """Outcome of each case, from a child process (a signal there fails the test)."""
    code = textwrap.dedent(_RUNNER) + textwrap.dedent(cases_code)
    proc = subprocess.run(
        [sys.executable, "-X", "faulthandler", "-c", code],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, (
        f"the child process ended with code {proc.returncode} (negative: killed by that signal)"
        f"\n{proc.stderr[:3000]}"
    )
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("cases", [_ALIGNER_CASES, _TAGGER_CASES], ids=["Aligner", "tagger"])
def test_bad_positions_raise_value_error_in_a_child_process(cases):
    outcome = _run_in_child(cases)
    assert len(outcome) > 20
    wrong = {k: v for k, v in outcome.items() if not v.startswith("ValueError")}
    assert not wrong, wrong


