"""The benchmark topology and the cross checks, dispatched on the entry's class (posir.config.topology,
posir.config.benchmark_checks): every entry class is checked, translations and controlled variants resolve through
their source, and an entry's own mistake is named at the entry."""

import copy
from typing import get_args

import pytest
import yaml

from posir.config import ConfigError, Setting, load_config
from posir.config.benchmark_checks import check_benchmark
from posir.config.sections import BenchmarkEntry
from tests.conftest import REPO


@pytest.fixture()
def config():
    return yaml.safe_load((REPO / "config.yaml").read_text())


def test_every_benchmark_entry_class_has_its_own_cross_check():
    (union, _discriminator) = get_args(BenchmarkEntry)
    unchecked = [cls.__name__ for cls in get_args(union) if check_benchmark.dispatch(cls) is check_benchmark]
    assert unchecked == [], "register a check_benchmark for each entry class (posir.config.benchmark_checks)"


def test_a_translation_of_a_translation_resolves_through_its_source(config):
    config["benchmarks"]["squad-long-apertium-deu"] = {
        "builder": "translation",
        "from": "squad-long-apertium",
        "from_language": "spa",
        "translations": {"deu": {"backend": "apertium", "pair": "spa-deu"}},
    }
    typed = load_config(config)
    assert typed.query_languages("squad-long-apertium-deu") == ["spa", "deu"]
    assert typed.query_variant("squad-long-apertium-deu", "spa") == "squad-long-apertium-spa"
    assert typed.corpus_variants("squad-long-apertium-deu", "mul") == [
        "squad-long-apertium-spa",
        "squad-long-apertium-deu-deu",
    ]
    assert typed.separator("squad-long-apertium-deu") == config["benchmarks"]["squad-long"]["params"]["separator"]


def test_a_controlled_variant_is_one_benchmark_in_its_family_language(config):
    typed = load_config(config)
    variant = next(v for v, (family, _) in typed.controlled_variants.items() if family == "squad-es-long-moved")
    assert typed.setting_variants(variant, Setting("spa", "spa")) == (variant, [variant])
    assert typed.corpus_from(variant) is None
    with pytest.raises(ConfigError, match=rf"benchmark '{variant}' has no 'eng' queries \(it has \['spa'\]\)"):
        typed.query_variant(variant, "eng")


def test_an_entry_is_named_before_the_evaluation_blocks_that_read_it(config):
    """A controlled family of a language its source lacks: the family's from_language is named, not the evaluation
    block whose settings then have no queries."""
    bad = copy.deepcopy(config)
    bad["benchmarks"]["squad-long-moved"]["from_language"] = "deu"
    with pytest.raises(
        ConfigError,
        match=r"^config: benchmarks\.squad-long-moved\.from_language: 'squad-long' has no 'deu' variant",
    ):
        load_config(bad)
