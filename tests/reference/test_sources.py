import hashlib

import pytest

from posir.sources import MIRROR_ENV, Source, SourceError, fetch, mirror_directories


def _source(tmp_path, content=b"real bytes", **kw):
    return Source(
        name="demo",
        url="http://127.0.0.1:9/demo.json",  # discard port: nothing listens, fails at once
        sha256=hashlib.sha256(content).hexdigest(),
        filename="demo.json",
        mirror_path=kw.get("mirror_path", "sub/demo.json"),
    )


def test_mirror_copy_is_used_and_verified(tmp_path):
    mirror = tmp_path / "mirror"
    (mirror / "sub").mkdir(parents=True)
    (mirror / "sub" / "demo.json").write_bytes(b"real bytes")
    out = tmp_path / "out" / "demo.json"
    origin = fetch(_source(tmp_path), out, [tmp_path / "absent", mirror])
    assert out.read_bytes() == b"real bytes"
    assert origin == str(mirror / "sub" / "demo.json")


def test_checksum_mismatch_names_the_file_and_the_fix(tmp_path):
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    (mirror / "demo.json").write_bytes(b"truncated")
    with pytest.raises(SourceError) as error:
        fetch(_source(tmp_path), tmp_path / "out.json", [mirror])
    message = str(error.value)
    assert str(mirror / "demo.json") in message and "checksum mismatch" in message
    assert "http://127.0.0.1:9/demo.json" in message
    assert not (tmp_path / "out.json").exists()


def test_offline_without_mirror_names_file_url_and_how_to_mirror(tmp_path):
    with pytest.raises(SourceError) as error:
        fetch(_source(tmp_path), tmp_path / "out.json", [tmp_path / "nowhere"], timeout=2)
    message = str(error.value)
    assert "demo.json" in message and "http://127.0.0.1:9/demo.json" in message and MIRROR_ENV in message
    assert list(tmp_path.iterdir()) == []  # no partial download left behind


def test_mirror_directories_come_from_env_first(tmp_path):
    dirs = mirror_directories(["b"], environ={MIRROR_ENV: f"a1{__import__('os').pathsep}a2"})
    assert [d.name for d in dirs] == ["a1", "a2", "b"]


def test_real_squad_source_verifies_against_the_mirror(mirror, tmp_path):
    import yaml

    from tests.conftest import REPO

    config = yaml.safe_load((REPO / "config.yaml").read_text())
    source = Source.from_config("squad_dev_v1_1", config["sources"]["squad_dev_v1_1"])
    fetch(source, tmp_path / source.filename, [mirror])
    assert (tmp_path / source.filename).stat().st_size == (mirror / "squad" / "dev-v1.1.json").stat().st_size
