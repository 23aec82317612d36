"""The ``posir`` command (posir.cli) and its tools (posir.tools): each subcommand resolves and names itself,
``posir --help`` starts without the heavy libraries, and the tools compute what they print from real result
columns and real dry-run lines."""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

from posir.cli import COMMANDS, main
from posir.metrics.columns import ALL, BUCKET, QID
from posir.results.paths import ResultPaths
from posir.results.schemas import NDCG, PSI, QUERY_MEAN
from posir.tools import compare_models, slurm_jobs
from tests.conftest import REPO


def test_help_lists_every_subcommand_and_imports_no_tool():
    probe = (
        "import sys\nfrom posir.cli import main\ntry:\n    main(['--help'])\nexcept SystemExit as done:\n"
        "    assert done.code == 0\nprint(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('pandas', 'numpy', 'torch', 'snakemake') or m.startswith('posir.tools.')))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    *help_lines, imported = done.stdout.strip().splitlines()
    assert imported == "[]"
    for name, target in COMMANDS.items():
        module = importlib.import_module(target.partition(":")[0])
        summary = module.__doc__.splitlines()[0]
        assert any(line.split() == [name, *summary.split()] for line in help_lines), (name, help_lines)


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_each_subcommand_runs_its_function_under_its_own_name(name, capsys):
    module, _, function = COMMANDS[name].partition(":")
    assert callable(getattr(importlib.import_module(module), function))
    argv = list(sys.argv)
    with pytest.raises(SystemExit) as done:
        main([name, "--help"])
    assert done.value.code == 0
    assert capsys.readouterr().out.startswith(f"usage: posir {name} ")
    assert sys.argv == argv


def test_an_unknown_or_missing_subcommand_is_refused_with_the_list(capsys):
    for argv in (["nope"], []):
        with pytest.raises(SystemExit) as done:
            main(argv)
        assert done.value.code == 2
    err = capsys.readouterr().err
    assert "invalid choice: 'nope'" in err and all(name in err for name in COMMANDS)
    assert "give a subcommand (posir --help lists them)" in err


def test_the_module_runs_as_python_dash_m():
    done = subprocess.run(
        [sys.executable, "-m", "posir.cli", "compare-models", "--help"], capture_output=True, text=True, check=True
    )
    assert done.stdout.startswith("usage: posir compare-models ")


# --- compare-models -----------------------------------------------------------------------------------


def write_run(results: Path, model: str, per_query: dict[str, float], query_mean: float, psi: float) -> None:
    paths = ResultPaths(str(results))
    scores = Path(paths.scores("squad-long", model, "eng-eng"))
    scores.parent.mkdir(parents=True, exist_ok=True)
    scores.write_text(f"{QID}\t{NDCG}\n" + "".join(f"{q}\t{v}\n" for q, v in per_query.items()))
    summary = Path(paths.aggregate("squad-long", model, "eng-eng", "summary"))
    summary.parent.mkdir(parents=True, exist_ok=True)
    summary.write_text(f"{BUCKET}\t{QUERY_MEAN}\t{PSI}\n(0, 512]\t0.9\t0.5\n{ALL}\t{query_mean}\t{psi}\n")


def test_compare_models_measures_each_family_member_against_the_reference(tmp_path):
    write_run(tmp_path, "minilm-l6", {"007": 1.0, "7": 0.5, "8": 0.0}, 0.5, 0.25)
    write_run(tmp_path, "minilm-l6-onnx", {"8": 0.0, "7": 0.5, "007": 1.0}, 0.5, 0.25)  # same values, other order
    write_run(tmp_path, "minilm-l6-int8", {"007": 0.99995, "7": 0.25, "8": 0.1}, 0.45, 0.3)
    write_run(tmp_path, "me5-small", {"007": 0.0, "7": 0.0, "8": 0.0}, 0.0, 0.0)  # not of the family
    table = compare_models.compare(tmp_path, "minilm-l6", "minilm-l6")
    assert table["model"].tolist() == ["minilm-l6-int8", "minilm-l6-onnx"]
    int8, onnx = table.to_dict("records")
    assert (int8["benchmark"], int8["setting"], int8["queries"]) == ("squad-long", "eng-eng", 3)
    assert int8["largest_per_query"] == pytest.approx(0.25)
    assert int8["differing_over_0.0001"] == 2  # "007" moved by 5e-5, within the tolerance
    assert int8[compare_models.NDCG_POINTS] == pytest.approx(-5.0)
    assert int8[PSI] == pytest.approx(0.05)
    assert (onnx["largest_per_query"], onnx["differing_over_0.0001"], onnx[PSI]) == (0.0, 0, 0.0)
    assert len(compare_models.compare(tmp_path, "minilm-l6")) == 3  # no family: every other model


def test_compare_models_names_the_file_missing_a_reference_query(tmp_path, capsys):
    write_run(tmp_path, "minilm-l6", {"1": 1.0, "2": 0.5}, 0.75, 0.0)
    write_run(tmp_path, "minilm-l6-onnx", {"1": 1.0}, 1.0, 0.0)
    missing = r"minilm-l6-onnx/eng-eng\.tsv: 1 of .*minilm-l6/eng-eng\.tsv's queries are missing"
    with pytest.raises(ValueError, match=missing):
        compare_models.compare(tmp_path, "minilm-l6")
    with pytest.raises(SystemExit):
        compare_models.main([str(tmp_path), "--reference", "minilm-l6"])
    assert re.search(missing + "; narrow the models with --family", capsys.readouterr().err)


def test_compare_models_refuses_a_folder_without_scores(tmp_path, capsys):
    with pytest.raises(SystemExit):
        compare_models.main([str(tmp_path)])
    assert "holds no scores/: give a finished run's results directory" in capsys.readouterr().err


# --- slurm-jobs ---------------------------------------------------------------------------------------

#: Lines of a real dry run with profiles/slurm: a group job with two members, then jobs outside groups.
DRY_RUN = """\
[Fri Nov 27 13:49:25 2026]
rule fetch_source:
    output: results/sources/xquad_ara/xquad.ar.json
[Fri Nov 27 13:49:26 2026] Group job evaluate (jobs in lexicogr. order):

    [Fri Nov 27 13:49:26 2026]
    rule retrieve:
        output: results/runs/squad-long/bm25/eng-eng.trec
    [Fri Nov 27 13:49:26 2026]
    rule retrieve:
        output: results/runs/squad-long/minilm-l6/eng-eng.trec
[Fri Nov 27 13:49:26 2026]
rule encode_texts:
    output: results/embeddings/me5-small/xquad-parallel-hin/queries.npy
[Fri Nov 27 13:49:26 2026]
localrule all:
    input: results/tables/squad-long/main.md
"""


def test_slurm_jobs_counts_a_group_as_one_job_and_local_rules_as_none():
    jobs, slurm, members = slurm_jobs.count(DRY_RUN, {"all", "fetch_source"})
    assert jobs == {"retrieve": 2, "fetch_source": 1, "encode_texts": 1, "all": 1}
    assert slurm == {"group evaluate": 1, "encode_texts": 1}
    assert members == {"evaluate": {"retrieve": 2}}


def test_the_checkouts_local_rules_are_those_marked_localrule():
    assert slurm_jobs.CHECKOUT == REPO
    local = slurm_jobs.local_rules(REPO)
    assert {"all", "fetch_source"} <= local and "retrieve" not in local and "encode_texts" not in local
