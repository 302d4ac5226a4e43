"""The reports as a table, and drawn along the stream."""

from __future__ import annotations

import numpy as np


def shown(report, show, plot_to):
    """``report``, printed as a table when ``show`` and drawn to ``plot_to`` (a PNG path)
    unless None: the last step of every ``report`` of the package."""
    if show:
        print(format_table([report]))
    if plot_to is not None:
        plot(report, plot_to)
    return report


def format_table(reports, names=None):
    """The reports as a Markdown table (observed, bound, dual, primal of the averaged
    predictor, gap, primal of the comparator u*)."""
    head = ("| learner | rounds | quantity | observed | bound | dual D | P(w_avg) | gap "
            "| P(u*) | theorem |")  # fmt: skip
    lines = [head, "|" + "---|" * 10]
    for i, r in enumerate(reports):
        name = names[i] if names else type(r["estimator"]).__name__
        lines.append(
            f"| {name} | {r['rounds']} | {r['quantity']} | {_num(r['observed'])} "
            f"| {r['bound']:.6g} "
            f"| {_get(r, 'dual_objective')} | {_get(r, 'primal_averaged')} | {_get(r, 'gap')} "
            f"| {_get(r, 'primal_comparator')} | {r['theorem']} |"
        )
    return "\n".join(lines)


def _get(r, key):
    """A float field of a report, NaN when that report has none (the self-tuned ones)."""
    return f"{float(r.get(key, float('nan'))):.6g}"


def _num(v):
    return f"{v:.4g}" if isinstance(v, float) else str(v)


def plot(result, path):
    """Draw observed and bound along the stream into ``path`` (PNG); needs matplotlib (the
    optional extra ``[plot]``)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            "bounds.plot needs matplotlib: pip install 'onlinelearn[plot]'"
        ) from exc
    t = result.get("curve_rounds")
    if t is None:
        t = np.arange(1, len(result["curve_observed"]) + 1)
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(t, result["curve_observed"], label=f"observed {result['quantity']}")
    ax.plot(t, result["curve_bound"], label="bound")
    if result["quantity"] == "mistakes":
        ax.plot(t, t, ":", color="gray", label="t (every round a mistake)")
    ax.set_xlabel("round t")
    ax.set_ylabel(result["quantity"])
    ax.set_yscale("log")
    ax.set_title(f"{type(result['estimator']).__name__}: {result['theorem']}", fontsize=8)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
