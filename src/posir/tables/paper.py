"""PosIR's paper tables laid out for Markdown and LaTeX (Tables 2-3) and the per-setting rows behind them."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from posir.metrics.columns import (
    MODEL,
    N_QUERIES,
    P_VALUE,
    SETTING,
    bucket_columns,
    suffixed,
)
from posir.metrics.correlation import N_MODELS, RHO, SCORE_COLUMN
from posir.results.schemas import (
    CROSS_LINGUAL,
    KIND,
    MODEL_ROW,
    MONOLINGUAL,
    NDCG,
    PCT,
    PSI,
    PSI_LOW_BINS,
    REFERENCE,
    ROW,
    SOURCE,
    psi_flag_columns,
)
from posir.tables.layout import (
    LOW_BINS_MARK,
    SCORE_LABEL,
    Block,
    Cell,
    PaperLayout,
    Rendering,
    count_cell,
    marker_notes,
    number_cell,
    row_marks,
)

#: Block titles of PosIR Table 3, by setting kind.
KIND_TITLES = {MONOLINGUAL: "Multilingual Retrieval", CROSS_LINGUAL: "Cross-lingual Retrieval"}


# --- paper tables (PosIR Tables 2-3) and the per-setting rows behind them ------------------------------


def _source_cells(frame: pd.DataFrame) -> bool:
    return frame[SOURCE].nunique() > 1


def _low_bins_note(frame: pd.DataFrame, flag_columns: Sequence[str], min_bin_queries: int) -> list[str]:
    """The ``†`` note, where any PSI of the table left out bins."""
    if frame[list(flag_columns)].fillna(False).to_numpy(dtype=bool).any():
        return [f"{LOW_BINS_MARK} PSI left out position bins holding fewer than {min_bin_queries} queries."]
    return []


def ranking_rendering(
    table: pd.DataFrame, correlation: pd.DataFrame, reference_label: str, layout: PaperLayout, caption="", label=""
) -> Rendering:
    """Table 2 layout: Model, reference, nDCG@10 overall and per bucket; Spearman rho and (p-value) last."""
    with_source = _source_cells(table)
    headers = (["Source"] if with_source else []) + [
        "Model",
        reference_label,
        SCORE_LABEL,
        *map(layout.bucket_header, layout.buckets),
    ]
    value_columns = [PCT, *bucket_columns(PCT, layout.buckets)]
    rows = []
    for record in table.to_dict("records"):
        language, incomplete = row_marks(record)
        lead = ([Cell(str(record[SOURCE]))] if with_source else []) + [
            Cell(layout.model_label(str(record[MODEL])), language)
        ]
        rows.append(
            lead + [number_cell(record[REFERENCE])] + [number_cell(record[c], marks=incomplete) for c in value_columns]
        )
    by_column = correlation.set_index(SCORE_COLUMN)
    pad = [Cell("")] if with_source else []
    rho = pad + [Cell("Spearman ρ"), Cell(None)] + [number_cell(by_column.loc[c, RHO]) for c in value_columns]
    p = (
        pad
        + [Cell("(p-value)"), Cell(None)]
        + [number_cell(by_column.loc[c, P_VALUE], wrap="({})") for c in value_columns]
    )
    n_models = int(correlation[N_MODELS].max()) if len(correlation) else 0
    notes = [
        (
            f"{SCORE_LABEL} in percent: per model, the mean over its monolingual settings (PosIR Table 2). "
            f"Spearman's rho with {reference_label} over the {n_models} models that have a reference score; "
            f"two-sided p-value (scipy)."
        )
    ] + marker_notes(table)
    return Rendering(
        headers,
        "l" * (len(headers) - len(value_columns) - 1) + "r" * (len(value_columns) + 1),
        [Block(rows), Block([rho, p])],
        notes,
        caption,
        label,
    )


def position_bias_rendering(
    table: pd.DataFrame, layout: PaperLayout, caption: str = "", label: str = "", average_of: str = "displayed"
) -> Rendering:
    """Table 3 layout: per setting kind, Model, nDCG@10, PSI per bucket; Average rows; dagger on low-count PSI."""
    buckets = layout.buckets
    with_source = _source_cells(table)
    headers = (["Source"] if with_source else []) + [
        "Model",
        SCORE_LABEL,
        *[f"PSI {layout.bucket_header(b)}" for b in buckets],
    ]
    blocks: list[Block] = []
    for kind, part in table.groupby(KIND, sort=False):
        title: str | None = KIND_TITLES.get(str(kind), str(kind))
        for _, chunk in part.groupby((part[ROW] != part[ROW].shift()).cumsum(), sort=False):
            rows = []
            for record in chunk.to_dict("records"):
                lead = [Cell(str(record[SOURCE]) if record[ROW] == MODEL_ROW else "")] if with_source else []
                name = layout.model_label(str(record[MODEL]))
                language, incomplete = row_marks(record)
                rows.append(
                    lead
                    + [Cell(name, language), number_cell(record[PCT], marks=incomplete)]
                    + [
                        number_cell(
                            record[suffixed(PSI, b)], flagged=record.get(suffixed(PSI_LOW_BINS, b)), marks=incomplete
                        )
                        for b in buckets
                    ]
                )
            blocks.append(Block(rows, title))
            title = None
    mean_rule = "of the values as printed" if average_of == "displayed" else "of the unrounded values"
    notes = [
        (
            f"{SCORE_LABEL} in percent. Per model, means over its monolingual (Multilingual Retrieval) or "
            f"cross-lingual settings (PosIR Table 3); PSI = 1 − min/max of the position-bin mean {SCORE_LABEL} "
            f"within a length bucket. Average: mean {mean_rule}."
        )
    ]
    notes += _low_bins_note(table, bucket_columns(PSI_LOW_BINS, buckets), layout.min_bin_queries)
    notes += marker_notes(table)
    n_values = 1 + len(buckets)
    return Rendering(headers, "l" * (len(headers) - n_values) + "r" * n_values, blocks, notes, caption, label)


def settings_rendering(settings: pd.DataFrame, layout: PaperLayout, caption: str = "", label: str = "") -> Rendering:
    """Per-setting rows of every source: n, nDCG@10 overall and per bucket (percent), PSI overall and per bucket."""
    buckets = layout.buckets
    headers = [
        "Source",
        "Model",
        "Setting",
        "Queries",
        SCORE_LABEL,
        *[layout.bucket_header(b) for b in buckets],
        "PSI",
        *[f"PSI {b}" for b in buckets],
    ]
    rows = []
    for record in settings.to_dict("records"):
        language, _ = row_marks(record)
        cells = [
            Cell(str(record[SOURCE])),
            Cell(layout.model_label(str(record[MODEL]))),
            Cell(str(record[SETTING]), language),
            count_cell(record[N_QUERIES]),
            number_cell(record[NDCG] * 100),
        ]
        cells += [number_cell(record[column] * 100) for column in bucket_columns(NDCG, buckets)]
        cells.append(number_cell(record[PSI], flagged=record.get(PSI_LOW_BINS)))
        cells += [number_cell(record[suffixed(PSI, b)], flagged=record.get(suffixed(PSI_LOW_BINS, b))) for b in buckets]
        rows.append(cells)
    notes = [
        (
            f"{SCORE_LABEL} in percent: over all queries, and per length bucket as the mean of its non-empty "
            "position-bin means (PosIR section 5.2). Published rows carry no query counts."
        )
    ]
    notes += _low_bins_note(settings, psi_flag_columns(buckets), layout.min_bin_queries)
    notes += marker_notes(settings)
    return Rendering(headers, "lll" + "r" * (len(headers) - 3), [Block(rows)], notes, caption, label)
