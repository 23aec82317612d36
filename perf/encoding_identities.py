"""Every model entry's encoding identity (and the hash of its dump, which its jobs' params are) in config.yaml,
configs/*.yaml and tests/configs/*.yaml, one line each: run it on two checkouts and diff the outputs to show that a
change keeps every entry's cache keys (an overlay's entry is merged over config.yaml's of the same name, as
Snakemake merges them).

    PYTHONPATH=src python perf/encoding_identities.py . > after.txt   # and on the other checkout: before.txt
    diff before.txt after.txt
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import yaml


def main() -> None:
    from posir.models.declarations.spec import ModelSpec
    from posir.models.identity import encoding_identity, whole_text_identity, window_identity

    root = Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    base = yaml.safe_load((root / "config.yaml").read_text(encoding="utf-8"))["models"]
    files = [
        root / "config.yaml",
        *sorted((root / "configs").glob("*.yaml")),
        *sorted((root / "tests/configs").glob("*.yaml")),
    ]
    for path in files:
        models = (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("models") or {}
        for name, entry in models.items():
            if not entry:
                continue
            if path.name != "config.yaml" and "backend" not in entry:
                entry = {**base.get(name, {}), **entry}
            spec = ModelSpec.from_config(name, entry)
            dump = hashlib.sha256(json.dumps(spec.model_dump(mode="json"), sort_keys=True).encode()).hexdigest()
            identities = (encoding_identity(spec), window_identity(spec), whole_text_identity(spec))
            print(path.relative_to(root), name, *(i[:16] for i in identities), dump[:16])


if __name__ == "__main__":
    main()
