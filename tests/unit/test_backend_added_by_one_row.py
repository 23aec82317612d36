"""A new backend is one module and one row: in a copy of the package, a hashing encoder written as a module under
posir.models.backends and one row in the table of model kinds (posir.models.declarations.backends) are all it takes
for a ``models:`` entry of it to be accepted by the config and encoded through the encoding service and its cache;
nothing else of the package is touched."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.conftest import REPO

MODULE = '''
"""A test backend: a text's vector is its characters' codes folded into 8 numbers."""

import numpy as np


class HashingEncoder:
    max_input_tokens = None

    def __init__(self, spec, threads=None):
        self.spec = spec

    def input_tokens(self, texts, role):
        return [len(text.split()) for text in texts]

    def encode(self, texts, role):
        rows = np.zeros((len(texts), 8), dtype=np.float32)
        for i, text in enumerate(texts):
            for j, ch in enumerate(text):
                rows[i, j % 8] += ord(ch)
        return rows / np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-9)
'''

ROW = """
    "hashing": BackendCapabilities(
        "dense",
        outputs={DENSE: Implementation("posir.models.backends.hashing:HashingEncoder")},
        long_input=("full",),
        prompts=False,
        optional_normalize=False,
    ),
"""

SCRIPT = """
import json, sys
from posir.encoding import EncodingService
from posir.models.declarations.spec import ModelSpec
spec = ModelSpec.from_config("hash", {"backend": "hashing"})
with EncodingService(spec, sys.argv[1]) as service:
    first = service.encode(["a text", "another text"], "document")
with EncodingService(spec, sys.argv[1]) as service:
    again = service.encode(["a text", "another text"], "document")
print(json.dumps({"shape": list(first.vectors.shape), "encoded": first.encoded, "cached": again.from_cache,
                  "same": bool((first.vectors == again.vectors).all())}))
"""


def test_a_backend_is_one_module_and_one_row(tmp_path: Path) -> None:
    copy = tmp_path / "src"
    shutil.copytree(REPO / "src", copy, ignore=shutil.ignore_patterns("__pycache__"))
    (copy / "posir" / "models" / "backends" / "hashing.py").write_text(textwrap.dedent(MODULE))
    table = copy / "posir" / "models" / "declarations" / "backends.py"
    text = table.read_text()
    anchor = '    "bm25": BackendCapabilities('
    assert text.count(anchor) == 1
    table.write_text(text.replace(anchor, textwrap.indent(textwrap.dedent(ROW).strip("\n"), "    ") + "\n" + anchor))
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path / "cache.sqlite")],
        env={**os.environ, "PYTHONPATH": str(copy)},
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout) == {"shape": [2, 8], "encoded": 2, "cached": 2, "same": True}
    # the two files are all that differ from the package
    changed = sorted(
        str(path.relative_to(copy))
        for path in copy.rglob("*.py")
        if not (REPO / "src" / path.relative_to(copy)).is_file()
        or (REPO / "src" / path.relative_to(copy)).read_bytes() != path.read_bytes()
    )
    assert changed == ["posir/models/backends/hashing.py", "posir/models/declarations/backends.py"]
