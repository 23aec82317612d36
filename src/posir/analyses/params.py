"""The ``analyses`` section: which benchmark and models each analysis of why a model is position-biased reads
(PosIR 5.3; Zeng et al. Appendix A.4), and its parameters."""

from __future__ import annotations

from typing import Annotated, Any, Self

from pydantic import Field, Strict, field_validator, model_validator

from posir.schema import Entry, Int, KeyProblem, PositiveInt, Probability, Str

Runs = dict[Str, tuple[Str, ...]]
Fraction = Annotated[float, Strict(), Field(ge=0, le=1)]


class AnalysisParams(Entry):
    """What every analysis has: the (benchmark, models) it runs on."""

    runs: Runs = Field(default_factory=dict)
    """{benchmark: [models]}; null clears it in a merged config"""

    @field_validator("runs", mode="before")
    @classmethod
    def _cleared(cls, runs: Any) -> Any:
        return {} if runs is None else runs


class SaliencyParams(AnalysisParams):
    """``analyses.saliency``: gradient saliency by relative token position (PosIR 5.3), torch backends only.

    ``token_length``: inclusive range of the positive document's ``doc_token_length`` (the
    benchmark's tokenizer); ``position_window``: inclusive range of the evidence's relative
    position; PosIR used documents of about 1024 tokens with the evidence near the middle.
    """

    token_length: tuple[PositiveInt, PositiveInt] = (896, 1152)
    position_window: tuple[Fraction, Fraction] = (0.4, 0.6)
    max_pairs: PositiveInt = 500
    seed: Int = 13
    n_bins: PositiveInt = 100
    batch_size: PositiveInt = 4
    confidence: Probability = 0.95
    cache: Str = "results/saliency-cache.sqlite"
    """curves per pair; "" disables"""

    @model_validator(mode="after")
    def _ranges(self) -> Self:
        low, high = self.token_length
        start, end = self.position_window
        if not low <= high:
            raise KeyProblem("token_length", f"{[low, high]} is not a range", "use [low, high] with low <= high")
        if not start <= end:
            raise KeyProblem("position_window", f"{[start, end]} is not a range", "use [start, end] with start <= end")
        return self


class RepresentationParams(AnalysisParams):
    """``analyses.representation``: cosine of a document's embedding with each of its k equal segments
    (posir.analyses.representation), for every dense backend."""

    segments: Annotated[int, Strict(), Field(ge=2)] = 4
    confidence: Probability = 0.95


class AnalysesSection(Entry):
    """``analyses``: why a model is position-biased."""

    saliency: SaliencyParams = SaliencyParams()
    representation: RepresentationParams = RepresentationParams()
