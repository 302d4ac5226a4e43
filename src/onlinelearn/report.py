"""One self-contained HTML page about a fitted classifier on a labelled data set.

``html_report(estimator, y, pred)`` draws, with inline SVG and no external file, script or style
sheet (the page opens offline and can be mailed as it is):

* the mistake curve: the cumulative error rate of the predictions along the data, in file order
  (a model whose error climbs at the end of a file met a part of the stream it did not learn);
* the confusion matrix (counts, rows: true label) shaded by the row-conditional rate
  P(predict q | true p), and its operator norm (the quantity COPA minimises);
* the recall of every class, as bars;
* the model: its class, parameters and counters (``t_``, ``n_updates_``, ``n_mistakes_``);
* with ``bounds`` (the mapping :func:`onlinelearn.bounds.report` returns): the theorem's bound
  beside the observed mistakes along the stream, the kept dual objective, the primal of the
  averaged predictor and their gap.

The numbers drawn are also embedded as JSON (``<script type="application/json" id="data">``), so
that a test or a script can read them back without parsing the drawing.  ``onlinelearn report
MODEL DATA -o report.html`` writes it from the command line.
"""

from __future__ import annotations

import html
import json

import numpy as np

__all__ = ["html_report", "report_data"]

_CSS = """
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:2em auto;max-width:960px;
color:#222;padding:0 1em}
h1{font-size:1.5em;margin-bottom:.2em} h2{font-size:1.15em;margin-top:1.6em;
border-bottom:1px solid #ddd;padding-bottom:.2em}
table{border-collapse:collapse;font-size:.9em} td,th{padding:.25em .6em;text-align:right}
table.params td:first-child,table.params th{text-align:left}
table.params tr:nth-child(even){background:#f6f6f6}
.muted{color:#777;font-size:.9em} .kpi{display:inline-block;margin-right:2em}
.kpi b{font-size:1.4em;display:block}
svg text{font-family:system-ui,sans-serif}
"""


def _labels(y, pred):
    return np.union1d(np.unique(y), np.unique(pred))


def report_data(estimator, y, pred, *, max_points: int = 400) -> dict:
    """The numbers the page draws, as plain Python values.

    ``curve``: (example count, cumulative error rate) at up to ``max_points`` counts spread
    evenly over the data (always including the last); ``confusion``: counts, rows true labels,
    columns predicted labels, both in the order of ``labels``; ``recall``: per true label (NaN
    for a label that is only predicted); ``operator_norm``: the spectral norm of the conditional
    confusion rates with the diagonal set to zero.
    """
    y = np.asarray(y)
    pred = np.asarray(pred)
    if y.shape != pred.shape or y.ndim != 1:
        raise ValueError(f"y and pred must be 1-D of one length, got {y.shape} and {pred.shape}")
    n = len(y)
    if n == 0:
        raise ValueError("no examples: the report needs at least one labelled example")
    labels = _labels(y, pred)
    index = {v: i for i, v in enumerate(labels.tolist())}
    yi = np.fromiter((index[v] for v in y.tolist()), dtype=np.int64, count=n)
    pi = np.fromiter((index[v] for v in pred.tolist()), dtype=np.int64, count=n)
    K = len(labels)
    M = np.zeros((K, K), dtype=np.int64)
    np.add.at(M, (yi, pi), 1)
    errors = np.cumsum(yi != pi)
    at = np.unique(np.linspace(1, n, num=min(n, max_points)).round().astype(np.int64))
    curve = [[int(t), float(errors[t - 1] / t)] for t in at]
    totals = M.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        rates = M / totals[:, None]
    recall = [float(rates[i, i]) if totals[i] else float("nan") for i in range(K)]
    C = np.where(totals[:, None] > 0, rates, 0.0)
    np.fill_diagonal(C, 0.0)
    params = {}
    if hasattr(estimator, "get_params"):
        params = {k: repr(v) for k, v in sorted(estimator.get_params(deep=False).items())}
    counters = {
        name: int(getattr(estimator, name))
        for name in ("t_", "n_updates_", "n_mistakes_", "n_features_in_")
        if isinstance(getattr(estimator, name, None), int | np.integer)
    }
    return {
        "estimator": type(estimator).__name__,
        "params": params,
        "counters": counters,
        "n_examples": int(n),
        "accuracy": float(1.0 - errors[-1] / n),
        "balanced_accuracy": float(np.mean([recall[i] for i in range(K) if totals[i]])),
        "labels": [_plain(v) for v in labels.tolist()],
        "confusion": M.tolist(),
        "recall": recall,
        "operator_norm": float(np.linalg.norm(C, 2)) if K else 0.0,
        "curve": curve,
    }


def _plain(v):
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return v


def _esc(v) -> str:
    return html.escape(str(v), quote=True)


def _curve_svg(curve, width=860, height=280) -> str:
    left, right, top, bottom = 56, 16, 14, 40
    w, h = width - left - right, height - top - bottom
    n = curve[-1][0]
    ymax = max(max(e for _, e in curve), 1e-3)
    ymax = float(np.ceil(ymax * 20) / 20) if ymax > 0.05 else float(np.ceil(ymax * 200) / 200)

    def x(t):
        return left + w * (t / n if n else 0)

    def yv(e):
        return top + h * (1 - e / ymax)

    pts = " ".join(f"{x(t):.1f},{yv(e):.1f}" for t, e in curve)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'role="img" aria-label="cumulative error rate along the data">',
        f'<rect x="{left}" y="{top}" width="{w}" height="{h}" fill="#fafafa" stroke="#ccc"/>',
    ]
    for k in range(5):
        e = ymax * k / 4
        parts.append(
            f'<line x1="{left}" x2="{left + w}" y1="{yv(e):.1f}" y2="{yv(e):.1f}" '
            f'stroke="#e4e4e4"/><text x="{left - 6}" y="{yv(e) + 4:.1f}" font-size="11" '
            f'text-anchor="end">{e:.3g}</text>'
        )
    for k in range(5):
        t = n * k / 4
        parts.append(
            f'<text x="{x(t):.1f}" y="{top + h + 16}" font-size="11" '
            f'text-anchor="middle">{int(round(t)):,}</text>'
        )
    parts.append(f'<polyline points="{pts}" fill="none" stroke="#1f77b4" stroke-width="2"/>')
    parts.append(
        f'<text x="{left + w / 2}" y="{height - 6}" font-size="12" text-anchor="middle">'
        "examples (file order)</text>"
        f'<text x="14" y="{top + h / 2}" font-size="12" text-anchor="middle" '
        f'transform="rotate(-90 14 {top + h / 2})">cumulative error rate</text></svg>'
    )
    return "".join(parts)


def _confusion_html(labels, M) -> str:
    M = np.asarray(M)
    totals = M.sum(axis=1)
    head = "".join(f"<th>{_esc(v)}</th>" for v in labels)
    rows = []
    for i, v in enumerate(labels):
        cells = []
        for j in range(len(labels)):
            r = M[i, j] / totals[i] if totals[i] else 0.0
            hue = "31,119,180" if i == j else "214,39,40"
            cells.append(
                f'<td style="background:rgba({hue},{0.08 + 0.8 * r:.3f})" '
                f'title="P(predict {_esc(labels[j])} | true {_esc(v)}) = {r:.3f}">{M[i, j]}</td>'
            )
        rows.append(f"<tr><th>{_esc(v)}</th>{''.join(cells)}</tr>")
    return (
        f'<table class="confusion"><tr><th>true \\ predicted</th>{head}</tr>{"".join(rows)}</table>'
    )


def _recall_svg(labels, recall, width=860) -> str:
    bar, gap, left = 18, 6, 90
    height = len(labels) * (bar + gap) + 30
    w = width - left - 60
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'role="img" aria-label="recall per class">'
    ]
    for i, (v, r) in enumerate(zip(labels, recall, strict=True)):
        yy = 10 + i * (bar + gap)
        parts.append(
            f'<text x="{left - 8}" y="{yy + bar - 5}" font-size="12" '
            f'text-anchor="end">{_esc(v)}</text>'
        )
        if r == r:  # not NaN
            parts.append(
                f'<rect x="{left}" y="{yy}" width="{w * r:.1f}" height="{bar}" fill="#2ca02c"/>'
                f'<text x="{left + w * r + 6:.1f}" y="{yy + bar - 5}" font-size="12">'
                f"{r:.3f}</text>"
            )
        else:
            parts.append(
                f'<text x="{left + 6}" y="{yy + bar - 5}" font-size="12" fill="#777">'
                "not in the data</text>"
            )
    parts.append("</svg>")
    return "".join(parts)


def _two_curves_svg(a, b, rounds=None, width=860, height=280) -> str:
    """Observed (a) and bound (b) along the stream, on one scale; ``rounds``: the round of each
    point (default 1, 2, ..., len(a))."""
    rounds = np.arange(1, len(a) + 1) if rounds is None else np.asarray(rounds)
    n = int(rounds[-1])
    at = np.unique(np.linspace(0, len(a) - 1, num=min(len(a), 400)).round().astype(np.int64))
    left, right, top, bottom = 56, 130, 14, 40
    w, h = width - left - right, height - top - bottom
    finite = [float(np.max(c[np.isfinite(c)])) for c in (a, b) if np.isfinite(c).any()]
    ymax = max(finite) if finite else 1.0
    ymax = ymax if ymax > 0 else 1.0
    b = np.where(np.isfinite(b), b, np.nan)

    def pts(c):
        return " ".join(
            f"{left + w * rounds[i] / n:.1f},{top + h * (1 - c[i] / ymax):.1f}"
            for i in at
            if np.isfinite(c[i])
        )

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        'role="img" aria-label="observed mistakes and their bound along the stream">',
        f'<rect x="{left}" y="{top}" width="{w}" height="{h}" fill="#fafafa" stroke="#ccc"/>',
    ]
    for k in range(5):
        v = ymax * k / 4
        yy = top + h * (1 - k / 4)
        parts.append(
            f'<line x1="{left}" x2="{left + w}" y1="{yy:.1f}" y2="{yy:.1f}" stroke="#e4e4e4"/>'
            f'<text x="{left - 6}" y="{yy + 4:.1f}" font-size="11" text-anchor="end">'
            f"{v:,.3g}</text>"
            f'<text x="{left + w * k / 4:.1f}" y="{top + h + 16}" font-size="11" '
            f'text-anchor="middle">{round(n * k / 4):,}</text>'
        )
    for c, color, name, dy in ((b, "#d62728", "bound", 0), (a, "#1f77b4", "observed", 18)):
        parts.append(f'<polyline points="{pts(c)}" fill="none" stroke="{color}" stroke-width="2"/>')
        parts.append(
            f'<text x="{left + w + 10}" y="{top + 14 + dy}" font-size="12" fill="{color}">'
            f"{name}</text>"
        )
    parts.append(
        f'<text x="{left + w / 2}" y="{height - 6}" font-size="12" text-anchor="middle">'
        "rounds (file order)</text></svg>"
    )
    return "".join(parts)


def _bounds_html(r) -> str:
    rows = [
        ("theorem", _esc(r["theorem"])),
        (f"observed {_esc(r['quantity'])}", f"{r['observed']:,.6g}"),
        ("bound", f"{r['bound']:,.6g}"),
        ("rounds", f"{r.get('rounds', len(r['curve_observed'])):,}"),
        ("dual objective D (kept by the learner)", f"{r['dual_objective']:.6g}"),
        ("primal P(averaged predictor)", f"{r['primal_averaged']:.6g}"),
        ("gap P - D (>= 0: weak duality)", f"{r['gap']:.6g}"),
        ("primal at the batch optimum", f"{r['primal_comparator']:.6g}"),
    ]
    table = "".join(f"<tr><td>{k}</td><td>{v}</td></tr>" for k, v in rows)
    return (
        '<h2>Bound</h2><p class="muted">The learner\'s parameters, run from scratch over this '
        "data in file order (onlinelearn.bounds.report); the comparator is the batch optimum "
        "of the same regularised problem, rescaled to the bound's minimum.</p>"
        + _two_curves_svg(
            np.asarray(r["curve_observed"], dtype=float),
            np.asarray(r["curve_bound"], dtype=float),
            r.get("curve_rounds"),
        )
        + f'<table class="params">{table}</table>'
    )


def html_report(
    estimator,
    y,
    pred,
    *,
    title: str | None = None,
    data_name: str = "",
    subtitle: str = "predictions of the model, in the order of the data",
    bounds=None,
) -> str:
    """The page (a string) for the predictions ``pred`` of ``estimator`` on labels ``y``;
    ``subtitle`` says how ``pred`` was made; ``bounds``: a result of
    :func:`onlinelearn.bounds.report` to draw (None: no bound section)."""
    d = report_data(estimator, y, pred)
    if bounds is not None:
        d["bounds"] = {
            k: (v.item() if isinstance(v, np.generic) else v)
            for k, v in bounds.items()
            if k in ("observed", "bound", "quantity", "theorem", "rounds", "dual_objective",
                     "primal_averaged", "gap", "primal_comparator")
        }  # fmt: skip
    title = title or f"{d['estimator']} on {data_name or 'the data'}"
    params = "".join(
        f"<tr><td>{_esc(k)}</td><td>{_esc(v)}</td></tr>" for k, v in d["params"].items()
    )
    counters = "".join(
        f"<tr><td>{_esc(k)}</td><td>{v:,}</td></tr>" for k, v in d["counters"].items()
    )
    payload = json.dumps(d, allow_nan=True).replace("</", "<\\/")
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{_esc(title)}</title>
<style>{_CSS}</style></head><body>
<h1>{_esc(title)}</h1>
<p class="muted">onlinelearn report: {_esc(subtitle)}.</p>
<div><span class="kpi"><b>{d["n_examples"]:,}</b>examples</span>
<span class="kpi"><b>{d["accuracy"]:.4f}</b>accuracy</span>
<span class="kpi"><b>{d["balanced_accuracy"]:.4f}</b>balanced accuracy</span>
<span class="kpi"><b>{d["operator_norm"]:.4f}</b>confusion operator norm</span></div>
<h2>Mistake curve</h2>{_curve_svg(d["curve"])}
<h2>Confusion matrix</h2>
<p class="muted">Counts; the shade is the rate P(predict q | true p). The operator norm is that of
these rates with the diagonal set to zero.</p>{_confusion_html(d["labels"], d["confusion"])}
<h2>Recall per class</h2>{_recall_svg(d["labels"], d["recall"])}
{_bounds_html(bounds) if bounds is not None else ""}
<h2>Model</h2><table class="params"><tr><th>counter</th><th>value</th></tr>{counters}</table>
<p></p><table class="params"><tr><th>parameter</th><th>value</th></tr>{params}</table>
<script type="application/json" id="data">{payload}</script>
</body></html>
"""
