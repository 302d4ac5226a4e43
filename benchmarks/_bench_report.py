"""The benchmark's report: Markdown tables and the environment."""

from __future__ import annotations

import os
import platform


# --------------------------------------------------------------------------------------------
# report
# --------------------------------------------------------------------------------------------
def _fmt(x, spec: str, none: str = "—") -> str:
    return none if x is None else format(x, spec)


def markdown(report: dict) -> str:
    lines = [f"# onlinelearn benchmark — {report['date']}", ""]
    env = report["environment"]
    lines += [
        f"Python {env['python']}, numpy {env['numpy']}, numba {env['numba']}, "
        f"scikit-learn {env['sklearn']}, river {env['river']}, vowpalwabbit {env['vowpalwabbit']}, "
        f"liblinear-official {env['liblinear']}; {env['cpu_count']} CPUs ({env['machine']}); "
        f"mode: {'QUICK (subsamples)' if report['args']['quick'] else 'full'}; "
        f"repeat {report['args']['repeat']} (slow methods {report['args']['repeat_slow']}), "
        f"C = {report['args']['C']}.",
        "",
    ]
    for ds in report["datasets"]:
        lines += [
            f"## {ds['dataset']}: {ds['n_train']} train / {ds['n_test']} test, "
            f"{ds['n_features']} features, {ds['n_classes']} classes",
            "",
            f"{ds['description']}. Training order: {ds['train_order']}, the same for every "
            f"method. Load (bz2 read {ds['load_read_bz2_seconds']:.2f}s + parse "
            f"{ds['load_parse_seconds']:.2f}s) = {ds['load_seconds']:.2f}s, not in any time "
            "below except the end-to-end table.",
            "",
        ]
        for table, title in [
            ("in-memory", "One epoch on the in-memory CSR matrix"),
            ("end-to-end", "End to end: parse an uncompressed text file + one epoch"),
        ]:
            rows = [r for r in ds["rows"] if r["table"] == table]
            if not rows:
                continue
            lines += [
                f"### {title}",
                "",
                "| method | kind | rows trained | time / epoch (s) | vs ours | test acc "
                "| tracemalloc peak (MB) | RSS peak Δ (MB) | notes |",
                "|---|---|---:|---:|---:|---:|---:|---:|---|",
            ]
            for r in rows:
                t = _fmt(r["time_epoch_seconds"], ".3f")
                if r["extrapolated"]:
                    t = f"{t} (extrapolated)"
                ref = r["ref"].replace("ours_", "").replace("_e2e", " e2e")
                ratio = r.get("ratio_to_ref")
                ratio_s = "—" if ratio is None else f"{ratio:.2f}x ({ref})"
                if r["key"] == r["ref"]:
                    ratio_s = "1.00x"
                notes = list(r["notes"])
                if "warmup_seconds" in r and r["key"].startswith("ours"):
                    notes.insert(0, f"numba warm-up/compile {r['warmup_seconds']:.2f}s, untimed")
                if len(r["times_seconds"]) > 1:
                    notes.append("runs " + ", ".join(f"{x:.3f}" for x in r["times_seconds"]) + " s")
                lines.append(
                    f"| {r['label']} | {r['kind']} | {r['n_rows_trained']} | {t} | {ratio_s} "
                    f"| {r['accuracy']:.4f} | {_fmt(r['tracemalloc_peak_mb'], '.1f')} "
                    f"| {_fmt(r['rss_peak_delta_mb'], '.1f')} | {'; '.join(notes)} |"
                )
            lines.append("")
        kern = ds.get("kernels")
        if kern:
            lines += [
                "### The floor of a pass, and the parsers",
                "",
                "| measure | value |",
                "|---|---:|",
                f"| nonzeros x classes of the training set | {kern['nnz_x_classes']:.3g} |",
            ]
            for wdt in ("float32", "float64"):
                lines.append(
                    f"| score-only sweep, {wdt} weights (the floor): s / ns per nnz x class "
                    f"| {kern[f'score_sweep_{wdt}_seconds']:.3f} / "
                    f"{kern[f'score_sweep_{wdt}_ns']:.2f} |"
                )
            for key in ("ours_pa1", "ours_pa1_last", "ours_perceptron", "ours_copa"):
                if f"{key}_ns" in kern:
                    lines.append(f"| {key}: ns per nnz x class (median epoch) | "
                                 f"{kern[f'{key}_ns']:.2f} |")  # fmt: skip
            lines += [
                f"| parse {kern['text_mb']:.1f} MB of text, onlinelearn.io.load_svmlight "
                f"| {kern['parse_ours_mb_s']:.0f} MB/s |",
                f"| the same, sklearn load_svmlight_file | {kern['parse_sklearn_mb_s']:.0f} MB/s |",
                "",
            ]
        if ds["targets"]:
            lines += ["### Project targets", ""]
            for t in ds["targets"]:
                lines.append(
                    f"- {t['target']}: {t['measured']} — **{'met' if t['met'] else 'NOT met'}**"
                )
            lines.append("")
        if ds["errors"]:
            lines += ["### Errors / skipped", ""] + [f"- {e}" for e in ds["errors"]] + [""]
    lines += [
        "Calls:",
        "",
    ]
    seen = set()
    for ds in report["datasets"]:
        for r in ds["rows"]:
            if r["key"] not in seen:
                seen.add(r["key"])
                lines.append(f"- `{r['key']}`: `{r['call']}`")
    lines += [
        "",
        "Time vs ours = this method's time / the time of the ours row named in brackets "
        "(>1: ours is faster). tracemalloc peak: Python-visible allocations during one extra, "
        "untimed fit (numpy arrays included; C/C++ and numba-internal allocations are not seen). "
        "RSS peak Δ: kernel resident-set high-water mark (VmHWM, reset before the first timed "
        "fit) minus resident set before it; sees every allocation but is a lower bound when "
        "freed memory is reused. Process max RSS (getrusage) at the end: "
        f"{report['process_max_rss_mb']:.0f} MB.",
        "",
    ]
    return "\n".join(lines)


def environment() -> dict:
    import importlib.metadata as md

    import numba
    import numpy
    import sklearn

    def ver(pkg):
        try:
            return md.version(pkg)
        except md.PackageNotFoundError:
            return "not installed"

    return {
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        "numba": numba.__version__,
        "sklearn": sklearn.__version__,
        "river": ver("river"),
        "vowpalwabbit": ver("vowpalwabbit"),
        "liblinear": ver("liblinear-official"),
        "cpu_count": os.cpu_count(),
        "machine": f"{platform.system()} {platform.machine()}",
        "processor": platform.processor(),
    }
