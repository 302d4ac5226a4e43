"""Raw text end to end: the 20 newsgroups messages as a Vowpal Wabbit file, read + hashed + one
pass of multiclass PA-I with ``onlinelearn``, against Vowpal Wabbit's own C++ driver on the same
file, in the same run.

    python benchmarks/bench_vw.py [--repeat 3] [--bits 18] [--with-q] [--no-dense]

Data: ``20news-bydate.tar.xz`` of the shared data folder (``$ONLINELEARN_DATA``, default
``../shared/data``): 11314 training and 7532 test messages, headers included, read as latin-1,
lower-cased and cut into the tokens of scikit-learn's default pattern ``(?u)\\b\\w\\w+\\b``;
each message is one line ``<label 1..20> |s <subject's tokens> |w <the whole message's
tokens>`` (every occurrence of a token written, so a repeated word sums up), the training lines
in one fixed random order (the archive is sorted by class), written once into a temporary
directory (untimed).

Timed, in turn within each repeat so that a shared machine slows all alike (wall min / median,
CPU median; CPU counts every thread):

* ``onlinelearn``: ``iter_vw_chunks(train.vw, n_bits=b, prefetch=True)`` (compiled reader,
  MurmurHash3 as FeatureHasher, a second thread parses ahead) + ``partial_fit`` per chunk of
  ``PassiveAggressiveClassifier(variant="PA-I", C=1)``; the same wrapped in ``SeenColumns``
  (weights only for the hashed columns seen, as ``onlinelearn train --format vw`` runs it: the
  same model, and a cost that does not grow with ``--bits``); the same with ``-q sw`` (every
  word of the subject line times every word of the message, ``--with-q``);
* Vowpal Wabbit, the ``vowpalwabbit`` package's C++ driver in process (``pyvw``
  ``Workspace(arg_list=[...])`` with ``-d train.vw``, which runs VW's own text parser on its
  parser thread and one pass; the same as the ``vw`` binary): ``--oaa 20 --loss_function hinge
  -b b`` (the hinge loss of the PA family) and VW's defaults ``--oaa 20 -b b`` (squared loss),
  each its own adaptive, normalised, invariant SGD.

Held-out accuracy: the test file read the same way (untimed), predictions of each model.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import tarfile
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
from onlinelearn import PassiveAggressiveClassifier  # noqa: E402
from onlinelearn.io.vw import iter_vw_chunks, load_vw  # noqa: E402
from onlinelearn.seen_columns import SeenColumns  # noqa: E402

_TOKEN = re.compile(r"(?u)\b\w\w+\b")


def _data_dir() -> Path:
    return Path(
        os.environ.get("ONLINELEARN_DATA", Path(__file__).resolve().parents[2] / "shared/data")
    )


def write_vw_files(tmp: Path, seed: int = 0) -> tuple[Path, Path, int]:
    """train.vw and test.vw from the raw archive; returns their paths and the class count."""
    archive = _data_dir() / "20newsgroups" / "20news-bydate.tar.xz"
    docs: dict[str, list[tuple[str, str]]] = {"train": [], "test": []}
    with tarfile.open(archive) as tar:
        for member in tar:
            if not member.isfile():
                continue
            parts = member.name.split("/")
            split = "train" if "train" in parts[-3] else "test"
            text = tar.extractfile(member).read().decode("latin-1").lower()
            subject = next((ln for ln in text.splitlines() if ln.startswith("subject:")), "")
            docs[split].append(
                (parts[-2], " ".join(_TOKEN.findall(subject[8:])), " ".join(_TOKEN.findall(text)))
            )
    groups = sorted({g for g, _, _ in docs["train"]})
    label = {g: i + 1 for i, g in enumerate(groups)}
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(docs["train"]))
    paths = []
    for split, rows in (("train", [docs["train"][i] for i in order]), ("test", docs["test"])):
        path = tmp / f"20news.{split}.vw"
        with open(path, "w", encoding="utf-8") as f:
            for g, subject, tokens in rows:
                f.write(f"{label[g]} |s {subject} |w {tokens}\n")
        paths.append(path)
    return paths[0], paths[1], len(groups)


def ours(train: Path, bits: int, interactions, classes, seen=False):
    def fit():
        est = PassiveAggressiveClassifier(variant="PA-I", C=1.0)
        if seen:  # weights only for the hashed columns seen (what the command line runs)
            est = SeenColumns(est, 2**bits)
        with iter_vw_chunks(train, n_bits=bits, interactions=interactions, prefetch=True) as r:
            for X, y in r:
                est.partial_fit(X, y, classes=classes)
        return est

    return fit


def vw(train: Path, tmp: Path, args: list[str], tag: str):
    from vowpalwabbit import Workspace

    model = tmp / f"vw.{tag}.model"

    def fit():
        Workspace(arg_list=[*args, "--quiet", "-d", str(train), "-f", str(model)]).finish()
        return model

    return fit


def vw_predict(model: Path, test: Path, tmp: Path) -> np.ndarray:
    from vowpalwabbit import Workspace

    pred = tmp / "vw.pred"
    args = ["-i", str(model), "-t", "-d", str(test), "-p", str(pred), "--quiet"]
    Workspace(arg_list=args).finish()
    return np.loadtxt(pred).astype(np.int64)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--bits", type=int, default=18)
    ap.add_argument("--with-q", action="store_true", help="also time -q sw (subject x words)")
    ap.add_argument(
        "--no-dense", action="store_true",
        help="leave out the learner on all 2**bits columns (2**b x 20 x 16 bytes)",
    )  # fmt: skip
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="olbench-vw-") as tmp:
        tmp = Path(tmp)
        t0 = time.perf_counter()
        train, test, K = write_vw_files(tmp)
        mb = train.stat().st_size / 1e6
        print(f"wrote the VW files in {time.perf_counter() - t0:.1f} s (untimed); train "
              f"{mb:.1f} MB, test {test.stat().st_size / 1e6:.1f} MB, {K} classes")  # fmt: skip
        classes = np.arange(1, K + 1)
        runs = {
            "onlinelearn: iter_vw_chunks (prefetch) + PA-I partial_fit": ours(
                train, args.bits, None, classes
            ),
            "onlinelearn, SeenColumns (weights for the columns seen)": ours(
                train, args.bits, None, classes, seen=True
            ),
            "VW --oaa 20 --loss_function hinge": vw(
                train, tmp, ["--oaa", str(K), "--loss_function", "hinge", "-b", str(args.bits)],
                "hinge",
            ),
            "VW --oaa 20 (squared loss, VW's default)": vw(
                train, tmp, ["--oaa", str(K), "-b", str(args.bits)], "squared"
            ),
        }
        if args.no_dense:
            del runs["onlinelearn: iter_vw_chunks (prefetch) + PA-I partial_fit"]
        if args.with_q:
            runs["onlinelearn, -q sw"] = ours(train, args.bits, ["sw"], classes)
            runs["VW --oaa 20 --loss_function hinge -q sw"] = vw(
                train, tmp,
                ["--oaa", str(K), "--loss_function", "hinge", "-b", str(args.bits), "-q", "sw"],
                "hinge_q",
            )  # fmt: skip
        for fn in runs.values():  # warm up: compile, page cache
            fn()
        times = {k: [] for k in runs}
        results = {}
        for _ in range(args.repeat):
            for label, fn in runs.items():
                t0, c0 = time.perf_counter(), time.process_time()
                results[label] = fn()
                times[label].append((time.perf_counter() - t0, time.process_time() - c0))
        Xte, yte = load_vw(test, n_bits=args.bits)
        Xte_q = None
        acc = {}
        for label, res in results.items():
            if isinstance(res, Path):
                acc[label] = float(np.mean(vw_predict(res, test, tmp) == yte))
            else:
                if "-q" in label:
                    if Xte_q is None:
                        Xte_q, _ = load_vw(test, n_bits=args.bits, interactions=["sw"])
                    acc[label] = float(np.mean(res.predict(Xte_q) == yte))
                else:
                    acc[label] = float(np.mean(res.predict(Xte) == yte))
        ref = "VW --oaa 20 --loss_function hinge"
        ref_med = statistics.median(w for w, _ in times[ref])
        print(f"\n20 newsgroups raw text as VW, {train.stat().st_size / 1e6:.1f} MB train, "
              f"b = {args.bits}, {args.repeat} repeats (after a warm-up run)\n")  # fmt: skip
        print("| method | wall min / median (s) | CPU median (s) | MB/s (median) | "
              "time / VW hinge | test accuracy | accuracy / VW hinge |")  # fmt: skip
        print("|---|---|---|---|---|---|---|")
        for label, tw in times.items():
            wall = [w for w, _ in tw]
            med = statistics.median(wall)
            cpu = statistics.median(c for _, c in tw)
            print(
                f"| {label} | {min(wall):.3f} / {med:.3f} | {cpu:.3f} | {mb / med:.0f} | "
                f"{med / ref_med:.2f} | {acc[label]:.4f} | {acc[label] / acc[ref]:.3f} |"
            )
        print(f"\nload average: {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
