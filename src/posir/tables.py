"""Result tables: one row per (model, setting), as PosIR Tables 2-3."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from posir.metrics.aggregate import ALL

ID_COLUMNS = ("model", "setting")


def main_table(summaries: Mapping[tuple[str, str], pd.DataFrame], buckets: Sequence[str]) -> pd.DataFrame:
    """Wide table: n_queries, nDCG@10 overall and per bucket, PSI overall and per bucket.

    Overall nDCG@10 is the mean over all queries; per bucket it is the mean of
    the bucket's non-empty bin means (PosIR), with the query mean beside it.
    """
    rows = []
    for (model, setting), summary in summaries.items():
        by_bucket = summary.set_index("bucket")
        overall = by_bucket.loc[ALL]
        row: dict[str, object] = {"model": model, "setting": setting, "n_queries": int(overall["n_queries"]),
                                  "ndcg@10": overall["ndcg@10_query_mean"]}
        for b in buckets:
            row[f"ndcg@10_{b}"] = by_bucket["ndcg@10_bin_mean"].get(b, float("nan"))
        row["psi"] = overall["psi"]
        for b in buckets:
            row[f"psi_{b}"] = by_bucket["psi"].get(b, float("nan"))
        for b in buckets:
            row[f"ndcg@10_query_mean_{b}"] = by_bucket["ndcg@10_query_mean"].get(b, float("nan"))
        for b in buckets:
            row[f"n_queries_{b}"] = int(by_bucket["n_queries"].get(b, 0))
        rows.append(row)
    return pd.DataFrame(rows).sort_values(list(ID_COLUMNS), kind="stable").reset_index(drop=True)


def long_table(summaries: Mapping[tuple[str, str], pd.DataFrame]) -> pd.DataFrame:
    frames = [summary.assign(model=model, setting=setting) for (model, setting), summary in summaries.items()]
    frame = pd.concat(frames, ignore_index=True)
    return frame[[*ID_COLUMNS, *[c for c in frame.columns if c not in ID_COLUMNS]]]


def to_markdown(table: pd.DataFrame, nDCG_as_percent: bool = True) -> str:
    """Markdown rendering: nDCG in percent with two decimals (as the paper), PSI with two."""
    shown = table.copy()
    for column in shown.columns:
        if column.startswith("ndcg") and nDCG_as_percent:
            shown[column] = (shown[column] * 100).map(lambda v: f"{v:.2f}" if pd.notna(v) else "–")
        elif column.startswith("psi"):
            shown[column] = shown[column].map(lambda v: f"{v:.2f}" if pd.notna(v) else "–")
    return shown.to_markdown(index=False) + "\n"


def setting_type(setting: str) -> str:
    query, corpus = setting.split("-")
    if corpus == "mul":
        return "one-vs-many"
    return "monolingual" if query == corpus else "cross-lingual"


def languages_table(summaries: Mapping[tuple[str, str], pd.DataFrame], buckets: Sequence[str]) -> pd.DataFrame:
    """Long table: one row per (model, setting) with its languages and setting type."""
    table = main_table(summaries, buckets)
    table.insert(2, "query_language", table["setting"].str.split("-").str[0])
    table.insert(3, "corpus_language", table["setting"].str.split("-").str[1])
    table.insert(4, "setting_type", table["setting"].map(setting_type))
    return table


def languages_markdown(table: pd.DataFrame, buckets: Sequence[str]) -> str:
    """PosIR Tables 10-11: per setting type and metric, models by query language."""
    parts = []
    metrics = ["ndcg@10", *[f"ndcg@10_{b}" for b in buckets], "psi", *[f"psi_{b}" for b in buckets]]
    for kind in ("monolingual", "cross-lingual", "one-vs-many"):
        block = table[table["setting_type"] == kind]
        if block.empty:
            continue
        parts.append(f"## {kind}\n")
        for metric in metrics:
            wide = block.pivot_table(index="model", columns="query_language", values=metric)
            if wide.empty:  # e.g. parallel documents never reach Q4
                continue
            wide["avg"] = wide.mean(axis=1)
            scale = 100 if metric.startswith("ndcg") else 1
            shown = (wide * scale).map(lambda v: f"{v:.2f}" if pd.notna(v) else "–")
            parts.append(f"### {metric}\n\n{shown.to_markdown()}\n")
    return "\n".join(parts)
