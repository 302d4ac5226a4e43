"""Online node classification on graphs: weighted min-max (fixed against adaptive margin, with
and without label queries) against the graph Perceptron, PA, AROW and SCW.

What
    The labelled nodes of cora, citeseer and pubmed arrive one at a time in ``n_orders`` random
    orders (21 by default); every learner predicts each node's class, then learns its label
    (progressive validation, one pass).  Features: the k = 100 'pinv' spectral features of
    :func:`onlinelearn.graph.spectral_features` (rows scaled to unit norm), and for cora and
    citeseer also those features with the bag of words appended (each half scaled to norm
    1/sqrt 2, so rows have unit norm).  Reported: the cumulative error rate against rounds
    (mean and standard deviation over the orders), its final value, the updates and, with
    selective sampling (``query='margin'``, several ``c``), the fraction of labels asked.

Learners (all in one pass, in the same orders)
    * ``WeightedMinMax`` fixed and adaptive margin, b = 'auto' (twice the largest ||x||^2,
      constant feature included), full A^{-1} when d <= 300, else diagonal;
    * the same with queries, for each c in ``query_c``;
    * the graph Perceptron (Herbster & Pontil 2006): :class:`onlinelearn.graph.GraphPerceptron`
      on K = L^+ + 1 (exact, dense) for graphs of at most 12000 nodes; on pubmed (19717 nodes)
      the linear Perceptron on the rank-k 'pinv' features, which is the kernel Perceptron on the
      rank-k L^+ of the normalised Laplacian (graph-only settings);
    * multiclass PA-I (C = 1), AROW (r = 1) and SCW-I (C = 1, eta = 0.9), with the min-max
      learner's covariance choice.

Reference lines
    * a batch ``LinearSVC`` (C = 1, one-vs-rest) trained on all labelled nodes, its error on
      them (hindsight, a lower reference for a linear learner on these features);
    * scikit-learn's ``LabelSpreading`` on the graph itself (alpha = 0.99, the adjacency as its
      kernel), given the labels of the first half of each order, its error on the second half
      (transductive; the online learner at mid-stream has seen about as many labels).

The note's claims, checked on every run
    * adaptive margin makes no more mistakes than fixed margin (counted per order: the runs
      where it does not hold are reported);
    * the mistake bounds of Lemma 1 (fixed) and Theorem 1 (adaptive) for the comparator U fitted
      in hindsight as in :mod:`onlinelearn.second_order.bounds` (U = s U_0, U_0 the
      Crammer-Singer linear SVM on all nodes, s minimising the right-hand side): right-hand
      side >= measured mistakes.  Only for the full-covariance settings (the bounds are not
      claimed for the diagonal covariance); with one-hot label vectors, their one-hot form
      (the 4/3 factor of docs/graph.md, :func:`onlinelearn.second_order.bounds.bound_terms`
      with ``label_encoding='one-hot'``);
    * the note's closing remark Z <= M: the updates Z of the adaptive learner against the
      updates M of the fixed one (its mistakes and ties), on every order (reported, not
      assumed: it failed on every run we made, docs/graph.md).

Label encodings: ``label_encoding`` ('difference', 'one-hot' or both) sets the min-max
learners' label vectors; with both, every setting is run with each in the same orders.  Any
graph: ``graphs`` maps a name to a :class:`onlinelearn.graph.GraphData`, e.g. one read by
:func:`onlinelearn.graph.load_graph_files` (its features are appended to the graph features
as the bag of words is for cora: setting 'graph+features').

Run ``onlinelearn reproduce graph-nodes`` (``--quick`` for 3 orders and k = 32).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

#: data sets of the default run
DEFAULT_DATASETS = ("cora", "citeseer", "pubmed")
#: largest feature dimension with a full covariance / A^{-1}
FULL_MAX_DIM = 300
#: largest graph given the exact dense L^+ for the graph Perceptron
EXACT_PINV_MAX_NODES = 12000


@dataclass
class Curve:
    """One learner in one setting: cumulative error rates at ``checkpoints`` for each order."""

    name: str
    errors: np.ndarray  #: (n_orders, n_checkpoints)
    updates: np.ndarray  #: (n_orders,)
    queries: np.ndarray  #: (n_orders,) fraction of labels asked
    mistakes: np.ndarray | None = None  #: (n_orders,) wrong predictions

    @property
    def final(self):
        return self.errors[:, -1]


@dataclass
class SettingResult:
    dataset: str
    features: str
    n_nodes: int
    dim: int
    covariance: str
    checkpoints: np.ndarray
    curves: dict = field(default_factory=dict)
    references: dict = field(default_factory=dict)  #: name -> (mean, std) error
    bounds: list = field(default_factory=list)  #: (margin, order, BoundCheck)
    adaptive_worse: list = field(default_factory=list)  #: orders where adaptive > fixed
    #: (order, Z, M): updates of the adaptive learner, updates (= mistakes and ties) of the
    #: fixed one, per order (the note's remark "Z <= M")
    z_vs_m: list = field(default_factory=list)
    label_encoding: str = "difference"
    seconds: float = 0.0

    def z_le_m(self):
        """(orders where Z <= M, orders)."""
        return sum(z <= m for _, z, m in self.z_vs_m), len(self.z_vs_m)


@dataclass
class GraphNodesResult:
    settings: list
    params: dict

    def format_table(self):
        """Markdown table: final online error (mean +- std over orders), updates, labels asked."""
        lines = [
            "| data set | features | learner | online error | updates | labels asked |",
            "|---|---|---|---|---|---|",
        ]
        encs = {s.label_encoding for s in self.settings}
        for s in self.settings:
            for c in s.curves.values():
                name = c.name
                if len(encs) > 1 and name.startswith("minmax"):
                    name = f"{name} ({s.label_encoding})"
                lines.append(
                    f"| {s.dataset} | {s.features} | {name} | {c.final.mean():.3f} +- "
                    f"{c.final.std():.3f} | {c.updates.mean():.0f} | {c.queries.mean():.2f} |"
                )
            for name, (m, sd) in s.references.items():
                lines.append(f"| {s.dataset} | {s.features} | {name} | {m:.3f} +- {sd:.3f} | | |")
        return "\n".join(lines)

    def format_encodings(self):
        """Min-max mistakes by label encoding (mean +- std over the orders), fixed and adaptive
        margin, one row per setting and encoding."""
        lines = [
            "| data set | features | d | encoding | fixed: mistakes | adaptive: mistakes | "
            "fixed: updates | adaptive: updates |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for s in self.settings:
            fx, ad = s.curves["minmax fixed"], s.curves["minmax adaptive"]
            lines.append(
                f"| {s.dataset} | {s.features} | {s.dim} | {s.label_encoding} | "
                f"{fx.mistakes.mean():.1f} +- {fx.mistakes.std():.1f} | "
                f"{ad.mistakes.mean():.1f} +- {ad.mistakes.std():.1f} | "
                f"{fx.updates.mean():.0f} | {ad.updates.mean():.0f} |"
            )
        return "\n".join(lines)

    def format_claims(self):
        """The note's claims: adaptive <= fixed mistakes per order; bounds >= mistakes; and its
        closing remark Z <= M (updates of the adaptive learner against those of the fixed one)
        on every order."""
        # one-hot rows: the one-hot form of the bounds (second_order.bounds, docs/graph.md)
        one_hot = "one-hot" in {s.label_encoding for s in self.settings}
        rhs1 = "Lemma 1 RHS (one-hot: its 4/3 form)" if one_hot else "Lemma 1 RHS"
        rhs2 = "Theorem 1 RHS (one-hot: its 4/3 form)" if one_hot else "Theorem 1 RHS"
        lines = [
            "| data set | features | d | encoding | adaptive <= fixed (orders) | fixed: mistakes / "
            f"{rhs1} (min slack) | adaptive: mistakes / {rhs2} (min slack) | "
            "Z <= M (orders) | Z / M (mean) | Z - M (min, max) |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        for s in self.settings:
            n = s.curves["minmax fixed"].final.size
            ok = n - len(s.adaptive_worse)
            cells = []
            for margin in ("fixed", "adaptive"):
                bs = [b for m, _, b in s.bounds if m == margin]
                if not bs:
                    cells.append("not claimed (diagonal)")
                    continue
                mis = np.mean([b.mistakes for b in bs])
                rhs = np.mean([b.rhs for b in bs])
                slack = min(b.rhs - b.mistakes for b in bs)
                cells.append(f"{mis:.0f} / {rhs:.0f} ({slack:+.0f})")
            worse = f" (not on {s.adaptive_worse})" if s.adaptive_worse else ""
            zok, zn = s.z_le_m()
            Z = np.array([z for _, z, _ in s.z_vs_m])
            M = np.array([m for _, _, m in s.z_vs_m])
            lines.append(
                f"| {s.dataset} | {s.features} | {s.dim} | {s.label_encoding} | {ok}/{n}{worse} | "
                f"{cells[0]} | {cells[1]} | {zok}/{zn} | {Z.mean():.0f} / {M.mean():.0f} | "
                f"{int((Z - M).min()):+d}, {int((Z - M).max()):+d} |"
            )
        return "\n".join(lines)

    def format_z_vs_m(self):
        """The remark Z <= M per run: one line per setting, Z - M for every order."""
        lines = []
        for s in self.settings:
            diffs = " ".join(f"{z - m:+d}" for _, z, m in s.z_vs_m)
            zok, zn = s.z_le_m()
            lines.append(
                f"{s.dataset} / {s.features} / {s.label_encoding}: Z <= M on {zok} of {zn} "
                f"orders; Z - M per order: {diffs}"
            )
        return "\n".join(lines)

    def z_le_m_everywhere(self):
        return all(z <= m for s in self.settings for _, z, m in s.z_vs_m)

    def all_bounds_hold(self):
        return all(b.rhs >= b.mistakes for s in self.settings for _, _, b in s.bounds)

    def plot(self, path):
        """Cumulative error rate against rounds (mean, +- std band), one panel per setting,
        and error against the fraction of labels asked (needs matplotlib)."""
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        n = len(self.settings)
        fig, axes = plt.subplots(2, n, figsize=(4.2 * n, 7.0), squeeze=False)
        for j, s in enumerate(self.settings):
            ax = axes[0, j]
            for c in s.curves.values():
                if "query" in c.name:
                    continue
                m, sd = c.errors.mean(axis=0), c.errors.std(axis=0)
                ax.plot(s.checkpoints, m, label=c.name, lw=1.2)
                ax.fill_between(s.checkpoints, m - sd, m + sd, alpha=0.2)
            for name, (m, _) in s.references.items():
                ax.axhline(m, ls="--", lw=0.8, color="k" if "SVC" in name else "grey")
                ax.text(s.checkpoints[-1], m, name, fontsize=6, ha="right", va="bottom")
            enc = f", {s.label_encoding}" if len(self.params.get("label_encoding", [])) > 1 else ""
            ax.set_title(f"{s.dataset}, {s.features} (d={s.dim}){enc}", fontsize=9)
            ax.set_xlabel("rounds")
            ax.set_ylabel("cumulative error rate")
            ax.set_ylim(0, 1)
            ax.legend(fontsize=6)
            ax = axes[1, j]
            for margin in ("fixed", "adaptive"):
                pts = [
                    (c.queries.mean(), c.final.mean())
                    for c in s.curves.values()
                    if c.name.startswith(f"minmax {margin}")
                ]
                pts.sort()
                ax.plot(*zip(*pts, strict=True), marker="o", label=f"min-max {margin}")
            ax.set_xlabel("fraction of labels asked")
            ax.set_ylabel("online error")
            ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(path, dpi=120)
        plt.close(fig)


def node_features(g, k, kind="pinv", words=False, random_state=0):
    """Unit-norm feature rows for all nodes: spectral features, optionally with the bag of
    words appended (each part scaled to norm 1/sqrt 2)."""
    from sklearn.preprocessing import normalize

    from ..graph import spectral_features

    F = normalize(spectral_features(g.adjacency, k, kind=kind, random_state=random_state))
    if not words:
        return F
    Wd = normalize(sp.csr_matrix(g.features, dtype=np.float64))
    return sp.hstack([sp.csr_matrix(F), Wd], format="csr") * np.sqrt(0.5)


def _cumulative(wrong, checkpoints):
    c = np.cumsum(wrong)
    return c[checkpoints - 1] / checkpoints


def _label_spreading_error(adjacency, nodes, y, order, alpha=0.99):
    from sklearn.semi_supervised import LabelSpreading

    A = adjacency[nodes][:, nodes].tocsr()

    def kernel(a, b):
        ia = a[:, 0].astype(np.int64)
        ib = b[:, 0].astype(np.int64)
        return A[ia][:, ib]

    half = len(order) // 2
    y_in = np.full(len(nodes), -1)
    y_in[order[:half]] = y[order[:half]]
    ls = LabelSpreading(kernel=kernel, alpha=alpha, max_iter=100)
    ls.fit(np.arange(len(nodes), dtype=np.float64)[:, None], y_in)
    rest = order[half:]
    return float(np.mean(ls.transduction_[rest] != y[rest]))


def run_setting(
    g, features, k, n_orders, query_c, random_state, progress, kind="pinv",
    label_encoding="difference", learners="all",
):  # fmt: skip
    """All learners on one graph and feature set; see the module docstring.  ``features``:
    'graph', or the graph's spectral features with ``g.features`` appended (any other name,
    e.g. 'graph+words').  ``learners``: 'all', or 'minmax' (the note's two learners, fixed
    and adaptive margin, with ``query_c``; no peers and no reference lines)."""
    from sklearn.svm import LinearSVC

    from .. import AROW, SCW, PassiveAggressiveClassifier, Perceptron, WeightedMinMax
    from ..graph import GraphPerceptron
    from ..second_order.bounds import augmented_rows, fit_comparator, svm_direction

    t0 = time.perf_counter()
    nodes = g.labelled()
    y = np.asarray(g.labels)[nodes]
    classes = np.unique(y)
    words = features != "graph"
    F_all = node_features(g, k, kind=kind, words=words, random_state=random_state)
    X = F_all[nodes]
    n, d = X.shape
    cov = "full" if d + 1 <= FULL_MAX_DIM else "diagonal"
    checkpoints = np.unique(np.linspace(1, n, 100).astype(np.int64))
    res = SettingResult(g.name, features, n, d, cov, checkpoints, label_encoding=label_encoding)
    progress(f"{g.name} / {features}: {n} nodes, d = {d}, covariance {cov}")
    enc = label_encoding

    makers = {
        "minmax fixed": lambda: WeightedMinMax(margin="fixed", covariance=cov, label_encoding=enc),
        "minmax adaptive": lambda: WeightedMinMax(
            margin="adaptive", covariance=cov, label_encoding=enc
        ),
    }
    for margin in ("fixed", "adaptive"):
        for c in query_c:
            makers[f"minmax {margin}, query c={c:g}"] = lambda m=margin, c=c: WeightedMinMax(
                margin=m, covariance=cov, query="margin", c=c, random_state=random_state,
                label_encoding=enc,
            )  # fmt: skip
    peers = learners == "all"
    if peers:
        makers["PA-I"] = lambda: PassiveAggressiveClassifier(
            variant="PA-I", C=1.0, n_epochs=1, shuffle=False
        )
        makers["AROW"] = lambda: AROW(r=1.0, covariance=cov)
        makers["SCW-I"] = lambda: SCW(C=1.0, eta=0.9, covariance=cov)

    gp_kernel = None
    if not words and peers:
        if g.n_nodes <= EXACT_PINV_MAX_NODES:
            sub = g.adjacency[nodes][:, nodes]
            gp_kernel = "exact"
            from ..graph import laplacian_pinv

            K_full = laplacian_pinv(sub) + 1.0
        else:
            gp_kernel = "low-rank"
    names = list(makers) + (["graph Perceptron"] if gp_kernel else [])
    store = {nm: ([], [], [], []) for nm in names}
    rng = np.random.default_rng(random_state)
    orders = [rng.permutation(n) for _ in range(n_orders)]
    # the note's bounds (and their one-hot form) are claimed for the full matrix only
    full_cov = cov == "full"
    Xa = augmented_rows(X, True) if full_cov else None
    U0 = svm_direction(Xa, np.searchsorted(classes, y), len(classes)) if full_cov else None
    fixed_mistakes, fixed_updates = {}, {}
    for oi, order in enumerate(orders):
        Xo, yo = X[order], y[order]
        for nm, make in makers.items():
            est = make()
            if nm.startswith("minmax"):
                tr = est.partial_fit_trace(Xo, yo, classes=classes)
                pred = tr["pred"]
                if full_cov and "query" not in nm:
                    adaptive = nm.endswith("adaptive")
                    chk = fit_comparator(
                        Xa[order], np.searchsorted(classes, yo), tr, est.b_, U0, adaptive,
                        label_encoding,
                    )
                    res.bounds.append(("adaptive" if adaptive else "fixed", oi, chk))
                asked = est.n_queries_ / n
            else:
                pred = est.partial_fit_predict(Xo, yo, classes=classes)
                asked = 1.0
            wrong = pred != yo
            if nm == "minmax fixed":
                fixed_mistakes[oi] = int(wrong.sum())
                fixed_updates[oi] = int(est.n_updates_)
            if nm == "minmax adaptive":
                if int(wrong.sum()) > fixed_mistakes[oi]:
                    res.adaptive_worse.append(oi)
                res.z_vs_m.append((oi, int(est.n_updates_), fixed_updates[oi]))
            store[nm][0].append(_cumulative(wrong, checkpoints))
            store[nm][1].append(est.n_updates_)
            store[nm][2].append(asked)
            store[nm][3].append(int(wrong.sum()))
        if gp_kernel == "exact":
            gp = GraphPerceptron(K_full)
            pred = gp.partial_fit_predict(order.astype(np.int64), yo)
            upd = gp.n_mistakes_
        elif gp_kernel == "low-rank":
            p = Perceptron(n_epochs=1, shuffle=False)
            pred = p.partial_fit_predict(Xo, yo, classes=classes)
            upd = p.n_updates_
        if gp_kernel:
            wrong = pred != yo
            store["graph Perceptron"][0].append(_cumulative(wrong, checkpoints))
            store["graph Perceptron"][1].append(upd)
            store["graph Perceptron"][2].append(1.0)
            store["graph Perceptron"][3].append(int(wrong.sum()))
        progress(f"  order {oi + 1}/{n_orders} done ({time.perf_counter() - t0:.0f} s)")
    for nm in names:
        label = nm
        if nm == "graph Perceptron":
            label = f"graph Perceptron ({gp_kernel} L+)"
        errs, upd, q, mis = store[nm]
        res.curves[nm] = Curve(
            label, np.array(errs), np.array(upd, float), np.array(q), np.array(mis, np.int64)
        )
    if not peers:
        res.seconds = time.perf_counter() - t0
        return res
    svc = LinearSVC(C=1.0, max_iter=5000).fit(X, y)
    res.references["LinearSVC, all labels (training error)"] = (
        float(np.mean(svc.predict(X) != y)),
        0.0,
    )
    ls = [_label_spreading_error(g.adjacency, nodes, y, o) for o in orders]
    res.references["LabelSpreading, half labelled"] = (float(np.mean(ls)), float(np.std(ls)))
    res.seconds = time.perf_counter() - t0
    return res


def run_graph_nodes(
    datasets=DEFAULT_DATASETS,
    *,
    n_orders=21,
    k=100,
    words=True,
    query_c=(0.05, 0.2, 1.0),
    random_state=0,
    progress=None,
    graphs=None,
    blas_threads=1,
    label_encoding="difference",
    learners="all",
):
    """Run the study; ``graphs`` (name -> :class:`onlinelearn.graph.GraphData`) replaces the
    loaders (a graph read from files, :func:`onlinelearn.graph.load_graph_files`, or tests).
    ``blas_threads``: the BLAS thread pool's size during the run (None: unchanged); the many
    small dense products of the bound check ran 20 times slower with the default pool than
    with one thread on a busy 2-core machine.  ``label_encoding``: the min-max learners'
    encoding, or a sequence of them (every setting is run with each, in the same orders).
    ``learners``: 'all' or 'minmax' (:func:`run_setting`).  Returns a
    :class:`GraphNodesResult`."""
    from threadpoolctl import threadpool_limits

    from ..graph import load_planetoid

    encodings = (label_encoding,) if isinstance(label_encoding, str) else tuple(label_encoding)
    say = progress or (lambda s: None)
    settings = []
    with threadpool_limits(limits=blas_threads, user_api="blas"):
        for name in datasets:
            g = graphs[name] if graphs is not None else load_planetoid(name)
            extra = "graph+words" if g.node_ids is None else "graph+features"
            feats = ["graph"] + ([extra] if words and g.features is not None else [])
            for f in feats:
                for i, enc in enumerate(encodings):
                    # the peers and reference lines do not depend on the encoding: run once
                    settings.append(
                        run_setting(
                            g,
                            f,
                            k,
                            n_orders,
                            tuple(query_c),
                            random_state,
                            say,
                            label_encoding=enc,
                            learners=learners if i == 0 else "minmax",
                        )  # fmt: skip
                    )
    params = {
        "n_orders": n_orders, "k": k, "query_c": list(query_c), "seed": random_state,
        "label_encoding": list(encodings), "learners": learners,
    }  # fmt: skip
    return GraphNodesResult(settings, params)
