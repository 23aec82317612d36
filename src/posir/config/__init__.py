"""The whole ``config.yaml``, typed once: :func:`load_config` turns a raw mapping into a frozen, cross-checked
:class:`WorkflowConfig`, or a :class:`ConfigError` whose lines name the key, the value and the fix.

Each section is declared beside the code that reads it (:mod:`posir.schema` says how); this package composes
them (:mod:`~posir.config.sections`), answers what the benchmarks' shape is (their languages, variant directories,
corpora and evaluations: :mod:`~posir.config.topology`), checks what no single section can
(:mod:`~posir.config.checks`; each benchmark entry by its class: :mod:`~posir.config.benchmark_checks`) and writes
the JSON schema file (:mod:`~posir.config.schema_file`, ``python -m posir.config --write``).
"""

from posir.config.checks import check_installed, comparison_rows
from posir.config.schema_file import SCHEMA_FILE, schema_text
from posir.config.topology import Evaluation
from posir.config.workflow import WorkflowConfig, load_config
from posir.languages import ONE_VS_MANY, Setting
from posir.metrics.params import MetricParams, StatisticsParams
from posir.schema import SAFE_NAME, ConfigError

__all__ = [
    "ONE_VS_MANY",
    "SAFE_NAME",
    "SCHEMA_FILE",
    "ConfigError",
    "Evaluation",
    "MetricParams",
    "Setting",
    "StatisticsParams",
    "WorkflowConfig",
    "check_installed",
    "comparison_rows",
    "load_config",
    "schema_text",
]
