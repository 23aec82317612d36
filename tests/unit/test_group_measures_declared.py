"""Group measures (exposure share, AWRF, expected exposure, PEER) declare their parameters as ranking measures do: the
config names each (``exposure.measures``), with its other parameters where it has some, and the package finds the
family in its own file; nothing lists them by hand, and no table asks which class a measure is."""

from __future__ import annotations

import pytest

from posir.metrics.exposure import DEFAULT_GROUP_MEASURES, ExposureParams
from posir.metrics.measure import EXPOSURE_TABLE, PEER_TABLE
from posir.metrics.measures import group_families, parse_group
from posir.metrics.measures.awrf import AWRF
from posir.metrics.measures.expected_exposure import ExpectedExposure
from posir.metrics.measures.exposure_share import ExposureShare
from posir.metrics.measures.peer import PEER
from posir.schema import ConfigError
from tests.conftest import REPO


def test_every_group_family_is_found_in_its_own_file() -> None:
    assert group_families() == {"EE": ExpectedExposure, "AWRF": AWRF, "exposure_share": ExposureShare, "PEER": PEER}


def test_a_measure_is_its_name_or_its_name_with_its_other_parameters() -> None:
    assert parse_group("AWRF@20") == AWRF(cutoff=20)
    assert parse_group({"EE": {"browsing": "gerr", "utility": 0.25}}) == ExpectedExposure(browsing="gerr", utility=0.25)
    peer = parse_group({"PEER@5": {"weights": {"1": 0.75, "0": 0.25}}})  # a job's JSON writes the grades as text
    assert peer.cutoff == 5 and dict(peer.weights) == {0: 0.25, 1: 0.75} and list(peer.weights) == [0, 1]
    with pytest.raises(ValueError, match="'EE': EE has no parameter depth; it has browsing, patience, utility"):
        parse_group({"EE": {"depth": 3}})
    with pytest.raises(ValueError, match="'EE@10': EE takes no cutoff"):
        parse_group("EE@10")
    with pytest.raises(ValueError, match="'nDCG@10' is not a measure; known: AWRF, EE, PEER, exposure_share"):
        parse_group("nDCG@10")
    with pytest.raises(ValueError, match="must each lie in \\[0, 1\\] and sum to 1"):
        parse_group({"PEER@10": {"weights": {0: 0.5, 1: 0.6}}})


def test_the_defaults_are_the_measures_and_parameters_the_tables_always_had() -> None:
    measures = ExposureParams().group_measures()
    assert [m.name for m in measures] == ["EE", "AWRF@10", "exposure_share@10", "exposure_share@100", "PEER@10"]
    assert measures[0] == ExpectedExposure(browsing="rbp", patience=0.5, utility=0.5)
    assert dict(measures[-1].weights) == {0: 0.5, 1: 0.5}
    assert [m.table for m in measures] == [EXPOSURE_TABLE] * 4 + [PEER_TABLE]
    assert len(DEFAULT_GROUP_MEASURES) == len(measures)


def test_the_config_names_measures_and_says_where_the_old_keys_went() -> None:
    params = ExposureParams.from_config({"measures": ["exposure_share@5", {"EE": {"patience": 0.8}}]}, "exposure")
    assert [m.name for m in params.group_measures()] == ["exposure_share@5", "EE"]
    with pytest.raises(ConfigError, match=r"exposure\.measures\[1\]: 'AWRF@x' is not a measure"):
        ExposureParams.from_config({"measures": ["exposure_share@5", "AWRF@x"]}, "exposure")
    with pytest.raises(ConfigError, match=r"exposure\.measures: names a measure twice"):
        ExposureParams.from_config({"measures": ["exposure_share@5", "exposure_share@5"]}, "exposure")
    with pytest.raises(ConfigError, match=r"exposure\.measures: has no measure of each group; keep one"):
        ExposureParams.from_config({"measures": ["AWRF@10"]}, "exposure")
    with pytest.raises(ConfigError, match=r"exposure\.patience: is a parameter of a measure now; .*\{EE: \{patience"):
        ExposureParams.from_config({"patience": 0.5}, "exposure")


def test_no_module_but_its_own_names_a_group_measure_class() -> None:
    """The tables and the steps ask a measure what it declares (its table, its scope, whether it applies), never
    which class it is."""
    names = ("PEER", "AWRF", "ExpectedExposure", "ExposureShare")
    offenders = [
        str(path.relative_to(REPO))
        for path in (REPO / "src" / "posir").rglob("*.py")
        if "measures" not in path.parts
        for name in names
        if f"isinstance(measure, {name})" in path.read_text(encoding="utf-8")
        or f"isinstance(m, {name})" in path.read_text(encoding="utf-8")
    ]
    assert offenders == []
