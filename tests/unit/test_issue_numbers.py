"""No code, comment or docstring cites an issue number: the tracker is not the code's reader's, so a sentence says
what the issue stood for (what went wrong, what a change is for), which stays true when the tracker is gone.

Every text file git tracks (or would: new files not ignored) in the code's folders counts (Python, rules, configs,
scripts, prompts, report captions), and the README and docs too: there a number may stand for a measurement, never
for an issue.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from tests.conftest import REPO

#: "issue 22", "Issues 31-33", "issue #7", "issue-30": the word issue, a space, hyphen or # and a number.
CITATION = re.compile(r"\b[Ii]ssues?[ \t]*[-#:]?[ \t]*#?\d+")
FOLDERS = ("src", "scripts", "rules", "tests", "perf", "configs", "profiles", "envs", "report", "prompts", "schemas")
FILES = ("Snakefile", "Makefile", "config.yaml", "pyproject.toml", ".ci/run", "README.md")
#: Lines another branch rewrites, each (file, the line's text); an entry whose line is gone fails, so it is removed.
ALLOWED: set[tuple[str, str]] = {
    (
        "src/posir/steps/controlled.py",
        '"""Steps: a controlled-position variant of a benchmark, and a controlled family\'s statistics (issue 22)."""',
    ),
    (
        "src/posir/tables/render.py",
        "# --- controlled-position families (issue 22) " + "-" * 69,
    ),
}


def tracked_text_files() -> list[Path]:
    listed = subprocess.run(
        [
            "git",
            "-C",
            str(REPO),
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
            "--",
            *FOLDERS,
            *FILES,
            "docs",
        ],
        capture_output=True,
        check=True,
    ).stdout.decode()
    paths = [REPO / name for name in listed.split("\0") if name]
    itself = Path(__file__).resolve()  # this file spells citations out to test the pattern
    return [p for p in paths if p.is_file() and p.resolve() != itself and b"\0" not in p.read_bytes()[:4096]]


def citations() -> list[tuple[str, str]]:
    found = []
    for path in tracked_text_files():
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            if CITATION.search(line):
                found.append((path.relative_to(REPO).as_posix(), line.strip()))
    return found


def test_the_pattern_finds_what_a_citation_looks_like() -> None:
    for text in ("(issue 22)", "Issues 31-33", "issue #7", "the issue-30 change", "issue: 4"):
        assert CITATION.search(text), text
    for text in ("an issue with 2 models", "issues arise", "tissue 5", "the issue's goal"):
        assert not CITATION.search(text), text


def test_no_file_cites_an_issue_number() -> None:
    found = [(path, line) for path, line in citations() if (path, line) not in ALLOWED]
    assert not found, "say what the issue stood for instead:\n" + "\n".join(f"{p}: {line}" for p, line in found)


def test_every_allowed_line_is_still_there() -> None:
    gone = ALLOWED - set(citations())
    assert not gone, f"remove these from ALLOWED, their lines no longer cite an issue: {sorted(gone)}"
