"""Figures: positional distribution (PosIR Figure 2), nDCG@10 by position (Figures 3-4), saliency by token
position (Figure 5) and segment similarity (Zeng et al., Appendix A.4).

Each figure draws result frames whose columns :mod:`posir.results.schemas` names; its axis labels name the
measure by its object (``posir.metrics.measures.POSITION_MEASURE``)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from posir.metrics.columns import (
    ALL,
    ATTRIBUTE,
    BIN_END,
    BIN_START,
    BUCKET,
    CI_HIGH,
    CI_LOW,
    GROUP,
    LENGTH_BUCKET,
    MEAN,
    MODEL,
    N_QUERIES,
    POSITION_BIN,
    SETTING,
    SHARE,
    suffixed,
)
from posir.metrics.controlled import LENGTH, TARGET_POSITION  # noqa: E402
from posir.metrics.exposure import CORPUS_SHARE, RELEVANT_SHARE  # noqa: E402
from posir.metrics.measure import GroupMeasure  # noqa: E402
from posir.metrics.measures import POSITION_MEASURE  # noqa: E402
from posir.results.schemas import (
    BIN_CENTRE,
    DOCUMENT_LANGUAGE,
    MEAN_COSINE,
    N_DOCUMENTS,
    N_PAIRS,
    NDCG,
    OWN_RUNS,
    QUERY_LANGUAGE,
    SEGMENT,
    SOURCE,
)

#: The y axis of every position curve: the position measure in percent.
SCORE_AXIS = f"{POSITION_MEASURE.name} (%)"

#: the height kept free above a grid of panels for its title, and the title's distance from the top
TITLE_BAND_INCHES, TITLE_MARGIN_INCHES = 0.12, 0.08


def positional_distribution(
    positions: pd.DataFrame, buckets: Sequence[str], n_bins: int, title: str, path: Path
) -> None:
    """Stacked query counts per relative position bin, one colour per length bucket."""
    fig, ax = plt.subplots(figsize=(8, 3.5))
    centers = (np.arange(n_bins) + 0.5) / n_bins
    bottom = np.zeros(n_bins)
    for bucket in buckets:
        counts = positions[positions[LENGTH_BUCKET] == bucket][POSITION_BIN].value_counts()
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


def _plot_curves(
    ax, bins: pd.DataFrame, buckets: Sequence[str], min_bin_queries: int, bands: pd.DataFrame | None = None
) -> None:
    for bucket in [*buckets, ALL]:
        frame = bins[(bins[BUCKET] == bucket) & (bins[N_QUERIES] >= max(min_bin_queries, 1))]
        if frame.empty:
            continue
        centers = (frame[BIN_START] + frame[BIN_END]) / 2
        style = {"color": "black", "linestyle": "--"} if bucket == ALL else {}
        (line,) = ax.plot(centers, frame[NDCG] * 100, marker="o", markersize=3, label=bucket, **style)
        if bands is not None:
            _band(ax, bands, bucket, frame, centers, line.get_color())
    ax.set_xlim(0, 1)
    ax.grid(alpha=0.3)


def _band(ax, bands: pd.DataFrame, bucket: str, frame: pd.DataFrame, centers: pd.Series, color: str) -> None:
    """Shade the bootstrap interval of each drawn bin mean (metrics/bootstrap.py)."""
    band = bands[bands[BUCKET] == bucket].set_index(POSITION_BIN).reindex(frame[POSITION_BIN])
    ax.fill_between(
        centers.to_numpy(),
        band[suffixed(NDCG, CI_LOW)].to_numpy() * 100,
        band[suffixed(NDCG, CI_HIGH)].to_numpy() * 100,
        color=color,
        alpha=0.12 if bucket == ALL else 0.2,
        linewidth=0,
    )


def position_curve(
    bins: pd.DataFrame,
    buckets: Sequence[str],
    min_bin_queries: int,
    title: str,
    path: Path,
    bands: pd.DataFrame | None = None,
) -> None:
    """Mean nDCG@10 against relative position, one line per length bucket; bootstrap bands when given."""
    fig, ax = plt.subplots(figsize=(6, 4))
    _plot_curves(ax, bins, buckets, min_bin_queries, bands)
    ax.set_xlabel("relative position of the evidence")
    ax.set_ylabel(SCORE_AXIS)
    ax.set_title(title)
    ax.legend(title="length bucket", fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def position_grid(
    panels: Mapping[str, pd.DataFrame],
    buckets: Sequence[str],
    min_bin_queries: int,
    title: str,
    path: Path,
    bands: Mapping[str, pd.DataFrame] | None = None,
) -> Figure:
    """One panel per model and setting, shared axes, for comparing position bias at a glance; returns the figure
    (closed: its layout can still be read)."""
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
        ax.set_ylabel(SCORE_AXIS)
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="center right", title="length bucket")
    # the title in a band of fixed height at the top, above the first row's panel titles however many rows follow
    # (matplotlib places it at a fraction of the figure's height, which sinks into the panels of a tall grid)
    height = fig.get_figheight()
    fig.suptitle(title, y=1 - TITLE_MARGIN_INCHES / height)
    fig.tight_layout(rect=(0, 0, 0.9, 1 - TITLE_BAND_INCHES / height))
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return fig


def language_bias_heatmaps(shares: pd.DataFrame, title: str, path: Path) -> None:
    """One heatmap per model: query language (rows) by document language (columns)."""
    models = sorted(shares[MODEL].unique()) or ["(none)"]
    fig, axes = plt.subplots(1, len(models), figsize=(4.8 * len(models), 4.2), squeeze=False)
    image = None
    for ax, model in zip(axes.flat, models):
        wide = shares[shares[MODEL] == model].pivot_table(
            index=QUERY_LANGUAGE, columns=DOCUMENT_LANGUAGE, values=SHARE, fill_value=0.0
        )
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
            ax.text(
                j, i, f"{value:.0f}", ha="center", va="center", fontsize=7, color="white" if value < 50 else "black"
            )
    if image is not None:
        fig.colorbar(image, ax=axes.ravel().tolist(), label="% of top results")
    fig.suptitle(title)
    fig.savefig(path, dpi=120)
    plt.close(fig)


def exposure_figure(table: pd.DataFrame, share: GroupMeasure, path: Path) -> None:
    """Who gets seen: per (setting, attribute), each model's ``share`` of the top-k exposure per group (bars) against
    the group's share of the corpus (black line) and of the relevant documents (grey dashes); a group above its
    line is seen more than its size alone would give it."""
    panels = list(table.groupby([SETTING, ATTRIBUTE], sort=True)) if len(table) else []
    models = list(dict.fromkeys(table[MODEL])) if len(table) else []
    colours = {model: plt.get_cmap("tab20")(i % 20) for i, model in enumerate(models)}
    columns = min(len(panels), 3) or 1
    rows = max((len(panels) + columns - 1) // columns, 1)
    legend_columns = max(min(len(models), 2 + 2 * columns), 1)
    legend_rows = (len(models) + legend_columns - 1) // legend_columns
    width, height = max(6.5 * columns, 9.0), 3.8 * rows + 0.3 * legend_rows + 0.6
    fig, axes = plt.subplots(rows, columns, figsize=(width, height), squeeze=False)
    for ax in axes.flat[len(panels) :]:
        ax.set_visible(False)
    for ax, ((setting, attribute), frame) in zip(axes.flat, panels):
        groups = list(dict.fromkeys(frame[GROUP]))
        shown = [m for m in models if m in set(frame[MODEL])]
        width = 0.8 / max(len(shown), 1)
        for i, model in enumerate(shown):
            shares = frame[frame[MODEL] == model].set_index(GROUP)[share.column].reindex(groups)
            offsets = np.arange(len(groups)) + (i - (len(shown) - 1) / 2) * width
            ax.bar(offsets, shares * 100, width, color=colours[model], label=model)
        sizes = frame.drop_duplicates(GROUP).set_index(GROUP).reindex(groups)
        for x, (corpus, relevant) in enumerate(zip(sizes[CORPUS_SHARE], sizes[RELEVANT_SHARE])):
            ax.hlines(corpus * 100, x - 0.45, x + 0.45, colors="black", linewidth=2)
            ax.hlines(relevant * 100, x - 0.45, x + 0.45, colors="grey", linestyles="dashed", linewidth=1.5)
        ax.set_xticks(range(len(groups)), groups, rotation=45 if len(groups) > 5 else 0)
        ax.set_ylabel(f"% of top-{share.cutoff} exposure")
        ax.set_title(f"{setting}: {attribute}")
    if panels:
        handles = [plt.Rectangle((0, 0), 1, 1, color=colours[m]) for m in models]
        fig.legend(handles, models, loc="lower center", ncol=legend_columns, fontsize=8, frameon=False)
        fig.suptitle(
            "Top-10 exposure per group (bars, one per model)\nblack line: share of the corpus; grey dashes: share of "
            "the relevant documents",
            fontsize=10,
        )
        fig.tight_layout(rect=(0, (0.3 * legend_rows + 0.2) / height, 1, 1 - 0.6 / height))
    else:
        axes.flat[0].text(0.5, 0.5, "no attribute has two groups in any corpus", ha="center", va="center")
    fig.savefig(path, dpi=120)
    plt.close(fig)


# --- analyses: saliency by relative token position (PosIR Figure 5), segment similarity (Zeng et al. A.4) ---


def saliency_curves(
    curves: Mapping[str, pd.DataFrame], title: str, path: Path, markers: Mapping[str, Mapping[str, float]] | None = None
) -> None:
    """Mean max-normalised saliency per relative token bin, one line and t-interval band per model.

    ``curves`` maps a model to :func:`posir.analyses.saliency.aggregate_curves`; ``markers`` to
    :func:`posir.analyses.saliency.evidence_summary`. The evidence's interquartile range of
    relative token positions is shaded grey (with its median dotted), and a model that truncates
    gets a vertical line where it stops reading (median seen fraction), since its curve is 0 after it.
    """
    fig, ax = plt.subplots(figsize=(7, 3.8))
    evidence_drawn = False
    for model, band in curves.items():
        n_pairs = int(band[N_PAIRS].iloc[0]) if len(band) else 0
        (line,) = ax.plot(band[BIN_CENTRE], band[MEAN], label=f"{model} (n={n_pairs})")
        ax.fill_between(band[BIN_CENTRE], band[CI_LOW], band[CI_HIGH], color=line.get_color(), alpha=0.2, linewidth=0)
        marker = (markers or {}).get(model, {})
        seen = marker.get("seen_fraction_median", math.nan)
        if math.isfinite(seen) and seen < 1.0:
            ax.axvline(seen, color=line.get_color(), linestyle=":", linewidth=1)
            ax.text(
                seen,
                0.98,
                " reads up to here",
                color=line.get_color(),
                fontsize="x-small",
                va="top",
                transform=ax.get_xaxis_transform(),
            )
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
        frame = summary[(summary[BUCKET] == bucket) & (summary[N_DOCUMENTS] > 0)].sort_values(SEGMENT)
        if frame.empty:
            continue
        k = int(summary[SEGMENT].max()) + 1
        centres = (frame[SEGMENT] + 0.5) / k
        style = {"color": "black", "linestyle": "--"} if bucket == ALL else {}
        n = int(frame[N_DOCUMENTS].iloc[0])
        errors = np.vstack([frame[MEAN_COSINE] - frame[CI_LOW], frame[CI_HIGH] - frame[MEAN_COSINE]])
        ax.errorbar(
            centres,
            frame[MEAN_COSINE],
            yerr=np.nan_to_num(errors),
            marker="o",
            markersize=3,
            capsize=2,
            label=f"{bucket} (n={n})",
            **style,
        )
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
    for ax in axes.flat[len(panels) :]:
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


def controlled_curves(positions: pd.DataFrame, title: str, path: Path) -> list[str]:
    """Within-query position curves of a controlled family: mean nDCG@10 at each target position, one line per
    model (and setting) with its paired bootstrap band, one panel per length (a natural bucket in move mode). Each
    panel says its number of queries; a line of fewer than MIN_INTERVAL_QUERIES queries is drawn without a band.
    Returns the panels' titles."""
    from posir.metrics.resampling import MIN_INTERVAL_QUERIES

    lengths = sorted(positions[LENGTH].astype(str).unique(), key=_length_order)
    fig, axes = plt.subplots(1, len(lengths), figsize=(4.2 * len(lengths), 3.6), sharey=True, squeeze=False)
    unbanded, titles = False, []
    for ax, length in zip(axes[0], lengths):
        frame = positions[positions[LENGTH].astype(str) == length]
        for (model, setting), lines in frame.groupby([MODEL, SETTING], sort=True):
            lines = lines.sort_values(TARGET_POSITION)
            label = model if frame[SETTING].nunique() == 1 else f"{model}, {setting}"
            line = ax.plot(lines[TARGET_POSITION], lines[MEAN], marker="o", label=label)[0]
            unbanded |= lines[N_QUERIES].min() < MIN_INTERVAL_QUERIES
            if lines[N_QUERIES].min() >= MIN_INTERVAL_QUERIES:
                ax.fill_between(
                    lines[TARGET_POSITION], lines[CI_LOW], lines[CI_HIGH], alpha=0.15, color=line.get_color()
                )
        name = f"length {length}" if length.isdigit() else f"bucket {length}"
        titles.append(f"{name}: {_queries_label(frame[N_QUERIES])}")
        ax.set_title(titles[-1])
        ax.set_xlabel("target relative position of the evidence")
        ax.set_xlim(0, 1)
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel(f"mean {POSITION_MEASURE.name} (same queries at every position)")
    axes[0][-1].legend(fontsize=7, loc="best")
    note = f" (a line without a band: fewer than {MIN_INTERVAL_QUERIES} queries)" if unbanded else ""
    fig.suptitle(title + note, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return titles


def _queries_label(counts: pd.Series) -> str:
    """``n = 12`` for a panel whose lines share their queries, ``n = 8-12`` where they differ (a sampled pipeline)."""
    low, high = int(counts.min()), int(counts.max())
    return f"n = {low}" if low == high else f"n = {low}-{high}"


def controlled_heatmap(positions: pd.DataFrame, title: str, path: Path) -> None:
    """Mean nDCG@10 by target position (columns) and length (rows), one panel per model: insert mode's
    position x length grid (in move mode the rows are the natural length buckets)."""
    panels = sorted(positions.groupby([MODEL, SETTING]).groups)
    fig, axes = plt.subplots(1, len(panels), figsize=(3.6 * len(panels), 3.2), squeeze=False)
    for ax, (model, setting) in zip(axes[0], panels):
        frame = positions[(positions[MODEL] == model) & (positions[SETTING] == setting)]
        grid = heatmap_grid(frame)
        image = ax.imshow(grid.to_numpy(dtype=float), vmin=0, vmax=1, cmap="viridis", aspect="auto")
        ax.set_xticks(range(grid.shape[1]), [f"{t:.2f}" for t in grid.columns], fontsize=7)
        ax.set_yticks(range(grid.shape[0]), list(grid.index), fontsize=7)
        ax.set_title(model if positions[SETTING].nunique() == 1 else f"{model}, {setting}", fontsize=9)
        ax.set_xlabel("target position")
    axes[0][0].set_ylabel("length")
    fig.colorbar(image, ax=axes[0].tolist(), shrink=0.8, label=f"mean {POSITION_MEASURE.name}")
    fig.suptitle(title, fontsize=10)
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)


def heatmap_grid(positions: pd.DataFrame) -> pd.DataFrame:
    """Mean nDCG@10 of one model's positions: lengths as rows (tokens by size, then bucket names), target
    positions as columns."""
    grid = positions.pivot_table(index=LENGTH, columns=TARGET_POSITION, values=MEAN)
    grid.index = grid.index.astype(str)  # insert mode's lengths are numbers, move mode's buckets names
    return grid.reindex(sorted(grid.index, key=_length_order))


def _length_order(value: str) -> tuple[int, float, str]:
    """Lengths in tokens by size, bucket names (Q1..) after them in name order."""
    try:
        return (0, float(value), "")
    except ValueError:
        return (1, 0.0, value)


def distance_figure(
    cells: pd.DataFrame, panels: Sequence[tuple[str, Sequence[int], str, str]], title: str, path: Path
) -> None:
    """A spread family's curves: mean nDCG@10 along each of its series (``panels``: the series, its cells in level
    order, the column on the x axis and its label): against the distance between the pieces (the pieces' centre,
    or the first piece, fixed) and against the block's absolute position; one line per model with its paired
    bootstrap band, the member questions asked alone dotted. A line of fewer than MIN_INTERVAL_QUERIES queries has
    no band."""
    from posir.evidence import SINGLE
    from posir.metrics.distance import CELL, FORM, SCORE
    from posir.metrics.resampling import MIN_INTERVAL_QUERIES

    fig, axes = plt.subplots(1, len(panels), figsize=(4.4 * len(panels), 3.8), sharey=True, squeeze=False)
    colors: dict[str, str] = {}
    several = sorted(f for f in cells[FORM].unique() if f != SINGLE)
    for ax, (name, members_of, axis, label) in zip(axes[0], panels):
        members = cells[cells[CELL].isin(list(members_of))]
        for (model, setting, form), lines in members.groupby([MODEL, SETTING, FORM], sort=True):
            lines = lines.sort_values(axis)
            key = model if cells[SETTING].nunique() == 1 else f"{model}, {setting}"
            name_of_line = key if not several or form == several[0] else f"{key} ({form})"
            line = ax.plot(
                lines[axis],
                lines[SCORE],
                marker="o" if form != SINGLE else None,
                linestyle=":" if form == SINGLE else "-" if form == several[0] else "--",
                color=colors.get(key),
                label=None if form == SINGLE else name_of_line,
            )[0]
            colors.setdefault(key, line.get_color())
            if form != SINGLE and lines[N_QUERIES].min() >= MIN_INTERVAL_QUERIES:
                low, high = lines[suffixed(SCORE, CI_LOW)], lines[suffixed(SCORE, CI_HIGH)]
                ax.fill_between(lines[axis], low, high, alpha=0.12, color=line.get_color())
        ax.set_xlabel(label)
        ax.set_xlim(-0.02, 1.02)
        ax.grid(alpha=0.3)
        counted = members[members[FORM] != SINGLE] if several else members
        ax.set_title(f"{name}: {_queries_label(counted[N_QUERIES])}", fontsize=9)
    axes[0][0].set_ylabel(f"mean {POSITION_MEASURE.name} (same queries in every cell)")
    axes[0][-1].legend(fontsize=7, loc="best")
    fig.suptitle(f"{title}\n(dotted: the questions asked alone, their evidence where their piece is)", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def score_origin_curves(bins: pd.DataFrame, min_bin_queries: int, title: str, path: Path) -> None:
    """The share of the positive's score that the evidence span carries (posir.analyses.score_origin), in percent,
    against the evidence's relative position: one line per multi-vector or sparse run (all queries), its bootstrap
    band where a bin holds at least :data:`posir.metrics.resampling.MIN_INTERVAL_QUERIES` queries."""
    from posir.metrics.measures.evidence_share import EvidenceShare
    from posir.metrics.resampling import MIN_INTERVAL_QUERIES
    from posir.results.schemas import EVIDENCE_SHARE

    scale = EvidenceShare.display.scale
    fig, ax = plt.subplots(figsize=(6.5, 4))
    every = bins[bins[BUCKET] == ALL]
    for (model, setting), frame in every.groupby([MODEL, SETTING], sort=False):
        frame = frame[frame[N_QUERIES] >= max(min_bin_queries, 1)]
        if frame.empty:
            continue
        centers = (frame[BIN_START] + frame[BIN_END]) / 2
        label = model if every[SETTING].nunique() == 1 else f"{model} ({setting})"
        (line,) = ax.plot(centers, frame[EVIDENCE_SHARE] * scale, marker="o", markersize=3, label=label)
        banded = frame[frame[N_QUERIES] >= MIN_INTERVAL_QUERIES]
        ax.fill_between(
            ((banded[BIN_START] + banded[BIN_END]) / 2).to_numpy(),
            banded[suffixed(EVIDENCE_SHARE, CI_LOW)].to_numpy() * scale,
            banded[suffixed(EVIDENCE_SHARE, CI_HIGH)].to_numpy() * scale,
            color=line.get_color(),
            alpha=0.15,
            linewidth=0,
        )
    ax.set_xlim(0, 1)
    ax.set_ylim(bottom=0)
    ax.set_xlabel("relative position of the evidence")
    ax.set_ylabel("share of the score from the evidence (%)")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def position_groups_figure(table: pd.DataFrame, names: Sequence[str], title: str, path: Path) -> None:
    """nDCG@10 per position group (Zeng et al.'s Table 1 as curves): our runs with their bootstrap bands on the left,
    the published rows of the same groups on the right, on one scale."""
    published = table[table[SOURCE] != OWN_RUNS]
    panels = [("this workflow", table[table[SOURCE] == OWN_RUNS])]
    panels += [
        (f"published: {source}", published[published[SOURCE] == source]) for source in published[SOURCE].unique()
    ]
    fig, axes = plt.subplots(1, len(panels), figsize=(5.2 * len(panels), 4), sharey=True, squeeze=False)
    x = np.arange(len(names))
    for ax, (label, frame) in zip(axes.flat, panels):
        for (model, setting), run in frame.groupby([MODEL, SETTING], sort=False, dropna=False):
            run = run.set_index(GROUP).reindex(names)
            name = model if pd.isna(setting) else f"{model}, {setting}"
            (line,) = ax.plot(x, run[NDCG] * 100, marker="o", markersize=3, label=name)
            if run[suffixed(NDCG, CI_LOW)].notna().any():
                low, high = run[suffixed(NDCG, CI_LOW)] * 100, run[suffixed(NDCG, CI_HIGH)] * 100
                ax.fill_between(x, low.to_numpy(float), high.to_numpy(float), color=line.get_color(), alpha=0.2, lw=0)
        ax.set_xticks(x, names, rotation=30 if max(len(n) for n in names) > 6 else 0)
        ax.set_xlabel("position group of the evidence")
        ax.set_title(label, fontsize="medium")
        ax.grid(alpha=0.3)
        ax.legend(fontsize="x-small", ncols=2 if frame[MODEL].nunique() > 8 else 1)
    axes.flat[0].set_ylabel(SCORE_AXIS)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
