"""Part-of-speech tagging on UD English EWT: structured learners against a per-token PA.

What
    Train on ``en_ewt-ud-train`` (12544 sentences), test on ``en_ewt-ud-test`` (2077 sentences,
    25094 tokens), UPOS tags (17).  Every learner sees the same hashed token features
    (:func:`onlinelearn.structured.token_features`, 2^18 dimensions) and makes ``epochs``
    shuffled (seeded) passes, predicting with the averaged hypothesis:

    * :class:`onlinelearn.structured.SequenceTagger` with ``update='perceptron'`` (Collins),
      ``'PA'`` (max loss 5.22, loss-augmented Viterbi), ``'PA'`` with ``loss='prediction'``
      (5.24) and ``'self-tuned'`` (Fig. 5.4);
    * the per-token baseline :class:`onlinelearn.PassiveAggressiveClassifier` (PA-I, C = 0.1,
      multiclass, the same features, no transitions).

    Reported: token accuracy on the test part, the time per training epoch (wall clock, numba
    compilation excluded by a warm-up fit on a few sentences), and the tagging throughput
    (tokens per second of ``predict``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from ..datasets import shared_data_dir

LEARNERS = ("perceptron", "PA", "PA-prediction", "self-tuned", "token PA-I")


def ud_ewt_path(split):
    root = shared_data_dir()
    if root is None:
        raise FileNotFoundError("no shared data folder found (set ONLINELEARN_DATA)")
    path = root / "ud_english_ewt" / f"en_ewt-ud-{split}.conllu.xz"
    if not path.is_file():
        raise FileNotFoundError(f"{path} not found")
    return path


@dataclass
class PosResult:
    settings: dict
    rows: list = field(default_factory=list)  # (learner, accuracy, s/epoch, tokens/s)

    def format_table(self):
        lines = ["| learner | test accuracy | s / epoch | tagging tokens/s |", "|---|---|---|---|"]
        for name, acc, spe, tps in self.rows:
            lines.append(f"| {name} | {acc:.4f} | {spe:.2f} | {tps:,.0f} |")
        return "\n".join(lines)


def _make(name, epochs, seed):
    from .. import PassiveAggressiveClassifier
    from ..structured import SequenceTagger

    if name == "token PA-I":
        return PassiveAggressiveClassifier(
            variant="PA-I", C=0.1, average=True, n_epochs=epochs, random_state=seed
        )
    update, loss = {"PA-prediction": ("PA", "prediction")}.get(name, (name, "max"))
    return SequenceTagger(
        update,
        loss=loss,
        average=True,
        n_epochs=epochs,
        random_state=seed,
    )


def run_pos_tagging(
    *, max_train=None, epochs=5, learners=LEARNERS, random_state=0, n_features=2**18,
    progress=lambda s: None,
):  # fmt: skip
    from ..structured import read_conllu, token_features

    t0 = time.perf_counter()
    S, Y = read_conllu(ud_ewt_path("train"))
    St, Yt = read_conllu(ud_ewt_path("test"))
    if max_train is not None:
        S, Y = S[:max_train], Y[:max_train]
    X = token_features(S, n_features=n_features)
    Xt = token_features(St, n_features=n_features)
    progress(f"read and featurised in {time.perf_counter() - t0:.1f} s")
    n_test_tokens = sum(len(s) for s in St)
    res = PosResult(
        settings={"train_sentences": len(S), "test_tokens": n_test_tokens, "epochs": epochs,
                  "n_features": n_features, "seed": random_state},
    )  # fmt: skip
    flat_y = np.concatenate(Y)
    flat_yt = np.concatenate(Yt)
    for name in learners:
        est = _make(name, epochs, random_state)
        token = name == "token PA-I"
        if token:
            Xtr, Xte = sp.vstack(X).tocsr(), sp.vstack(Xt).tocsr()
            _make(name, 1, random_state).fit(Xtr[:200], flat_y[:200])  # compile
            t = time.perf_counter()
            est.fit(Xtr, flat_y)
            fit_s = time.perf_counter() - t
            t = time.perf_counter()
            acc = float(np.mean(est.predict(Xte) == flat_yt))
            pred_s = time.perf_counter() - t
        else:
            _make(name, 1, random_state).fit(X[:20], Y[:20])  # compile
            t = time.perf_counter()
            est.fit(X, Y)
            fit_s = time.perf_counter() - t
            t = time.perf_counter()
            pred = est.predict(Xt)
            pred_s = time.perf_counter() - t
            # (score() refuses test tags never seen in training; here they count as errors)
            acc = float(np.mean(np.concatenate(pred) == flat_yt))
        res.rows.append((name, acc, fit_s / epochs, n_test_tokens / pred_s))
        progress(f"{name}: accuracy {acc:.4f}, {fit_s / epochs:.2f} s / epoch")
    return res
