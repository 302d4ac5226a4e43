"""DualCoordinateSVC against LIBLINEAR (C++), side by side: time to the same duality gap, and test
accuracy.

For each data set and LIBLINEAR tolerance eps, LIBLINEAR is trained first (``-s 3``, L1-loss
dual CD, or ``-s 1``, L2-loss; ``-s 4`` Crammer-Singer; bias ``-B 1``; C as below).  Its duality
gap is known exactly: LIBLINEAR prints the dual objective of its alpha ("Objective value", one
line per binary problem), and the primal of its w is computed here.  Then ``DualCoordinateSVC``
is trained with ``tol`` = LIBLINEAR's relative gap (P - D) / P (summed over the binary problems
for one-vs-rest), i.e. it must certify a gap at least as small. The two are timed interleaved
(LIBLINEAR, ours, LIBLINEAR, ours, ...; ``--repeat`` runs each; each of our runs with its own
seed, ``random_state`` = 0, 1, ..., as each of LIBLINEAR's runs continues its ``rand()``
sequence: both medians are over random orders), wall clock and CPU time (``time.process_time``);
reported: the best wall time of each (LIBLINEAR: ``train`` on a ready ``problem``, conversion
excluded; ours: ``fit`` on a CSR matrix, input checks included, numba compilation excluded by a
warm-up), the ratio ours / LIBLINEAR of the minima and of the medians (wall and CPU), both gaps,
both test accuracies and their difference.  On a shared machine trust the CPU ratios and the
medians.

Also reported: LIBLINEAR's iterations (summed over the binary problems of one-vs-rest), our
epochs (of the last run), our evaluations of the objectives and the share of the nonzeros read
that went into them (the price of the certificate).  ``--baseline SRC`` times a second
``DualCoordinateSVC`` from another source tree (e.g. ``git archive main src | tar -x -C
/tmp/main``, then ``--baseline /tmp/main/src``) in the same interleaved loop, for before/after
ratios.

Data (from ``$ONLINELEARN_DATA`` or ``../shared/data``): a9a (its test file), w8a (a seeded
80/20 split: it has no test file), news20 (TF-IDF "bydate"), mnist (pixels/255).

    python benchmarks/bench_svm.py                    # all, a few minutes
    python benchmarks/bench_svm.py --datasets a9a --repeat 5
    python benchmarks/bench_svm.py --quick            # subsampled smoke run
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
if "ONLINELEARN_DATA" not in os.environ:
    # ../shared/data from the checkout, or from a worktree one folder deeper
    for _up in (ROOT.parent, ROOT.parent.parent):
        if (_up / "shared" / "data").is_dir():
            os.environ["ONLINELEARN_DATA"] = str(_up / "shared" / "data")
            break

from onlinelearn import DualCoordinateSVC  # noqa: E402
from onlinelearn.experiments.svm_cd_vs_sgd import load_split  # noqa: E402

#: data set -> (C, [(LIBLINEAR solver, our parameters), ...])
CASES = {
    "a9a": (1.0, [(3, dict(loss="hinge")), (1, dict(loss="squared_hinge"))]),
    "w8a": (1.0, [(3, dict(loss="hinge")), (1, dict(loss="squared_hinge"))]),
    "news20": (1.0, [(3, dict(loss="hinge")), (4, dict(multi_class="crammer_singer"))]),
    "mnist": (0.01, [(3, dict(loss="hinge")), (4, dict(multi_class="crammer_singer"))]),
}


def load_baseline(src):
    """``DualCoordinateSVC`` of the package ``onlinelearn`` under ``src`` (another checkout),
    imported as a copy named ``onlinelearn_baseline`` (its relative imports stay inside it)."""
    import importlib

    tmp = Path(tempfile.mkdtemp(prefix="bench_svm_baseline_"))
    shutil.copytree(Path(src) / "onlinelearn", tmp / "onlinelearn_baseline",
                    ignore=shutil.ignore_patterns("__pycache__"))  # fmt: skip
    sys.path.insert(0, str(tmp))
    return importlib.import_module("onlinelearn_baseline").DualCoordinateSVC


class CaptureStdout:
    """Capture what C code writes to file descriptor 1 (LIBLINEAR's info())."""

    def __enter__(self):
        sys.stdout.flush()
        self._tmp = tempfile.TemporaryFile(mode="w+b")
        self._saved = os.dup(1)
        os.dup2(self._tmp.fileno(), 1)
        return self

    def __exit__(self, *exc):
        sys.stdout.flush()
        os.dup2(self._saved, 1)
        os.close(self._saved)
        self._tmp.seek(0)
        self.text = self._tmp.read().decode(errors="replace")
        self._tmp.close()


def liblinear_weights(model, d, classes):
    """(W, b) with rows in the order of ``classes`` (one row for a binary model)."""
    labels = list(model.get_labels())
    nr = model.get_nr_class()
    cols = 1 if (nr == 2 and model.param.solver_type != 4) else nr
    W = np.array([[model.get_decfun_coef(j + 1, k) for j in range(d)] for k in range(cols)])
    b = np.array([model.get_decfun_bias(k) for k in range(cols)])
    if cols == 1:
        if labels[0] != classes[1]:  # LIBLINEAR's w scores its first label
            W, b = -W, -b
        return W, b
    order = [labels.index(c) for c in classes]
    return W[order], b[order]


def primal(W, b, X, y, classes, C, kind):
    """P(w) in LIBLINEAR's scale; per binary problem for one-vs-rest (a vector)."""
    S = np.asarray(X @ W.T) + b
    reg = 0.5 * ((W * W).sum(axis=1) + b * b)
    codes = np.searchsorted(classes, y)
    if kind == "cs":
        sy = S[np.arange(len(y)), codes]
        M = 1.0 + S - sy[:, None]
        M[np.arange(len(y)), codes] = 0.0
        return np.array([reg.sum() + C * M.max(axis=1).sum()])
    if W.shape[0] == 1:
        Y = np.where(codes == 1, 1.0, -1.0)[:, None]
    else:
        Y = np.where(codes[:, None] == np.arange(W.shape[0])[None, :], 1.0, -1.0)
    L = np.maximum(0.0, 1.0 - Y * S)
    L = L**2 if kind == "l2" else L
    return reg + C * L.sum(axis=0)


def run_case(name, X, y, Xt, yt, C, solver, params, eps_list, repeat, say, baseline=None):
    from liblinear.liblinearutil import parameter, problem, train

    classes = np.unique(y)
    kind = "cs" if solver == 4 else ("l2" if solver == 1 else "l1")
    prob = problem(y.astype(np.float64), X)
    prob.set_bias(1)
    rows = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        few = np.concatenate([np.nonzero(y == c)[0][:10] for c in classes[:3]])
        for est in (DualCoordinateSVC, baseline) if baseline else (DualCoordinateSVC,):
            est(C=C, max_iter=2, **params).fit(X[few], y[few])  # compile
    for eps in eps_list:
        # LIBLINEAR once to learn its gap (our tolerance), then both timed, interleaved
        with CaptureStdout() as cap:
            model = train(prob, parameter(f"-s {solver} -c {C} -e {eps} -B 1"))
        out = cap.text
        duals = [-float(v) for v in re.findall(r"Objective value = (-?[0-9.eE+-]+)", out)]
        hit_max = "reaching max number of iterations" in out
        ll_iter = sum(int(v) for v in re.findall(r"#iter = (\d+)", out))
        W, b = liblinear_weights(model, X.shape[1], classes)
        P_ll = primal(W, b, X, y, classes, C, kind)
        gap_ll = float(P_ll.sum() - sum(duals))
        rel_ll = gap_ll / float(P_ll.sum())
        S = np.asarray(Xt @ W.T) + b
        pred = classes[(S[:, 0] > 0).astype(int)] if W.shape[0] == 1 else classes[S.argmax(1)]
        acc_ll = float(np.mean(pred == yt))
        times = {"ll": [], "ll_cpu": [], "us": [], "us_cpu": [], "base_cpu": []}
        ours = None
        for rep in range(repeat):
            with CaptureStdout():
                t, c = time.perf_counter(), time.process_time()
                train(prob, parameter(f"-s {solver} -c {C} -e {eps} -B 1"))
                times["ll"].append(time.perf_counter() - t)
                times["ll_cpu"].append(time.process_time() - c)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                t, c = time.perf_counter(), time.process_time()
                # a new random order in each repeat, as LIBLINEAR's rand() gives its repeats
                ours = DualCoordinateSVC(C=C, tol=max(rel_ll, 1e-12), max_iter=20000,
                                         random_state=rep, **params).fit(X, y)  # fmt: skip
                times["us"].append(time.perf_counter() - t)
                times["us_cpu"].append(time.process_time() - c)
                if baseline is not None:
                    c = time.process_time()
                    baseline(C=C, tol=max(rel_ll, 1e-12), max_iter=20000, random_state=rep,
                             **params).fit(X, y)  # fmt: skip
                    times["base_cpu"].append(time.process_time() - c)
        T = {k: (float(np.min(v)), float(np.median(v))) for k, v in times.items() if v}
        t_ll, t_us = T["ll"][0], T["us"][0]
        h = ours.history_
        acc_us = ours.score(Xt, yt)
        row = dict(
            data=name, solver=f"-s {solver}", eps=eps, t_ll=t_ll, t_us=t_us,
            ratio=t_us / t_ll, ratio_med=T["us"][1] / T["ll"][1],
            ratio_cpu=T["us_cpu"][0] / T["ll_cpu"][0],
            ratio_cpu_med=T["us_cpu"][1] / T["ll_cpu"][1], gap_ll=gap_ll, rel_ll=rel_ll,
            gap_us=float(h["gap"][-1]),
            rel_us=float(h["gap"][-1] / h["primal"][-1]), acc_ll=acc_ll, acc_us=acc_us,
            epochs=ours.n_iter_, converged=ours.converged_, ll_max_iter=hit_max,
            ll_iter=ll_iter, evals=int(ours._stats["evals"]),
            eval_share=ours._stats["eval_nnz"]
            / max(1.0, ours._stats["eval_nnz"] + ours._stats["step_nnz"]),
            base_ratio=(T["us_cpu"][1] / T["base_cpu"][1]) if "base_cpu" in T else None,
        )  # fmt: skip
        say(
            f"{name} -s {solver} eps={eps}: LIBLINEAR {t_ll:.3f}s gap {rel_ll:.2e}"
            f"{' (max iter)' if hit_max else ''} acc {acc_ll:.4f} | ours {t_us:.3f}s gap "
            f"{row['rel_us']:.2e} acc {acc_us:.4f} ({ours.n_iter_} epochs) | ratio wall "
            f"min {row['ratio']:.2f} median {row['ratio_med']:.2f}, cpu min "
            f"{row['ratio_cpu']:.2f} median {row['ratio_cpu_med']:.2f}"
            + (f" | ours / baseline CPU median {row['base_ratio']:.2f}" if baseline else "")
        )
        rows.append(row)
    return rows


def format_rows(rows):
    out = [
        "| data | LIBLINEAR | eps | LIBLINEAR s | ours s | ratio (min) | ratio (median) "
        "| ratio CPU (min / median) | LIBLINEAR gap/P | ours gap/P | LIBLINEAR acc | ours acc "
        "| acc diff | LIBLINEAR iter | our epochs | evals (nnz share) |"
        + (" ours / baseline CPU |" if rows and rows[0]["base_ratio"] is not None else ""),
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
        + ("---|" if rows and rows[0]["base_ratio"] is not None else ""),
    ]
    for r in rows:
        out.append(
            f"| {r['data']} | {r['solver']}{' (max iter)' if r['ll_max_iter'] else ''} | "
            f"{r['eps']:g} | {r['t_ll']:.3f} | {r['t_us']:.3f} | {r['ratio']:.2f} | "
            f"{r['ratio_med']:.2f} | {r['ratio_cpu']:.2f} / {r['ratio_cpu_med']:.2f} | "
            f"{r['rel_ll']:.1e} | {r['rel_us']:.1e} | {r['acc_ll']:.4f} | {r['acc_us']:.4f} | "
            f"{r['acc_us'] - r['acc_ll']:+.4f} | {r['ll_iter']} | {r['epochs']} | "
            f"{r['evals']} ({100 * r['eval_share']:.0f}%) |"
            + (f" {r['base_ratio']:.2f} |" if r["base_ratio"] is not None else "")
        )
    return "\n".join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--datasets", nargs="+", default=list(CASES), choices=list(CASES))
    ap.add_argument("--eps", nargs="+", type=float, default=[0.1, 0.01])
    ap.add_argument("--repeat", type=int, default=5, help="interleaved timed runs of each")
    ap.add_argument("--quick", action="store_true", help="5000 training rows, one repeat")
    ap.add_argument(
        "--solvers",
        nargs="+",
        type=int,
        default=None,
        help="LIBLINEAR solvers to run (1, 3, 4; default: those of each data set)",
    )
    ap.add_argument(
        "--baseline",
        default=None,
        help="a source tree (holding onlinelearn/) whose DualCoordinateSVC is timed too",
    )
    args = ap.parse_args(argv)
    baseline = load_baseline(args.baseline) if args.baseline else None

    def say(s):
        print(s, file=sys.stderr, flush=True)

    rows = []
    for name in args.datasets:
        C, cases = CASES[name]
        X, y, Xt, yt = load_split(name, max_rows=5000 if args.quick else None)
        say(f"{name}: {X.shape[0]} x {X.shape[1]} (test {Xt.shape[0]}), C={C}")
        for solver, params in cases:
            if args.solvers is not None and solver not in args.solvers:
                continue
            rows += run_case(name, X, y, Xt, yt, C, solver, params, args.eps,
                             1 if args.quick else args.repeat, say, baseline)  # fmt: skip
    print(format_rows(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
