"""The one reader and writer of result files: tab-separated run files, comma-separated tables, Markdown and LaTeX.

Our TSVs (per-query scores, aggregates) and CSVs (tables) are written by pandas as they are
(``to_csv(index=False)``: nothing to lay out, every number in full) and read back with their ids and labels kept as
text: ``"007"`` stays ``"007"``, an empty cell of a label stays ``""``, an empty cell of a number is missing.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from posir.metrics.columns import BUCKET, DOC_ID, LENGTH_BUCKET, MODEL, POSITION_LABEL, QID, SETTING
from posir.metrics.trend import PSI_TREND_DIRECTION
from posir.results.schemas import LANGUAGES_OUTSIDE_MODEL, PSI_BINS_SKIPPED

if TYPE_CHECKING:
    import pandas as pd

#: Columns of our TSVs that hold ids and labels, never numbers: "007" stays "007", "" stays "".
TEXT_COLUMNS = {
    QID: str,
    DOC_ID: str,
    LENGTH_BUCKET: str,
    BUCKET: str,
    PSI_BINS_SKIPPED: str,
    MODEL: str,
    SETTING: str,
    LANGUAGES_OUTSIDE_MODEL: str,
    PSI_TREND_DIRECTION: str,
    POSITION_LABEL: str,
}


def read_result_tsv(path: Path | str) -> pd.DataFrame:
    """Our result TSVs (per-query scores, aggregates): empty cells are missing numbers, ids and labels stay text."""
    import pandas as pd

    frame = pd.read_csv(path, sep="\t", keep_default_na=False, na_values=[""], dtype=TEXT_COLUMNS)
    return frame.fillna({c: "" for c in TEXT_COLUMNS if c in frame.columns})


def read_tsv(path: Path | str) -> pd.DataFrame:
    """A tab-separated file read as pandas reads it (numbers where the cells hold numbers; empty cells missing): the
    judged samples of a translation."""
    import pandas as pd

    return pd.read_csv(path, sep="\t")


def read_table(path: Path | str, text_columns: Sequence[str] = ()) -> pd.DataFrame:
    """A comma-separated table the workflow wrote (``results/tables/``), ``text_columns`` kept as text."""
    import pandas as pd

    return pd.read_csv(path, dtype={column: str for column in text_columns} or None)


def read_text_table(path: Path | str) -> pd.DataFrame:
    """A tab-separated file of labels (a benchmark's ``documents.tsv``): every cell text, none missing."""
    import pandas as pd

    return pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False)


def read_cells(path: Path | str) -> list[dict[str, str]]:
    """A result file (a ``.tsv`` run file, a comma-separated table) as its rows of cells exactly as written: every cell
    text, an empty one ``""``; what a document quotes from it (posir doc-numbers)."""
    import pandas as pd

    frame = pd.read_csv(path, sep="\t" if str(path).endswith(".tsv") else ",", dtype=str, keep_default_na=False)
    return [{str(column): value for column, value in row.items()} for row in frame.to_dict("records")]


def read_json(path: Path | str) -> Any:
    """A JSON file of a run (a benchmark's or a collection's card.json, a source's file) as parsed."""
    return json.loads(Path(path).read_text(encoding="utf-8"))


def write_tsv(frame: pd.DataFrame, path: Path | str) -> None:
    """A run's file (per-query scores, aggregates): tab-separated, no index."""
    frame.to_csv(path, sep="\t", index=False)


def write_table(frame: pd.DataFrame, path: Path | str) -> None:
    """A table (``results/tables/``): comma-separated, no index."""
    frame.to_csv(path, index=False)


def write_text(text: str, path: Path | str) -> None:
    """A rendered table (Markdown, LaTeX) or a note."""
    Path(path).write_text(text, encoding="utf-8")


def flag_set(value: Any) -> bool:
    """Whether a flag cell (PSI_TREND_SIGNIFICANT, PSI_LOW_BINS) is set; a missing value (NA) is not."""
    import pandas as pd

    return value is not None and not pd.isna(value) and bool(value)
