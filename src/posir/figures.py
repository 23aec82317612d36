"""Figures: positional distribution (PosIR Figure 2) and nDCG@10 by position (Figures 3-4)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from posir.metrics.aggregate import ALL  # noqa: E402
from posir.metrics.measures import POSITION_MEASURE  # noqa: E402


def positional_distribution(positions: pd.DataFrame, buckets: Sequence[str], n_bins: int, title: str, path: Path) -> None:
    """Stacked query counts per relative position bin, one colour per length bucket."""
    fig, ax = plt.subplots(figsize=(8, 3.5))
    centers = (np.arange(n_bins) + 0.5) / n_bins
    bottom = np.zeros(n_bins)
    for bucket in buckets:
        counts = positions[positions["length_bucket"] == bucket]["position_bin"].value_counts()
        heights = np.array([counts.get(b, 0) for b in range(n_bins)], dtype=float)
        ax.bar(centers, heights, width=1.0 / n_bins * 0.9, bottom=bottom, label=bucket)
        bottom += heights
    ax.set_xlabel("relative position of the reference span (midpoint / document length)")
    ax.set_ylabel("queries")
    ax.set_xlim(0, 1)
    ax.set_title(title)
    ax.legend(title="length bucket", ncols=len(buckets), fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _plot_curves(ax, bins: pd.DataFrame, buckets: Sequence[str], min_bin_queries: int,
                 bands: pd.DataFrame | None = None) -> None:
    for bucket in [*buckets, ALL]:
        frame = bins[(bins["bucket"] == bucket) & (bins["n_queries"] >= max(min_bin_queries, 1))]
        if frame.empty:
            continue
        centers = (frame["bin_start"] + frame["bin_end"]) / 2
        style = {"color": "black", "linestyle": "--"} if bucket == ALL else {}
        (line,) = ax.plot(centers, frame[POSITION_MEASURE.column] * 100, marker="o", markersize=3, label=bucket, **style)
        if bands is not None:
            _band(ax, bands, bucket, frame, centers, line.get_color())
    ax.set_xlim(0, 1)
    ax.grid(alpha=0.3)


def _band(ax, bands: pd.DataFrame, bucket: str, frame: pd.DataFrame, centers: pd.Series, color: str) -> None:
    """Shade the bootstrap interval of each drawn bin mean (metrics/bootstrap.py)."""
    band = bands[bands["bucket"] == bucket].set_index("position_bin").reindex(frame["position_bin"])
    ax.fill_between(centers.to_numpy(), band[POSITION_MEASURE.of("ci_low")].to_numpy() * 100,
                    band[POSITION_MEASURE.of("ci_high")].to_numpy() * 100,
                    color=color, alpha=0.12 if bucket == ALL else 0.2, linewidth=0)


def position_curve(bins: pd.DataFrame, buckets: Sequence[str], min_bin_queries: int, title: str, path: Path,
                   bands: pd.DataFrame | None = None) -> None:
    """Mean nDCG@10 against relative position, one line per length bucket; bootstrap bands when given."""
    fig, ax = plt.subplots(figsize=(6, 4))
    _plot_curves(ax, bins, buckets, min_bin_queries, bands)
    ax.set_xlabel("relative position of the evidence")
    ax.set_ylabel("nDCG@10 (%)")
    ax.set_title(title)
    ax.legend(title="length bucket", fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def position_grid(panels: Mapping[str, pd.DataFrame], buckets: Sequence[str], min_bin_queries: int, title: str, path: Path,
                  bands: Mapping[str, pd.DataFrame] | None = None) -> None:
    """One panel per model and setting, shared axes, for comparing position bias at a glance."""
    n = len(panels)
    cols = min(n, 3)
    rows = int(np.ceil(n / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(4.5 * cols, 3.4 * rows), sharex=True, sharey=True, squeeze=False)
    for ax, (label, bins) in zip(axes.flat, panels.items()):
        _plot_curves(ax, bins, buckets, min_bin_queries, (bands or {}).get(label))
        ax.set_title(label, fontsize="medium")
    for ax in axes.flat[n:]:
        ax.set_visible(False)
    for ax in axes[-1]:
        ax.set_xlabel("relative position")
    for ax in axes[:, 0]:
        ax.set_ylabel("nDCG@10 (%)")
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="center right", title="length bucket")
    fig.suptitle(title)
    fig.tight_layout(rect=(0, 0, 0.9, 1))
    fig.savefig(path, dpi=120)
    plt.close(fig)


def language_bias_heatmaps(shares: pd.DataFrame, title: str, path: Path) -> None:
    """One heatmap per model: query language (rows) by document language (columns)."""
    models = sorted(shares["model"].unique()) or ["(none)"]
    fig, axes = plt.subplots(1, len(models), figsize=(4.8 * len(models), 4.2), squeeze=False)
    image = None
    for ax, model in zip(axes.flat, models):
        wide = shares[shares["model"] == model].pivot_table(
            index="query_language", columns="document_language", values="share", fill_value=0.0)
        if wide.empty:
            ax.set_visible(False)
            continue
        image = ax.imshow(wide.to_numpy() * 100, cmap="viridis", vmin=0, vmax=100)
        ax.set_xticks(range(len(wide.columns)), wide.columns, rotation=90)
        ax.set_yticks(range(len(wide.index)), wide.index)
        ax.set_xlabel("document language")
        ax.set_ylabel("query language")
        ax.set_title(model)
        for (i, j), value in np.ndenumerate(wide.to_numpy() * 100):
            ax.text(j, i, f"{value:.0f}", ha="center", va="center", fontsize=7, color="white" if value < 50 else "black")
    if image is not None:
        fig.colorbar(image, ax=axes.ravel().tolist(), label="% of top results")
    fig.suptitle(title)
    fig.savefig(path, dpi=120)
    plt.close(fig)
