"""Bad input to Zeng et al.'s benchmarks and their position groups: each stops with a sentence naming the file and the
record, or the config key, and the fix; nothing is dropped unsaid. A SQuAD answer whose offset does not hold its
text, a FineWeb-PosQ row without ``content`` or whose ``span_class`` names no group, edges that do not increase, a
grouping the data cannot give, published rows of other groups, and analyses that need spans pointed at labels."""

from __future__ import annotations

import copy
import json
from collections import Counter

import pytest
import yaml

from posir.builders.paragraphs import ParagraphParams, build_paragraphs
from posir.builders.posq_import import PosqFormatError, import_rows
from posir.builders.squad_format import SquadFormatError
from posir.config import ConfigError, load_config
from posir.metrics.groupings import Labels
from posir.metrics.params import PositionParams
from tests.conftest import REPO

METRICS = PositionParams()
DEFAULTS = ParagraphParams()


def build(data, path, params: ParagraphParams = DEFAULTS):
    return build_paragraphs([(path, data)], params, len, METRICS.buckets, METRICS.n_bins)


def test_an_answer_offset_that_does_not_hold_the_answer_names_the_record_and_the_fix(squad_dev, tmp_path):
    data = {"data": [copy.deepcopy(squad_dev["data"][0])]}
    qa = data["data"][0]["paragraphs"][1]["qas"][2]
    qa["answers"][0]["answer_start"] += 3
    path = tmp_path / "broken-v2.0.json"
    message = (
        rf"{path}: article 'Super_Bowl_50', paragraph 1, question {qa['id']}: answer 0's answer_start \d+ holds "
        r".*not the answer text .*Fix the offset in the file, or set the benchmark's params.offset_mismatch: drop"
    )
    with pytest.raises(SquadFormatError, match=message):
        build(data, path)
    dropped = build(data, path, ParagraphParams(offset_mismatch="drop"))
    assert [(d.record, d.reason) for d in dropped.drops] == [(qa["id"], "answer_offset_mismatch")]
    assert qa["id"] not in {q.qid for q in dropped.queries}


def rows_file(tmp_path, rows):
    path = tmp_path / "posq.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


GOOD = {"content": "A passage about something.", "question": "What is it about?", "span_class": ["beginning"]}


def test_a_row_without_content_names_the_file_and_the_row(tmp_path):
    path = rows_file(tmp_path, [GOOD, {"question": "Where?", "span_class": ["end"]}])
    with pytest.raises(PosqFormatError, match=rf"{path}, row 2: no 'content' \(got None\); every row needs"):
        import_rows(path, Labels().groups, len, METRICS.buckets)


def test_a_span_class_that_names_no_group_names_the_row_the_label_and_the_fix(tmp_path):
    path = rows_file(tmp_path, [GOOD, {**GOOD, "question": "Why?", "span_class": ["beginning", "ending"]}])
    message = rf"{path}, row 2: 'span_class' names \['ending'\], none of the benchmark's groups .*positions.groups"
    with pytest.raises(PosqFormatError, match=message):
        import_rows(path, Labels().groups, len, METRICS.buckets)
    empty = rows_file(tmp_path, [{**GOOD, "span_class": []}])
    with pytest.raises(PosqFormatError, match=r"row 1: 'span_class' is \[\]; a row with a question needs its groups"):
        import_rows(empty, Labels().groups, len, METRICS.buckets)


def test_corpus_only_rows_are_counted_not_lost(tmp_path):
    path = rows_file(tmp_path, [GOOD, {"content": "Only a passage.", "question": ""}, {"content": GOOD["content"]}])
    built = import_rows(path, Labels().groups, len, METRICS.buckets)
    assert len(built.queries) == 1 and len(built.documents) == 2
    assert Counter(d.reason for d in built.drops) == {"corpus_only_row": 2, "same_text_as_an_earlier_passage": 1}


@pytest.fixture()
def config() -> dict:
    raw = yaml.safe_load((REPO / "config.yaml").read_text(encoding="utf-8"))
    raw["sources"]["posq_rows"] = {"url": "https://example.org/posq.jsonl", "sha256": "0" * 64}
    raw["benchmarks"]["fineweb-posq"] = {"builder": "posq_import", "sources": {"posq": "posq_rows"}}
    return raw


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            lambda c: c["benchmarks"]["squad-posq-dev"]["positions"].__setitem__("edges", [0, 200, 100]),
            r"^config: benchmarks\.squad-posq-dev\.positions\.edges: \[0, 200, 100\] is not strictly increasing",
        ),
        (
            lambda c: c["benchmarks"]["fineweb-posq"].__setitem__("positions", {"by": "thirds"}),
            r"^config: benchmarks\.fineweb-posq\.positions: 'thirds' needs an evidence span, and FineWeb-PosQ's rows "
            r"have none",
        ),
        (
            lambda c: c["benchmarks"].__setitem__(
                "fineweb-moved", {"from": "fineweb-posq", "controlled": {"mode": "move", "positions": 3}}
            ),
            r"^config: benchmarks\.fineweb-moved\.from: 'fineweb-posq' \(posq_import\) gives each query a position "
            r"group, not an evidence span, and a controlled family needs spans",
        ),
        (
            lambda c: c["benchmarks"].__setitem__(
                "fineweb-pairs", {"builder": "evidence_pairs", "from": "fineweb-posq"}
            ),
            r"^config: benchmarks\.fineweb-pairs\.from: .*joining questions by their evidence needs spans",
        ),
        (
            lambda c: c["benchmarks"]["squad-long-moved"].__setitem__("positions", {"by": "thirds"}),
            r"^config: benchmarks\.squad-long-moved\.positions: a controlled family's positions are its cells",
        ),
        (
            lambda c: c["benchmarks"]["squad-posq-dev"].__setitem__(
                "published_rows", {"zeng2025-table1": "FineWeb-PosQ"}
            ),
            r"^config: benchmarks\.squad-posq-dev\.published_rows\.zeng2025-table1: 'FineWeb-PosQ' has groups "
            r"\['beginning', 'middle', 'end'\], the benchmark's positions give \['0-100', ",
        ),
        (
            lambda c: c["benchmarks"]["squad-posq-dev"].__setitem__("published_rows", {"zeng2025-table1": "SQuAD"}),
            r"published_rows\.zeng2025-table1: .*no rows of dataset 'SQuAD' "
            r"\(it has \['FineWeb-PosQ', 'SQuAD-PosQ'\]\)",
        ),
        (
            lambda c: c["benchmarks"]["squad-posq-dev"].__setitem__("published_rows", {"my-table.tsv": "SQuAD-PosQ"}),
            r"published_rows\.my-table\.tsv: my-table\.tsv: no such file; name a bundled table \(zeng2025-table1\)",
        ),
        (
            lambda c: c["benchmarks"]["squad-posq-dev"]["sources"].__setitem__("squad", ["squad_dev_v1_1", "nope"]),
            r"^config: benchmarks\.squad-posq-dev\.sources\.squad: source 'nope' is not defined under 'sources'",
        ),
    ],
)
def test_position_group_config_mistakes_stop_at_start_naming_the_key(config, edit, message):
    edit(config)
    with pytest.raises(ConfigError, match=message):
        load_config(config)
