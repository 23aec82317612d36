"""LLM judge of translation quality (PosIR Appendix C.1): sampling and the summary table.

PosIR rates 12 documents per domain, stratified by token length into the four
buckets, on fluency, accuracy, completeness and style consistency (1-5), the
overall score being the mean of the four. :func:`stratified_sample` draws the
sample the same way (seeded, round-robin over buckets), :func:`summarize`
makes one row per (benchmark, language) of the summary table.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

DIMENSIONS = ("fluency", "accuracy", "completeness", "style")


def stratified_sample(buckets: Mapping[str, str], n: int, seed: int) -> list[str]:
    """``n`` ids spread evenly over buckets (round-robin, buckets in name order), seeded by id hash."""
    by_bucket: dict[str, list[str]] = {}
    for doc_id, bucket in buckets.items():
        by_bucket.setdefault(bucket, []).append(doc_id)
    queues = {
        b: sorted(ids, key=lambda i: hashlib.sha256(f"{seed}:{i}".encode()).hexdigest())
        for b, ids in sorted(by_bucket.items())
    }
    chosen: list[str] = []
    while len(chosen) < n and any(queues.values()):
        for bucket in list(queues):
            if queues[bucket] and len(chosen) < n:
                chosen.append(queues[bucket].pop(0))
    return chosen


def truncate(text: str, max_chars: int) -> str:
    """The first ``max_chars`` characters, cut at the last paragraph or sentence end when there is one."""
    if len(text) <= max_chars:
        return text
    head = text[:max_chars]
    for mark in ("\n\n", ". ", "\n"):
        cut = head.rfind(mark)
        if cut > max_chars // 2:
            return head[: cut + len(mark)].rstrip()
    return head


def summarize(rows: Sequence[Mapping[str, Any]], keys: Mapping[str, Any]) -> dict[str, Any]:
    """One summary row: sample size, judged count, failures, mean per dimension and overall."""
    frame = pd.DataFrame(list(rows))
    judged = frame[frame["ok"]] if len(frame) else frame
    summary: dict[str, Any] = {**keys, "sampled": len(frame), "judged": len(judged), "failed": len(frame) - len(judged)}
    for dimension in DIMENSIONS:
        summary[dimension] = float(judged[dimension].mean()) if len(judged) else float("nan")
    summary["overall"] = float(judged["overall"].mean()) if len(judged) else float("nan")
    return summary


def judge_markdown(table: pd.DataFrame) -> str:
    shown = table.copy()
    for column in (*DIMENSIONS, "overall"):
        shown[column] = shown[column].map(lambda v: f"{v:.2f}" if pd.notna(v) else "–")
    return shown.to_markdown(index=False) + "\n"
