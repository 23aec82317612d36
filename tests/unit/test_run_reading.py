"""Reading a run's rankings in columns gives what reading it line by line gives (posir.results.runs.iter_rankings).

The line reader is the reference: it is trec_eval's order written out (score descending, then document id
descending) over each query's documents as a dict reads them. Every file here is read both ways; the plain ones must
take the column path (else the comparison proves nothing), the others must fall back to the line reader, errors
included.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from posir.results.runs import (
    _OTHER_WHITESPACE,
    _plain_rankings,
    _rankings_line_by_line,
    iter_rankings,
    write_trec_run,
)


def both_ways(path):
    return list(iter_rankings(path)), list(_rankings_line_by_line(path))


def test_a_run_the_workflow_writes_reads_the_same_in_columns(tmp_path) -> None:
    rng = np.random.default_rng(7)
    # ids of several bytes too (translated titles): Python's order is by code point
    doc_ids = [f"doc{i}" for i in rng.permutation(300)] + ["Z", "a", "10", "9", "doc1_", "é", "e", "Ω_(ω)", "z"]
    qids = [f"q{i}" for i in range(200)]
    # scores on a coarse grid: written at six decimals, many tie, and ties come in the search's order, not by id
    scores = np.round(rng.random((len(qids), len(doc_ids))) * 50) / 50
    indices = np.argsort(-scores, axis=1, kind="stable")
    indices[::7, -5:] = -1  # empty slots: queries of fewer documents
    path = tmp_path / "run.trec"
    write_trec_run(path, qids, doc_ids, np.take_along_axis(scores, np.maximum(indices, 0), 1), indices, "t")
    assert _plain_rankings(path) is not None
    columns, lines = both_ways(path)
    assert columns == lines and [q for q, _ in columns] == qids
    assert any(
        a != b
        for (_, a), (_, b) in zip(
            columns, [(q, [doc_ids[i] for i in row if i >= 0]) for q, row in zip(qids, indices.tolist())]
        )
    )  # ties were reordered


def test_scores_in_any_order_and_signed_zeros_read_the_same(tmp_path) -> None:
    rows = []
    generator = random.Random(3)
    for q in range(50):
        docs = generator.sample(range(40), 25)
        for rank, d in enumerate(docs, start=1):
            score = generator.choice(["0.0", "-0.0", "1.5", "-2", "1e-3", "0.001", repr(generator.random())])
            rows.append(f"q{q:03d} Q0 d{d} {rank} {score} tag\n")
    path = tmp_path / "run.trec"
    path.write_text("".join(rows))
    assert _plain_rankings(path) is not None
    columns, lines = both_ways(path)
    assert columns == lines


@pytest.mark.parametrize(
    "text",
    [
        "q1 Q0 a 1 2.0 t\nq1 Q0 b 2 3.0 t\nq1 Q0 a 3 1.0 t\n",  # a document twice: the last score counts
        "q1\tQ0\ta\t1\t2.0\tt\nq1  Q0 b 2 1.0 t\n",  # other whitespace
        "q1 Q0 a 1 2.0 t \n\nq2 Q0 b 1 nan t\n",  # a trailing space, a blank line, NaN
        "q1 Q0 a 1 2.0 t\nq1 Q0 b 2 inf t\n",
        "\ufeffq1 Q0 a 1 2.0 t\n",  # a byte order mark: the line reader keeps it in the id
        "007 Q0 10 1 2.0 t\n007 Q0 9 2 2.0 t\n7 Q0 09 1 1.0 t\n",  # ids that all read as numbers stay text
    ],
)
def test_files_not_plain_are_read_line_by_line(tmp_path, text) -> None:
    path = tmp_path / "run.trec"
    path.write_text(text)
    columns, lines = both_ways(path)
    assert columns == lines


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("q1 Q0 a 1 2.0 t\nq2 Q0 a 1 2.0 t\nq1 Q0 b 2 1.0 t\n", "line 3: query 'q1' continues after"),
        ("q1 Q0 a 1 2.0 t\nq1 Q0 b 2 1.0\n", "line 2: a TREC run line has 6 fields"),
        ("q1 Q0 a 1 2.0 t\nq1 Q0 b 2 1.0 t x\n", "line 2: a TREC run line has 6 fields"),
        ("q1 Q0 a 1 high t\n", "could not convert"),
        ("q1 Q0 a\xa0b 1 2.0 t\n", "line 1: a TREC run line has 6 fields"),  # str.split splits at a no-break space
        ("q1 Q0 é 1 2.0 t\nq1 Q0 e\u2003f 2 1.0 t\n", "line 2: a TREC run line has 6 fields"),  # and an em space
    ],
)
def test_a_broken_file_is_refused_as_the_line_reader_refuses_it(tmp_path, text, message) -> None:
    path = tmp_path / "run.trec"
    path.write_text(text)
    assert _plain_rankings(path) is None
    with pytest.raises(ValueError, match=message):
        list(iter_rankings(path))


def test_an_empty_run_has_no_rankings(tmp_path) -> None:
    path = tmp_path / "run.trec"
    path.write_text("")
    assert list(iter_rankings(path)) == []


def test_every_character_str_split_splits_at_sends_a_file_to_the_line_reader() -> None:
    splitting = {chr(c).encode() for c in range(0x110000) if chr(c).isspace()} - {b" ", b"\n"}
    assert set(_OTHER_WHITESPACE) == splitting


def test_a_character_of_several_bytes_across_the_blocks_a_file_is_searched_in(tmp_path) -> None:
    from posir.results.runs import _lines_and_spaces

    path = tmp_path / "run.trec"
    path.write_bytes("q1 Q0 ab\u3000c 1 2.0 t\n".encode())  # the ideographic space: 3 bytes
    for block in range(1, 30):
        assert _lines_and_spaces(path, block) is None
    path.write_text("q1 Q0 abc 1 2.0 t\nq1 Q0 é 2 1.0 t")
    assert all(_lines_and_spaces(path, block) == (2, 10) for block in range(1, 40))
