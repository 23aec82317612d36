"""Every job type of the plan, by name. Each is defined in a module of :mod:`posir.jobs` with the jobs of rules that do
alike, so that a rule's script imports its own job's declarations only, not this index."""

from __future__ import annotations

from posir.jobs import RUN_TIME_FIELDS, Job
from posir.jobs.benchmarks import (
    BuildJob,
    CollectionJob,
    ComparisonJob,
    FetchJob,
    GenerationJob,
    ImportJob,
    JudgeJob,
    JudgeTableJob,
    PosqImportJob,
    TranslateJob,
)
from posir.jobs.controlled import ControlledJob, ControlledTablesJob, DistanceTablesJob, PieceReader
from posir.jobs.evaluation import (
    ExposureCorpus,
    ExposureJob,
    LanguageBiasJob,
    MtebModelJob,
    MtebTaskJob,
    PanelsJob,
    PaperTablesJob,
    PoolingJob,
    PositionGroupsJob,
    PositionsFigureJob,
    PublishedJob,
    RepresentationJob,
    RunAnalysisJob,
    SaliencyJob,
    ScoreOriginJob,
    SettingTablesJob,
)
from posir.jobs.rerank import RerankJob
from posir.jobs.retrieval import EncodeJob, RetrieveJob, ScoreJob

__all__ = [
    "RUN_TIME_FIELDS",
    "BuildJob",
    "CollectionJob",
    "ComparisonJob",
    "ControlledJob",
    "ControlledTablesJob",
    "DistanceTablesJob",
    "EncodeJob",
    "ExposureCorpus",
    "ExposureJob",
    "FetchJob",
    "GenerationJob",
    "ImportJob",
    "Job",
    "JudgeJob",
    "JudgeTableJob",
    "LanguageBiasJob",
    "MtebModelJob",
    "MtebTaskJob",
    "PanelsJob",
    "PaperTablesJob",
    "PieceReader",
    "PoolingJob",
    "PositionGroupsJob",
    "PositionsFigureJob",
    "PosqImportJob",
    "PublishedJob",
    "RepresentationJob",
    "RerankJob",
    "RetrieveJob",
    "RunAnalysisJob",
    "SaliencyJob",
    "ScoreOriginJob",
    "ScoreJob",
    "SettingTablesJob",
    "TranslateJob",
]
