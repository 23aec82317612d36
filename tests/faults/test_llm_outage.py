"""LLM stages against an endpoint that is down, failing, or behind a proxy serving HTML.

Before: with the endpoint refusing connections (or answering 500 to every call)
``generate_queries`` exited 0 with 3 documents in and 0 queries out, and a rerun
sent 0 requests, so the benchmark could never be built without deleting files by
hand; a 200 response with an HTML body crashed the stage with a raw
``JSONDecodeError``. Now transport failures are never recorded as answers: a stage
whose calls mostly failed that way raises naming the endpoint and the counts and
writes nothing, and a rerun sends exactly the missing calls. The server here is a
fault injector (tests/_fault_server.py); the stage is the real one.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import pytest

from posir.builders.generation import GenerationBenchmark
from posir.builders.raw_corpus import RawDocument, write_documents
from posir.llm import LLMConfig, LLMOutageError
from posir.plan.jobs import GenerationJob
from posir.steps.generation import generate_queries_step
from tests._fault_server import FaultServer, completion, error, html_page
from tests.conftest import REPO

ANSWER = json.dumps(
    {"questions": [{"question": "What flows through the valley?", "answer": "a river", "type": "what"}]}
)
ENTRY = GenerationBenchmark.from_config(
    "generated",
    {
        "builder": "llm_generation",
        "language": "eng",
        "generation": {
            "corpus": {"path": "unused"},
            "queries": {"questions_per_document": 1},
            "sampling": {"seed": 13},
        },
    },
)


def llm_section(base_url: str, tmp_path: Path, **overrides: Any) -> dict[str, Any]:
    section = {
        "base_url": base_url,
        "model": "test-model",
        "api_key_env": None,
        "max_retries": 2,
        "backoff_base": 0.0,
        "backoff_max": 0.01,
        "timeout": 5,
        "concurrency": 1,
        "cache_path": str(tmp_path / "llm-cache.sqlite"),
    }
    section.update(overrides)
    return section


def sample(tmp_path: Path, n: int = 3) -> Path:
    path = tmp_path / "sample" / "documents.jsonl"
    documents = [
        RawDocument(f"doc{i}", f"Document {i}: the river flows through the valley number {i}.") for i in range(n)
    ]
    write_documents(path, documents, {d.doc_id: {"positive": True} for d in documents})
    return path


def outputs(tmp_path: Path) -> dict[str, Path]:
    out = tmp_path / "queries"
    return {"candidates": out / "candidates.jsonl", "drops": out / "drops.tsv", "counts": out / "counts.json"}


def run_stage(base_url: str, tmp_path: Path, **overrides: Any) -> None:
    prompts = [str(REPO / "prompts" / "generate_queries.md"), str(REPO / "prompts" / "generate_queries.schema.json")]
    job = GenerationJob(
        entry=ENTRY,
        llm_endpoint=LLMConfig.from_section(llm_section(base_url, tmp_path, **overrides)),
        input={"documents": str(sample(tmp_path)), "prompt": prompts},
        output={name: str(path) for name, path in outputs(tmp_path).items()},
    )
    generate_queries_step(job)


def refused_url() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"  # closed again: connections are refused


def test_connection_refused_fails_the_stage_and_writes_nothing(tmp_path):
    url = refused_url()
    with pytest.raises(LLMOutageError) as raised:
        run_stage(url, tmp_path)
    message = str(raised.value)
    assert url in message and "3 of 3 calls" in message and "max_transport_failure_rate" in message
    assert not any(path.exists() for path in outputs(tmp_path).values())


def test_500_on_every_call_fails_then_a_rerun_sends_exactly_the_missing_calls(tmp_path):
    server = FaultServer()
    try:
        # doc0 is answered, the endpoint then fails every call
        server.steps = [lambda body: completion(ANSWER)]
        server.default = lambda body: error(500)
        with pytest.raises(LLMOutageError, match="2 of 3 calls"):
            run_stage(server.base_url, tmp_path)
        assert not outputs(tmp_path)["candidates"].exists()
        sent = server.requests

        server.default = lambda body: completion(ANSWER)
        run_stage(server.base_url, tmp_path)
        assert server.requests - sent == 2, "the answered call is cached; only the two missing ones are sent"
        counts = json.loads(outputs(tmp_path)["counts"].read_text())
        usage = counts["llm_usage"]["generate_queries"]
        assert usage["cache_hits"] == 1 and usage["ok"] == 3 and usage["failed"] == 0
        assert len(outputs(tmp_path)["candidates"].read_text().splitlines()) == 3
    finally:
        server.stop()


def test_a_few_transport_failures_below_the_threshold_are_counted_drops(tmp_path):
    server = FaultServer()
    try:
        server.default = lambda body: completion(ANSWER) if "Document 2" not in json.dumps(body) else error(503)
        run_stage(server.base_url, tmp_path, max_transport_failure_rate=0.5)
        drops = outputs(tmp_path)["drops"].read_text().splitlines()
        assert any(line.startswith("generate_queries\tdoc2\tllm_retries_exhausted") for line in drops), drops
    finally:
        server.stop()


def test_an_html_page_with_status_200_is_retried_like_a_5xx(tmp_path):
    server = FaultServer()
    try:
        server.steps = [lambda body: html_page(200)]
        server.default = lambda body: completion(ANSWER)
        run_stage(server.base_url, tmp_path)
        usage = json.loads(outputs(tmp_path)["counts"].read_text())["llm_usage"]["generate_queries"]
        assert usage["retries"] == 1 and usage["ok"] == 3
    finally:
        server.stop()


def test_html_with_a_json_content_type_on_every_call_is_an_outage_not_a_crash(tmp_path):
    server = FaultServer()
    try:
        server.default = lambda body: (200, {"Content-Type": "application/json"}, b"<html>proxy error</html>")
        with pytest.raises(LLMOutageError, match="3 of 3 calls"):
            run_stage(server.base_url, tmp_path)
    finally:
        server.stop()


# --- the llm-grade scorer (reranking pipelines, span contrast) -------------------------------------------

PAIRS = [
    (f"Which river is number {i}?", f"Document {i}: the river flows through the valley number {i}.") for i in range(4)
]


def judge(base_url: str, tmp_path: Path, scoring: str, **overrides: Any):
    from posir.llm import LLMClient
    from posir.scorers import ScorerSpec, load_scorer

    client = LLMClient(LLMConfig.from_section(llm_section(base_url, tmp_path, **overrides)), cache=None, progress=False)
    spec = ScorerSpec.from_config("judge", {"backend": "llm-grade", "scoring": scoring})
    return client, load_scorer(spec, llm_client=client, prompts_dir=REPO / "prompts", stage="rerank:judge")


@pytest.mark.parametrize("scoring", ["logprobs", "grade"])
def test_an_llm_scorer_whose_calls_all_fail_raises_instead_of_scoring_none(tmp_path, scoring):
    """Before: by logprobs every pair scored None and the rerank job wrote BM25's order as its run; by grade
    the first failed pair alone raised ("1 of 1 calls")."""
    server = FaultServer()
    server.default = lambda body: error(500)
    try:
        client, scorer = judge(server.base_url, tmp_path, scoring)
        with client, pytest.raises(LLMOutageError, match="4 of 4 calls"):
            scorer.score([q for q, _ in PAIRS], [d for _, d in PAIRS])
    finally:
        server.stop()


def test_one_unreachable_pair_among_several_is_unscored_not_an_outage(tmp_path):
    server = FaultServer()
    server.default = lambda body: error(503) if "number 2" in json.dumps(body) else completion('{"grade": 3}')
    try:
        client, scorer = judge(server.base_url, tmp_path, "grade", max_transport_failure_rate=0.5)
        with client:
            assert scorer.score([q for q, _ in PAIRS], [d for _, d in PAIRS]) == [3.0, 3.0, None, 3.0]
            assert scorer.counts()["retries_exhausted"] == 1
    finally:
        server.stop()
