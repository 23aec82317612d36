"""What the docs quote of the default run's pooling comparison (docs/findings.md, "Pooling or encoder"): per dense
entry and its own token vectors scored by MaxSim on the controlled family squad-long-moved, each reading's PSI over
the family's positions and its mean nDCG@10, and the paired differences (pooled minus unpooled) with their intervals.
Read by ``posir doc-numbers`` beside :mod:`posir.tools.doc_quotes`.

The file is named by the results contract (``PATHS.table``), its columns by posir.metrics.pooling.
"""

from __future__ import annotations

from collections.abc import Sequence

from posir.metrics.columns import ALL, MEAN, MODEL_A, MODEL_B, N_QUERIES, SETTING
from posir.metrics.controlled import LENGTH
from posir.metrics.measures import POSITION_MEASURE
from posir.metrics.significance import paired_columns
from posir.results.schemas import PSI
from posir.tools.quoting import PATHS, Cell, Number, Quote, Results, Table, fixed, run_file

#: The family, its setting and the pairs the findings quote: (label, pooled entry, unpooled entry).
POOLING_FAMILY, POOLING_SETTING = "squad-long-moved", "eng-eng"
POOLING_PAIRS: tuple[tuple[str, str, str], ...] = (
    ("MiniLM (256 tokens)", "minilm-l6", "minilm-l6-tokens"),
    ("me5-small (512 tokens)", "me5-small", "me5-small-tokens"),
)
TWO, ONE = fixed(2), fixed(1)
SIGNED_TWO, SIGNED_ONE = fixed(2, sign=True), fixed(1, sign=True)


def pooling_file(family: str) -> str:
    return run_file(PATHS.table(family, "pooling.csv"))


def pair_row(setting: str, pooled: str, unpooled: str) -> dict[str, str]:
    """The pooling table's row of a pair, the family's lengths pooled."""
    return {SETTING: setting, LENGTH: ALL, MODEL_A: pooled, MODEL_B: unpooled}


def pooling_rows(
    results: Results,
    family: str = POOLING_FAMILY,
    setting: str = POOLING_SETTING,
    pairs: Sequence[tuple[str, str, str]] = POOLING_PAIRS,
) -> list[list[str]]:
    """Per pair, the family's lengths pooled: queries, PSI pooled and unpooled and their difference [interval], mean
    nDCG@10 x 100 likewise."""
    path = pooling_file(family)
    rows = []
    for label, pooled, unpooled in pairs:
        where = pair_row(setting, pooled, unpooled)
        psi_a, psi_b, psi_d, psi_low, psi_high = (Cell(path, c, where).value(results) for c in paired_columns(PSI)[:5])
        mean_a, mean_b, mean_d, mean_low, mean_high = (
            Cell(path, c, where, 100.0).value(results) for c in paired_columns(MEAN)[:5]
        )
        queries = Cell(path, N_QUERIES, where).text(results)
        rows.append(
            [
                label,
                queries,
                TWO(psi_a),
                TWO(psi_b),
                f"{SIGNED_TWO(psi_d)} [{SIGNED_TWO(psi_low)}, {SIGNED_TWO(psi_high)}]",
                ONE(mean_a),
                ONE(mean_b),
                f"{SIGNED_ONE(mean_d)} [{SIGNED_ONE(mean_low)}, {SIGNED_ONE(mean_high)}]",
            ]
        )
    return rows


def _numbers() -> list[Number]:
    """Per pair, the README's PSI difference with its interval and nDCG@10 difference (x 100), pooled - MaxSim."""
    numbers = []
    path = pooling_file(POOLING_FAMILY)
    for _, pooled, unpooled in POOLING_PAIRS:
        where = pair_row(POOLING_SETTING, pooled, unpooled)
        psi_d, psi_low, psi_high = paired_columns(PSI)[2:5]
        key = f"{POOLING_FAMILY}.pooling.{pooled}"
        numbers += [
            Number(f"{key}.psi", Cell(path, psi_d, where), SIGNED_TWO),
            Number(f"{key}.psi.low", Cell(path, psi_low, where), SIGNED_TWO),
            Number(f"{key}.psi.high", Cell(path, psi_high, where), SIGNED_TWO),
            Number(f"{key}.ndcg", Cell(path, paired_columns(MEAN)[2], where, 100.0), SIGNED_ONE),
        ]
    return numbers


POOLING_NUMBERS = _numbers()
_MINILM, _ME5 = (f"{POOLING_FAMILY}.pooling.{pooled}" for _, pooled, _ in POOLING_PAIRS)
POOLING_QUOTES = [
    Quote(
        "README.md",
        f"pooled minus MaxSim, PSI {{{_MINILM}.psi}} [{{{_MINILM}.psi.low}}, {{{_MINILM}.psi.high}}] for MiniLM and "
        f"{{{_ME5}.psi}} [{{{_ME5}.psi.low}}, {{{_ME5}.psi.high}}] for me5-small, nDCG@10 {{{_MINILM}.ndcg}} and "
        f"{{{_ME5}.ndcg}} points",
    )
]

NDCG_LABEL = POSITION_MEASURE.name
POOLING_TABLES = [
    Table(
        "findings-pooling",
        "docs/findings.md",
        (
            "model",
            "queries",
            "PSI pooled",
            "PSI MaxSim",
            "pooled - MaxSim [95% CI]",
            f"{NDCG_LABEL} pooled",
            f"{NDCG_LABEL} MaxSim",
            "pooled - MaxSim [95% CI]",
        ),
        pooling_rows,
        f"`{pooling_file(POOLING_FAMILY)}`, {SETTING} `{POOLING_SETTING}`, {LENGTH} `{ALL}` ({NDCG_LABEL} x 100)",
        ("---", *["---:"] * 7),
    )
]
