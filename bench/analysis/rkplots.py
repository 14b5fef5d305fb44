"""Figures for RingKernel's benchmark report (SVG, matplotlib's Agg backend).

Every figure is vector graphics with text kept as text, fonts of at least
8 pt, and the data drawn next to any summary (jittered points beside boxes,
per-trial means on bars and lines, percentile markers on CDFs). Colours come
from ``ROLE_COLOURS`` alone: baselines gray, RingKernel's persistent actors
blue, DSMEM green, TMA purple.

Each plot function takes the dataset, an experiment and an output folder,
returns the files it wrote, and raises ``PlotSkipped`` with the reason when
the data it needs is absent. ``PLOTS`` lists which figure is drawn for which
experiment.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)
import numpy as np  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402
from matplotlib.ticker import FuncFormatter, NullFormatter  # noqa: E402

import rkstats  # noqa: E402
from rkdata import PLAIN_NAME_KEY, Dataset, Group, numeric  # noqa: E402

plt.rcParams.update(
    {
        "svg.fonttype": "none",
        "svg.hashsalt": "ringkernel",
        "font.size": 9,
        "axes.titlesize": 10,
        "axes.labelsize": 9,
        "xtick.labelsize": 8,
        "ytick.labelsize": 8,
        "legend.fontsize": 8,
        "figure.dpi": 100,
    }
)

# The colour scheme, in one place. Each role has shades so that several
# configurations of one role stay apart; the first shade is the role's colour.
ROLE_COLOURS = {
    "baseline": ["#7f7f7f", "#4d4d4d", "#a6a6a6", "#333333", "#bfbfbf"],
    "persistent": ["#1f77b4", "#0b4f8a", "#6baed6", "#08306b"],
    "dsmem": ["#2ca02c", "#1b6e1b"],
    "tma": ["#9467bd", "#5e3c99"],
    "reference": ["#000000"],
}
ROLE_LABELS = {
    "baseline": "baseline (traditional launch / host path)",
    "persistent": "RingKernel persistent actors",
    "dsmem": "DSMEM",
    "tma": "TMA",
    "reference": "timer reference",
}
BASELINE_NAMES = {"traditional", "launch_sync", "graph_launch_sync", "launch_return", "graph_launch_return",
                  "cuper_persistent_roundtrip", "raw_flag_one_way"}
# `path` values of baselines and floors.
BASELINE_PATHS = {"host", "host_roundtrip_floor"}
LINE_STYLES = ["-", "--", ":", "-."]
MAX_POINTS_PER_BOX = 200
ECDF_BODY_POINTS = 1500


class PlotSkipped(Exception):
    """The data a figure needs is absent; the message says what is missing."""


def role_of(params: dict[str, str]) -> str:
    """The colour role of a configuration, from its parameters. Whatever is not
    marked as a baseline, DSMEM, TMA or the timer is RingKernel's own path."""
    name = params.get(PLAIN_NAME_KEY, "")
    method = params.get("method")
    if method == "dsmem":
        return "dsmem"
    if method == "tma":
        return "tma"
    if name in BASELINE_NAMES or params.get("model") == "traditional" or params.get("path") in BASELINE_PATHS:
        return "baseline"
    if name == "timer_overhead":
        return "reference"
    return "persistent"


def colours_for(param_sets: list[dict[str, str]]) -> list[str]:
    """One colour per configuration: its role's colour, then the role's next shades."""
    used: dict[str, int] = {}
    colours = []
    for params in param_sets:
        role = role_of(params)
        shades = ROLE_COLOURS[role]
        colours.append(shades[used.get(role, 0) % len(shades)])
        used[role] = used.get(role, 0) + 1
    return colours


def role_legend(ax, param_sets: list[dict[str, str]]) -> None:
    """A legend with one entry per role present."""
    roles = list(dict.fromkeys(role_of(p) for p in param_sets))
    ax.legend(
        handles=[Patch(facecolor=ROLE_COLOURS[r][0], label=ROLE_LABELS[r]) for r in roles],
        loc="best",
        frameon=False,
    )


def _save(fig, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, format="svg", bbox_inches="tight", dpi=150, metadata={"Date": None})
    plt.close(fig)
    return path


def _safe(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in text)


def _unit_label(metric: str, unit: str) -> str:
    return f"{metric} ({unit})"


def _set_log(ax, axis: str, base: int = 10) -> None:
    """A logarithmic axis labelled in plain numbers (1, 10, 0.01), so that no
    label is a scaled-down superscript below 8 pt."""
    getattr(ax, f"set_{axis}scale")("log", base=base)
    target = ax.xaxis if axis == "x" else ax.yaxis
    target.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    target.set_minor_formatter(NullFormatter())


def _use_log(values: list[float]) -> bool:
    positive = [v for v in values if v > 0]
    return len(positive) == len(values) and len(values) > 0 and max(positive) / min(positive) > 100


def is_latency(metric: str) -> bool:
    """Per-measurement latencies: metrics in microseconds, except windowed ones."""
    return metric.endswith("_us") and not metric.startswith("window_")


def is_throughput(metric: str) -> bool:
    return metric.endswith("_per_s")


def _metrics(groups: list[Group], predicate: Callable[[str], bool]) -> list[str]:
    return [m for m in dict.fromkeys(g.metric for g in groups) if predicate(m)]


def _label(group: Group) -> str:
    return group.params.get(PLAIN_NAME_KEY, group.configuration)


def _sort_key(params: dict[str, str], keys: list[str]) -> tuple:
    out = []
    for k in keys:
        v = params.get(k, "")
        n = numeric(v)
        out.append((0, n, "") if n is not None else (1, 0.0, v))
    return tuple(out)


def _ci_error(summaries: list[dict]) -> np.ndarray:
    """Error-bar lengths (below, above) of 95% CIs; 0 where n < 2."""
    below = [s["mean"] - s["ci_95_lower"] if s["ci_95_lower"] is not None else 0.0 for s in summaries]
    above = [s["ci_95_upper"] - s["mean"] if s["ci_95_upper"] is not None else 0.0 for s in summaries]
    return np.array([below, above])


def _trial_means(group: Group) -> list[float]:
    return [float(np.mean(v)) for v in group.trial_values().values()]


def plot_box(data: Dataset, experiment: str, outdir: Path) -> list[Path]:
    """Box plots of each latency metric: median, IQR, 1.5 IQR whiskers, outliers, raw points beside."""
    groups = data.select(experiment)
    metrics = _metrics(groups, is_latency)
    if not metrics:
        raise PlotSkipped(f"no latency metric (*_us) for {experiment}")
    rng = np.random.default_rng(0)
    written = []
    for metric in metrics:
        gs = [g for g in groups if g.metric == metric]
        samples = [np.asarray(g.values()) for g in gs]
        colours = colours_for([g.params for g in gs])
        fig, ax = plt.subplots(figsize=(max(6.0, 1.0 * len(gs) + 2.0), 4.5))
        positions = np.arange(1, len(gs) + 1)
        box = ax.boxplot(
            samples,
            positions=positions,
            widths=0.45,
            whis=1.5,
            showfliers=True,
            patch_artist=True,
            medianprops={"color": "black", "linewidth": 1.2},
            # The outliers and the points (thousands a box) are drawn as one
            # image each in the SVG: as vectors, a figure took a megabyte.
            flierprops={"marker": "x", "markersize": 3, "markeredgecolor": "#444444", "alpha": 0.6, "rasterized": True},
        )
        for patch, colour in zip(box["boxes"], colours):
            patch.set_facecolor(colour)
            patch.set_alpha(0.55)
        for pos, sample, colour in zip(positions, samples, colours):
            shown = sample
            if sample.size > MAX_POINTS_PER_BOX:
                shown = rng.choice(sample, MAX_POINTS_PER_BOX, replace=False)
            jitter = rng.uniform(-0.07, 0.07, shown.size)
            ax.scatter(pos + 0.36 + jitter, shown, s=3, color=colour, alpha=0.45, linewidths=0, rasterized=True)
        ax.set_xticks(positions)
        ax.set_xticklabels([f"{_label(g)}\n(n={s.size})" for g, s in zip(gs, samples)], rotation=30, ha="right")
        if _use_log([float(v) for s in samples for v in (s.min(), s.max())]):
            _set_log(ax, "y")
        ax.set_ylabel(_unit_label(metric, gs[0].unit))
        ax.set_title(f"{experiment}: {metric} (box: IQR, whiskers: 1.5 IQR; points: measurements)")
        ax.grid(axis="y", alpha=0.3)
        role_legend(ax, [g.params for g in gs])
        written.append(_save(fig, outdir / f"{_safe(experiment)}.{_safe(metric)}.box.svg"))
    return written


def ecdf_points(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The empirical CDF (x sorted, F = rank / n), thinned in the body only:
    the top 1% of the values are all kept so the tail is exact."""
    x = np.sort(values)
    n = x.size
    f = np.arange(1, n + 1) / n
    if n <= ECDF_BODY_POINTS:
        return x, f
    body = np.linspace(0, n - 1, ECDF_BODY_POINTS).astype(int)
    idx = np.unique(np.concatenate([body, np.arange(n - n // 100 - 1, n)]))
    return x[idx], f[idx]


def plot_cdf(data: Dataset, experiment: str, outdir: Path) -> list[Path]:
    """CDF and complementary CDF (log-log, for the tail) of each latency metric, with p50/p99/p99.9 marked."""
    groups = data.select(experiment)
    metrics = _metrics(groups, is_latency)
    if not metrics:
        raise PlotSkipped(f"no latency metric (*_us) for {experiment}")
    written = []
    for metric in metrics:
        gs = [g for g in groups if g.metric == metric]
        colours = colours_for([g.params for g in gs])
        fig, (ax_cdf, ax_tail) = plt.subplots(1, 2, figsize=(11.0, 4.5))
        all_positive = True
        for i, (g, colour) in enumerate(zip(gs, colours)):
            sample = np.asarray(g.values())
            all_positive &= bool(np.all(sample > 0))
            x, f = ecdf_points(sample)
            style = LINE_STYLES[i % len(LINE_STYLES)]
            ax_cdf.step(x, f, where="post", color=colour, linestyle=style, linewidth=1.2,
                        label=f"{_label(g)} (n={sample.size})")
            tail = 1.0 - f + 1.0 / sample.size  # P(X >= x), never 0 on a log axis
            ax_tail.step(x, tail, where="pre", color=colour, linestyle=style, linewidth=1.2)
            sorted_sample = np.sort(sample)
            marks = [rkstats.percentile(sorted_sample, p) for p in (0.5, 0.99, 0.999)]
            ax_cdf.plot(marks, [0.5, 0.99, 0.999], "o", color=colour, markersize=3.5)
            ax_tail.plot(marks, [0.5, 0.01, 0.001], "o", color=colour, markersize=3.5)
        for level in (0.99, 0.999):
            ax_cdf.axhline(level, color="#bbbbbb", linewidth=0.6, linestyle=":")
        if all_positive:
            _set_log(ax_cdf, "x")
            _set_log(ax_tail, "x")
        _set_log(ax_tail, "y")
        label = _unit_label(metric, gs[0].unit)
        ax_cdf.set_xlabel(label)
        ax_cdf.set_ylabel("fraction of measurements <= x")
        ax_cdf.set_title(f"{experiment}: CDF (dots: p50, p99, p99.9)")
        ax_tail.set_xlabel(label)
        ax_tail.set_ylabel("fraction of measurements >= x")
        ax_tail.set_title("tail (complementary CDF)")
        for ax in (ax_cdf, ax_tail):
            ax.grid(alpha=0.3)
        ax_tail.legend(*ax_cdf.get_legend_handles_labels(), loc="upper left", bbox_to_anchor=(1.02, 1.0),
                       frameon=False)
        written.append(_save(fig, outdir / f"{_safe(experiment)}.{_safe(metric)}.cdf.svg"))
    return written


def plot_bars(data: Dataset, experiment: str, outdir: Path, bar_key: str) -> list[Path]:
    """Bars of mean throughput with 95% CI error bars and per-trial means as dots.

    Bars side by side differ in ``bar_key`` (e.g. path=host / path=k2k); the
    other parameters form the clusters along the x axis."""
    groups = [g for g in data.select(experiment) if bar_key in g.params]
    metrics = _metrics(groups, is_throughput)
    if not metrics:
        raise PlotSkipped(f"no throughput metric (*_per_s) with parameter '{bar_key}' for {experiment}")
    written = []
    for metric in metrics:
        gs = [g for g in groups if g.metric == metric]
        other_keys = list(dict.fromkeys(k for g in gs for k in g.params if k != bar_key))

        def cluster_of(g: Group) -> tuple:
            return tuple((k, g.params.get(k, "")) for k in other_keys)

        clusters = sorted(set(map(cluster_of, gs)), key=lambda c: _sort_key(dict(c), other_keys))
        bars = sorted(dict.fromkeys(g.params[bar_key] for g in gs), key=lambda v: role_of({bar_key: v}) != "baseline")
        colours = dict(zip(bars, colours_for([{bar_key: v} for v in bars])))
        width = 0.8 / len(bars)
        fig, ax = plt.subplots(figsize=(max(6.0, 0.45 * len(clusters) * len(bars) + 2.0), 4.5))
        means, labelled = [], set()
        for g in gs:
            value = g.params[bar_key]
            x = clusters.index(cluster_of(g)) + (bars.index(value) - (len(bars) - 1) / 2) * width
            s = rkstats.describe(g.values())
            ax.bar(x, s["mean"], width * 0.9, color=colours[value], alpha=0.8, yerr=_ci_error([s]), capsize=3,
                   label=None if value in labelled else f"{bar_key}={value}")
            points = _trial_means(g)
            ax.scatter(np.full(len(points), x), points, s=10, color="black", zorder=3,
                       label=None if labelled else "per-trial mean")
            labelled.add(value)
            means.append(s["mean"])
        ax.set_xticks(range(len(clusters)))
        ax.set_xticklabels([";".join(f"{k}={v}" for k, v in c) or "(all)" for c in clusters], rotation=30, ha="right")
        if _use_log(means):
            _set_log(ax, "y")
        ax.set_ylabel(_unit_label(metric, gs[0].unit))
        ax.set_title(f"{experiment}: {metric} by {bar_key} (error bars: 95% CI of the mean)")
        ax.grid(axis="y", alpha=0.3)
        ax.legend(frameon=False)
        written.append(_save(fig, outdir / f"{_safe(experiment)}.{_safe(metric)}.bar.svg"))
    return written


SCALING_METRICS = ("aggregate_msgs_per_s", "per_actor_msgs_per_s")


def plot_scaling(data: Dataset, experiment: str, outdir: Path) -> list[Path]:
    """Throughput against actor count (log2 axis), one column per scaling mode
    and one row per metric, with per-trial means as dots and ideal linear
    scaling dashed (aggregate: proportional to actors; per actor: constant)."""
    groups = [g for g in data.select(experiment) if numeric(g.params.get("actors", "")) is not None]
    metrics = [m for m in SCALING_METRICS if any(g.metric == m for g in groups)]
    if not metrics:
        raise PlotSkipped(f"no {' or '.join(SCALING_METRICS)} with an 'actors' parameter for {experiment}")
    modes = list(dict.fromkeys(g.params.get("mode", "") for g in groups))

    def series_of(g: Group) -> tuple:
        return tuple((k, v) for k, v in g.params.items() if k not in ("actors", "mode"))

    fig, axes = plt.subplots(len(metrics), len(modes), figsize=(5.5 * len(modes), 3.8 * len(metrics)), squeeze=False)
    for col, mode in enumerate(modes):
        for row, metric in enumerate(metrics):
            ax = axes[row][col]
            gs = [g for g in groups if g.metric == metric and g.params.get("mode", "") == mode]
            series = list(dict.fromkeys(series_of(g) for g in gs))
            means = []
            for key, colour in zip(series, colours_for([dict(k) for k in series])):
                members = [g for g in gs if series_of(g) == key]
                points = sorted(((numeric(g.params["actors"]), g) for g in members), key=lambda p: p[0])
                xs = np.array([x for x, _ in points])
                summaries = [rkstats.describe(g.values()) for _, g in points]
                ys = np.array([s["mean"] for s in summaries])
                means.extend(ys)
                name = ";".join(f"{k}={v}" for k, v in key) or "mean"
                ax.errorbar(xs, ys, yerr=_ci_error(summaries), color=colour, marker="o", markersize=4, linewidth=1.4,
                            capsize=3, label=f"{name} (95% CI)")
                for x, g in points:
                    trial_means = _trial_means(g)
                    ax.scatter(np.full(len(trial_means), x), trial_means, s=9, color="black", alpha=0.6, zorder=3)
                ideal = ys[0] * xs / xs[0] if metric.startswith("aggregate") else np.full(xs.size, ys[0])
                ax.plot(xs, ideal, color=colour, linestyle="--", linewidth=0.9, alpha=0.7, label="ideal (linear)")
            _set_log(ax, "x", base=2)
            ax.set_xticks(sorted({numeric(g.params["actors"]) for g in gs}))
            if _use_log(means):
                _set_log(ax, "y")
            ax.set_xlabel("actors")
            ax.set_ylabel(_unit_label(metric, gs[0].unit) if gs else metric)
            ax.set_title(f"{experiment}: {mode or 'all'} scaling" if row == 0 else "")
            ax.grid(alpha=0.3, which="both")
            ax.legend(frameon=False)
    return [_save(fig, outdir / f"{_safe(experiment)}.scaling.svg")]


# The panels of a time series: a y-axis name and the metrics drawn on it.
TIMESERIES_PANELS = (
    ("throughput", ("window_msgs_per_s", "window_offered_per_s")),
    ("latency", ("window_p50_us", "window_p99_us")),
    ("backlog", ("window_mailbox_depth", "window_ring_backlog")),
)


def plot_timeseries(data: Dataset, experiment: str, outdir: Path) -> list[Path]:
    """Windowed throughput and latency percentiles against the window index
    (the iteration), each trial thin with its points, the mean over trials thick."""
    groups = [g for g in data.select(experiment) if g.metric.startswith("window_")]
    if not groups:
        raise PlotSkipped(f"no window_* metrics for {experiment}")
    written = []
    for configuration in dict.fromkeys(g.configuration for g in groups):
        by_metric = {g.metric: g for g in groups if g.configuration == configuration}
        panels = [(name, [m for m in ms if m in by_metric]) for name, ms in TIMESERIES_PANELS]
        panels = [(name, ms) for name, ms in panels if ms]
        if not panels:
            continue
        colour = colours_for([next(iter(by_metric.values())).params])[0]
        fig, axes = plt.subplots(len(panels), 1, figsize=(9.0, 3.2 * len(panels)), sharex=True, squeeze=False)
        for ax, (panel_name, panel) in zip(axes[:, 0], panels):
            for style, metric in zip(LINE_STYLES, panel):
                g = by_metric[metric]
                per_window: dict[int, list[float]] = {}
                for _, rows in sorted(g.by_trial.items()):
                    rows = sorted(rows)
                    ax.plot([r[0] for r in rows], [r[1] for r in rows], color=colour, alpha=0.35, linewidth=0.7,
                            linestyle=style, marker="o", markersize=2)
                    for it, v in rows:
                        per_window.setdefault(it, []).append(v)
                windows = sorted(per_window)
                ax.plot(windows, [np.mean(per_window[w]) for w in windows], color=colour, linewidth=2.0,
                        linestyle=style, label=f"{metric}: mean of {len(g.by_trial)} trials")
            ax.set_ylabel(f"{panel_name} ({by_metric[panel[0]].unit})")
            ax.grid(alpha=0.3)
            ax.legend(frameon=False)
        axes[-1, 0].set_xlabel("window (iteration)")
        axes[0, 0].set_title(f"{experiment}: {configuration} (thin: each trial; thick: mean)")
        written.append(_save(fig, outdir / f"{_safe(experiment)}.{_safe(configuration)}.timeseries.svg"))
    if not written:
        raise PlotSkipped(f"none of {', '.join(m for _, ms in TIMESERIES_PANELS for m in ms)} for {experiment}")
    return written


def plot_heatmap(data: Dataset, experiment: str, outdir: Path, rows_key: str = "payload", cols_key: str = "depth",
                 panel_key: str = "path") -> list[Path]:
    """Mean throughput over payload x queue depth, one panel per path, plus the
    ratio of the second path to the first (e.g. k2k / host) when both exist."""
    groups = [g for g in data.select(experiment) if rows_key in g.params and cols_key in g.params]
    metrics = _metrics(groups, is_throughput)
    if not metrics:
        raise PlotSkipped(f"no throughput metric with '{rows_key}' and '{cols_key}' parameters for {experiment}")
    written = []
    for metric in metrics:
        gs = [g for g in groups if g.metric == metric]
        row_values = sorted({g.params[rows_key] for g in gs}, key=lambda v: _sort_key({rows_key: v}, [rows_key]))
        col_values = sorted({g.params[cols_key] for g in gs}, key=lambda v: _sort_key({cols_key: v}, [cols_key]))
        panels = sorted(dict.fromkeys(g.params.get(panel_key, "") for g in gs),
                        key=lambda v: role_of({panel_key: v}) != "baseline")
        matrices = {}
        for p in panels:
            m = np.full((len(row_values), len(col_values)), np.nan)
            for g in gs:
                if g.params.get(panel_key, "") == p:
                    m[row_values.index(g.params[rows_key]), col_values.index(g.params[cols_key])] = np.mean(g.values())
            matrices[f"{panel_key}={p}" if p else "all"] = m
        if len(panels) == 2:
            base, cand = matrices.values()
            with np.errstate(divide="ignore", invalid="ignore"):
                matrices[f"ratio {panels[1]} / {panels[0]}"] = cand / base
        fig, axes = plt.subplots(1, len(matrices), figsize=(4.6 * len(matrices), 4.0), squeeze=False)
        for ax, (title, m) in zip(axes[0], matrices.items()):
            image = ax.imshow(m, cmap="viridis", aspect="auto", origin="lower")
            fig.colorbar(image, ax=ax, shrink=0.85)
            finite = m[np.isfinite(m)]
            mid = (finite.min() + finite.max()) / 2 if finite.size else 0
            for (r, c), v in np.ndenumerate(m):
                if math.isfinite(v):
                    ax.text(c, r, f"{v:.3g}", ha="center", va="center", fontsize=8,
                            color="white" if v < mid else "black")
            ax.set_xticks(range(len(col_values)))
            ax.set_xticklabels(col_values)
            ax.set_yticks(range(len(row_values)))
            ax.set_yticklabels(row_values)
            ax.set_xlabel(cols_key)
            ax.set_ylabel(rows_key)
            ax.set_title(title if title.startswith("ratio") else f"{title}: mean {metric}")
        fig.suptitle(f"{experiment}: {metric} ({gs[0].unit}) by {rows_key} x {cols_key}", fontsize=10)
        written.append(_save(fig, outdir / f"{_safe(experiment)}.{_safe(metric)}.heatmap.svg"))
    return written


@dataclass(frozen=True)
class PlotSpec:
    kind: str
    experiment: str
    draw: Callable[[Dataset, str, Path], list[Path]]


# Which figure is drawn for which experiment.
PLOTS = (
    PlotSpec("box plot", "exp1_launch_overhead", plot_box),
    PlotSpec("box plot", "k2k_hop", plot_box),
    PlotSpec("box plot", "exp5_mixed", plot_box),
    PlotSpec("box plot", "exp8_hopper", plot_box),
    PlotSpec("box plot", "message_paths", plot_box),
    PlotSpec("CDF", "exp1_launch_overhead", plot_cdf),
    PlotSpec("CDF", "k2k_hop", plot_cdf),
    PlotSpec("bar chart", "exp2_k2k_throughput", functools.partial(plot_bars, bar_key="path")),
    PlotSpec("bar chart", "exp5_mixed", functools.partial(plot_bars, bar_key="model")),
    PlotSpec("bar chart", "exp8_hopper", functools.partial(plot_bars, bar_key="method")),
    PlotSpec("scalability line plot", "exp3_scaling", plot_scaling),
    PlotSpec("time series", "exp4_sustained", plot_timeseries),
    PlotSpec("heatmap", "exp2_k2k_throughput", plot_heatmap),
)


def draw_all(data: Dataset, outdir: Path) -> tuple[list[tuple[PlotSpec, list[Path]]], list[tuple[PlotSpec, str]]]:
    """Draws every figure of ``PLOTS``: (spec, files) drawn and (spec, reason) skipped."""
    outdir.mkdir(parents=True, exist_ok=True)
    drawn, skipped = [], []
    present = set(data.experiments())
    for spec in PLOTS:
        if spec.experiment not in present:
            skipped.append((spec, f"no {spec.experiment} data"))
            continue
        try:
            drawn.append((spec, spec.draw(data, spec.experiment, outdir)))
        except PlotSkipped as e:
            skipped.append((spec, str(e)))
    return drawn, skipped
