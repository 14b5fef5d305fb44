"""Statistics for RingKernel's benchmark suite.

Three entry points:

* ``summarize(values)`` describes one sample (one experiment, configuration
  and metric over all its trials): centre, spread, a 95% confidence interval
  of the mean, percentiles, and outliers found with the modified Z-score. The
  summary is given over all values and again without the outliers; outliers
  are counted and reported, never dropped silently.
* ``compare(baseline_by_trial, candidate_by_trial)`` compares two
  configurations measured in the same trials: the speedup as the geometric
  mean of per-trial speedups with a t-based 95% interval, Cohen's d, Welch's
  t-test and the absolute difference of the means.
* ``lattice(values, shortest, longest, step)`` says whether one trial's
  latencies sit on peaks a fixed period apart (a polling loop locked in
  phase with the measurement), and which period.

Conventions (used the same way everywhere in the suite):

* Percentiles interpolate linearly between order statistics (Hyndman and
  Fan's definition 7, the default of NumPy and R): for sorted values
  x[0..n-1] and a fraction p, h = (n - 1) * p and the percentile is
  x[floor(h)] + (h - floor(h)) * (x[floor(h) + 1] - x[floor(h)]).
* The standard deviation is the sample one (divisor n - 1); it, the
  confidence interval and the coefficient of variation are None when n < 2
  (and the CV also when the mean is 0).
* The 95% confidence interval of the mean is mean +/- 1.96 * sd / sqrt(n).
* Outliers: modified Z-score M = 0.6745 * (x - median) / MAD, where MAD is
  the median absolute deviation from the median; |M| > 3.5 is an outlier
  (Iglewicz and Hoaglin). When MAD is 0 (more than half the values equal the
  median, common with coarse timers) the score falls back to
  M = (x - median) / (1.253314 * MeanAD), with MeanAD the mean absolute
  deviation from the median; 1.253314 * MeanAD estimates the standard
  deviation of normal data as 1.4826 * MAD does. When MeanAD is also 0 all
  values are equal and there are no outliers. ``outlier_method`` says which
  rule was used ("mad", "meanad" or "identical").
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
from scipy import stats as scipy_stats

Z_95 = 1.96
OUTLIER_THRESHOLD = 3.5
MAD_SCALE = 0.6745
MEANAD_SCALE = 1.253314
PERCENTILES = {"p50": 0.50, "p95": 0.95, "p99": 0.99, "p999": 0.999}


def percentile(sorted_values: Sequence[float], fraction: float) -> float:
    """The ``fraction`` (0..1) percentile of already sorted values (definition 7)."""
    n = len(sorted_values)
    if n == 0:
        raise ValueError("percentile of an empty sample")
    if not 0.0 <= fraction <= 1.0:
        raise ValueError(f"percentile fraction {fraction} is outside [0, 1]")
    h = (n - 1) * fraction
    lo = math.floor(h)
    hi = min(lo + 1, n - 1)
    return float(sorted_values[lo] + (h - lo) * (sorted_values[hi] - sorted_values[lo]))


def modified_z_scores(values: Sequence[float]) -> tuple[np.ndarray, str]:
    """Modified Z-scores of ``values`` and the rule used ("mad", "meanad", "identical")."""
    x = np.asarray(values, dtype=float)
    median = float(np.median(x))
    deviation = x - median
    mad = float(np.median(np.abs(deviation)))
    if mad > 0:
        return MAD_SCALE * deviation / mad, "mad"
    mean_ad = float(np.mean(np.abs(deviation)))
    if mean_ad > 0:
        return deviation / (MEANAD_SCALE * mean_ad), "meanad"
    return np.zeros_like(x), "identical"


def outlier_mask(values: Sequence[float]) -> tuple[np.ndarray, str]:
    """A boolean mask of the outliers in ``values`` (|modified Z| > 3.5) and the rule used."""
    scores, method = modified_z_scores(values)
    return np.abs(scores) > OUTLIER_THRESHOLD, method


def describe(values: Sequence[float]) -> dict:
    """Centre, spread, confidence interval and percentiles of one sample."""
    x = np.sort(np.asarray(values, dtype=float))
    n = int(x.size)
    if n == 0:
        raise ValueError("cannot describe an empty sample")
    if not np.all(np.isfinite(x)):
        raise ValueError("the sample holds a non-finite value")
    mean = float(np.mean(x))
    if n < 2:
        std_dev = None
    elif x[0] == x[-1]:
        std_dev = 0.0  # exactly; the general formula leaves rounding noise
    else:
        std_dev = float(np.std(x, ddof=1))
    half_width = Z_95 * std_dev / math.sqrt(n) if std_dev is not None else None
    result = {
        "n": n,
        "mean": mean,
        "median": percentile(x, 0.5),
        "std_dev": std_dev,
        "ci_95_lower": mean - half_width if half_width is not None else None,
        "ci_95_upper": mean + half_width if half_width is not None else None,
        "cv": std_dev / mean if std_dev is not None and mean != 0 else None,
        "min": float(x[0]),
        "max": float(x[-1]),
    }
    for name, fraction in PERCENTILES.items():
        result[name] = percentile(x, fraction)
    return result


def summarize(values: Sequence[float]) -> dict:
    """The full summary of one sample: ``describe`` over all values, the outlier
    count and rule, and ``without_outliers`` (``describe`` of the rest plus
    ``outliers_removed``)."""
    x = np.asarray(values, dtype=float)
    result = describe(x)
    mask, method = outlier_mask(x)
    count = int(mask.sum())
    result["outliers"] = count
    result["outlier_method"] = method
    kept = x[~mask]
    result["without_outliers"] = {"outliers_removed": count, **describe(kept)}
    return result


# Lattices (``lattice``): the fewest values looked at; how far a period's
# coherence must stand above the lowest coherence of the periods up to twice
# it; and how far above what a sample of n values with no preferred phase
# reaches by chance (about 1 / sqrt(n)).
LATTICE_MIN_VALUES = 200
LATTICE_CONTRAST = 0.15
LATTICE_COHERENCE_SIGMAS = 5.0
# The most phases computed at once (periods x values).
LATTICE_CHUNK_ELEMENTS = 1 << 20


def lattice(values: Sequence[float], shortest: float, longest: float, step: float) -> dict | None:
    """Whether one trial's values sit on a lattice: peaks a fixed period apart.

    A loop that polls with period T and is locked in phase with the start of
    each measurement makes a latency a constant plus a whole number of
    periods; the sample's median then moves in steps of T from process to
    process (bench/NOTES.md, session 43). The coherence of a period T is
    |mean(exp(2 pi i x / T))|: 1 when every value lies on one lattice of
    period T, about 1 / sqrt(n) for values with no preferred phase. Values
    in one narrow peak are coherent too, the more so the longer the period,
    which says nothing of a lattice; a lattice's coherence instead falls
    between T and 2 T (at 1.5 T its points take three phases). So each
    period from ``shortest`` to ``longest`` (in steps of ``step``) scores
    its coherence less the lowest coherence of the periods above it up to
    twice it. Returns the best one's ``period``, ``coherence`` and
    ``contrast`` (that score), ``offset`` (where its points lie, in [0, T))
    and ``on_lattice``: the contrast at least LATTICE_CONTRAST and the
    coherence at least LATTICE_COHERENCE_SIGMAS / sqrt(n). None for fewer
    than LATTICE_MIN_VALUES values.
    """
    if not 0 < shortest <= longest or step <= 0:
        raise ValueError(f"lattice periods {shortest}..{longest} by {step}")
    x = np.asarray(values, dtype=float)
    n = int(x.size)
    if n < LATTICE_MIN_VALUES:
        return None
    if not np.all(np.isfinite(x)):
        raise ValueError("the sample holds a non-finite value")
    periods = np.arange(shortest, 2 * longest + step / 2, step)
    # One row per period: the values' phases on that period's circle; some
    # periods at a time, so that a large sample's rows stay a few MB.
    sums = np.empty(periods.size, dtype=complex)
    rows = max(1, LATTICE_CHUNK_ELEMENTS // n)
    for i in range(0, periods.size, rows):
        p = periods[i:i + rows]
        sums[i:i + rows] = np.exp(2j * np.pi * x[np.newaxis, :] / p[:, np.newaxis]).mean(axis=1)
    coherence = np.abs(sums)
    best, best_contrast = -1, -1.0
    for k in range(int(np.searchsorted(periods, longest + step / 2))):
        above = coherence[(periods > periods[k]) & (periods <= 2 * periods[k] + step / 2)]
        if above.size == 0:
            continue
        contrast = float(coherence[k] - above.min())
        if contrast > best_contrast:
            best, best_contrast = k, contrast
    if best < 0:
        return None
    period = float(periods[best])
    offset = float((np.angle(sums[best]) / (2 * np.pi) * period) % period)
    on = best_contrast >= LATTICE_CONTRAST and coherence[best] >= LATTICE_COHERENCE_SIGMAS / math.sqrt(n)
    return {"period": period, "coherence": float(coherence[best]), "contrast": best_contrast, "offset": offset,
            "on_lattice": bool(on)}


def _trial_means(by_trial: Mapping[int, Sequence[float]]) -> dict[int, float]:
    return {trial: float(np.mean(v)) for trial, v in by_trial.items() if len(v) > 0}


def _pooled(by_trial: Mapping[int, Sequence[float]]) -> np.ndarray:
    parts = [np.asarray(by_trial[t], dtype=float) for t in sorted(by_trial)]
    return np.concatenate(parts) if parts else np.empty(0)


def _side(values: np.ndarray) -> dict:
    d = describe(values)
    ci = [d["ci_95_lower"], d["ci_95_upper"]] if d["ci_95_lower"] is not None else None
    return {"mean": d["mean"], "ci_95": ci, "n": d["n"]}


def geometric_mean_speedup(per_trial: Sequence[float]) -> tuple[float, list[float] | None]:
    """The geometric mean of per-trial speedups and its 95% interval.

    The interval is a t interval on the logarithms (k - 1 degrees of freedom
    for k trials), transformed back; None for a single trial."""
    logs = np.log(np.asarray(per_trial, dtype=float))
    k = logs.size
    centre = float(np.mean(logs))
    if k < 2:
        return math.exp(centre), None
    half = float(scipy_stats.t.ppf(0.975, k - 1)) * float(np.std(logs, ddof=1)) / math.sqrt(k)
    return math.exp(centre), [math.exp(centre - half), math.exp(centre + half)]


def compare(
    baseline_by_trial: Mapping[int, Sequence[float]],
    candidate_by_trial: Mapping[int, Sequence[float]],
    higher_is_better: bool = False,
) -> dict:
    """Compares a candidate configuration with a baseline measured in the same trials.

    Each argument maps a trial number to that trial's measurements.

    * ``speedup``: the geometric mean over the trials present on both sides
      of baseline_mean / candidate_mean (lower is better, e.g. latency) or
      candidate_mean / baseline_mean (``higher_is_better``, e.g. throughput);
      above 1 means the candidate is better. ``speedup_ci_95`` is the t
      interval of ``geometric_mean_speedup``; with one shared trial it is
      None and ``speedup_note`` says why.
    * ``cohens_d``: the difference of the pooled means over the pooled
      standard deviation, signed so that a positive value favours the
      candidate; None when the pooled deviation is 0 or undefined.
    * ``p_value``: Welch's t-test (unequal variances) over all measurements
      of both sides; ``significant`` is p < 0.05. The test treats the
      measurements as independent, which repeated iterations in one process
      are not quite; the across-trial interval of the speedup is the more
      conservative figure.
    * ``abs_diff``: |baseline mean - candidate mean| in the metric's unit.
    """
    base = _pooled(baseline_by_trial)
    cand = _pooled(candidate_by_trial)
    if base.size == 0 or cand.size == 0:
        raise ValueError("compare needs measurements on both sides")
    speedup, speedup_ci, note, per_trial = _speedup(baseline_by_trial, candidate_by_trial, higher_is_better)
    p = _welch_p(base, cand)
    return {
        "baseline": _side(base),
        "candidate": _side(cand),
        "speedup": speedup,
        "speedup_ci_95": speedup_ci,
        "speedup_note": note,
        "cohens_d": _cohens_d(base, cand, higher_is_better),
        "p_value": p,
        "significant": p is not None and p < 0.05,
        "abs_diff": abs(float(np.mean(base)) - float(np.mean(cand))),
        "higher_is_better": higher_is_better,
        "trials": len(per_trial),
        "per_trial_speedup": per_trial,
    }


def _speedup(baseline_by_trial, candidate_by_trial, higher_is_better: bool):
    """(speedup, its interval, a note when either is unavailable, {trial: speedup})."""
    base_means = _trial_means(baseline_by_trial)
    cand_means = _trial_means(candidate_by_trial)
    per_trial: dict[str, float | None] = {}
    for t in sorted(set(base_means) & set(cand_means)):
        num, den = (cand_means[t], base_means[t]) if higher_is_better else (base_means[t], cand_means[t])
        per_trial[str(t)] = num / den if num > 0 and den > 0 else None
    if not per_trial:
        return None, None, "unavailable: no trial has both configurations", per_trial
    if any(r is None for r in per_trial.values()):
        return None, None, "unavailable: a per-trial mean is not positive", per_trial
    speedup, ci = geometric_mean_speedup(list(per_trial.values()))
    return speedup, ci, None if ci else "confidence interval unavailable: one trial", per_trial


def _cohens_d(base: np.ndarray, cand: np.ndarray, higher_is_better: bool) -> float | None:
    """(mean_b - mean_c) / pooled SD, negated for higher-is-better metrics; None without spread."""
    if base.size < 2 or cand.size < 2:
        return None
    pooled_var = ((base.size - 1) * np.var(base, ddof=1) + (cand.size - 1) * np.var(cand, ddof=1)) / (
        base.size + cand.size - 2
    )
    if pooled_var <= 0:
        return None
    d = (float(np.mean(base)) - float(np.mean(cand))) / math.sqrt(pooled_var)
    return -d if higher_is_better else d


def _welch_p(base: np.ndarray, cand: np.ndarray) -> float | None:
    """Welch's two-sided t-test p-value; None when undefined (n < 2, or no variance)."""
    if base.size < 2 or cand.size < 2:
        return None
    p = float(scipy_stats.ttest_ind(base, cand, equal_var=False).pvalue)
    return p if math.isfinite(p) else None
