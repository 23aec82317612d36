"""Figures of the analyses: saliency by relative token position (PosIR Figure 5) and segment similarity
(Zeng et al., Appendix A.4, Table 4 as a plot). To be merged into posir.figures; same conventions."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from posir.metrics.aggregate import ALL  # noqa: E402


def saliency_curves(curves: Mapping[str, pd.DataFrame], title: str, path: Path,
                    markers: Mapping[str, Mapping[str, float]] | None = None) -> None:
    """Mean max-normalised saliency per relative token bin, one line and t-interval band per model.

    ``curves`` maps a model to :func:`posir.analyses.saliency.aggregate_curves`; ``markers`` to
    :func:`posir.analyses.saliency.evidence_summary`. The evidence's interquartile range of
    relative token positions is shaded grey (with its median dotted), and a model that truncates
    gets a vertical line where it stops reading (median seen fraction), since its curve is 0 after it.
    """
    fig, ax = plt.subplots(figsize=(7, 3.8))
    evidence_drawn = False
    for model, band in curves.items():
        n_pairs = int(band["n_pairs"].iloc[0]) if len(band) else 0
        (line,) = ax.plot(band["bin_centre"], band["mean"], label=f"{model} (n={n_pairs})")
        ax.fill_between(band["bin_centre"], band["ci_low"], band["ci_high"], color=line.get_color(), alpha=0.2,
                        linewidth=0)
        marker = (markers or {}).get(model, {})
        seen = marker.get("seen_fraction_median", math.nan)
        if math.isfinite(seen) and seen < 1.0:
            ax.axvline(seen, color=line.get_color(), linestyle=":", linewidth=1)
            ax.text(seen, 0.98, " reads up to here", color=line.get_color(), fontsize="x-small", va="top",
                    transform=ax.get_xaxis_transform())
        q1, q3 = marker.get("evidence_q1", math.nan), marker.get("evidence_q3", math.nan)
        if not evidence_drawn and math.isfinite(q1) and math.isfinite(q3):
            # the pairs are the same for every model, so the evidence is drawn once
            ax.axvspan(q1, q3, color="grey", alpha=0.15, linewidth=0, label="evidence (middle 50% of pairs)")
            ax.axvline(marker.get("evidence_median", math.nan), color="grey", linestyle="--", linewidth=0.8)
            evidence_drawn = True
    ax.set_xlim(0, 1)
    ax.set_ylim(bottom=0)
    ax.set_xlabel("relative token position in the document")
    ax.set_ylabel("gradient saliency (max-normalised)")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _segment_lines(ax, summary: pd.DataFrame, buckets: Sequence[str]) -> None:
    for bucket in [*buckets, ALL]:
        frame = summary[(summary["bucket"] == bucket) & (summary["n_documents"] > 0)].sort_values("segment")
        if frame.empty:
            continue
        k = int(summary["segment"].max()) + 1
        centres = (frame["segment"] + 0.5) / k
        style = {"color": "black", "linestyle": "--"} if bucket == ALL else {}
        n = int(frame["n_documents"].iloc[0])
        errors = np.vstack([frame["mean_cosine"] - frame["ci_low"], frame["ci_high"] - frame["mean_cosine"]])
        ax.errorbar(centres, frame["mean_cosine"], yerr=np.nan_to_num(errors), marker="o", markersize=3, capsize=2,
                    label=f"{bucket} (n={n})", **style)
    ax.set_xlim(0, 1)
    ax.grid(alpha=0.3)


def segment_similarity(panels: Mapping[str, pd.DataFrame], buckets: Sequence[str], title: str, path: Path) -> None:
    """Cosine(document, segment) by segment position, one line per length bucket, one panel per model.

    ``panels`` maps a model to :func:`posir.analyses.representation.summarize_segments`; the
    x axis is the segment's centre as a share of the document (segment i of k at (i + 0.5) / k),
    error bars are the t-intervals over documents.
    """
    n = max(len(panels), 1)
    cols = min(n, 3)
    rows = int(np.ceil(n / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(4.5 * cols, 3.4 * rows), sharex=True, sharey=True, squeeze=False)
    for ax, (label, summary) in zip(axes.flat, panels.items()):
        _segment_lines(ax, summary, buckets)
        ax.set_title(label, fontsize="medium")
    for ax in axes.flat[len(panels):]:
        ax.set_visible(False)
    for ax in axes[-1]:
        ax.set_xlabel("segment position in the document")
    for ax in axes[:, 0]:
        ax.set_ylabel("cosine(document, segment)")
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="center right", title="length bucket", fontsize="small")
    fig.suptitle(title)
    fig.tight_layout(rect=(0, 0, 0.84, 1))
    fig.savefig(path, dpi=120)
    plt.close(fig)
