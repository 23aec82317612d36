"""The llm-grade scorer against the real local SmolLM2 server, and faults injected by a small HTTP server.

SmolLM2-135M is weak: the tests assert structure and accounting (scores are
probabilities, calls made and saved), never that its judgements are right.
The fault server speaks just enough of the chat-completions protocol to inject
what the real server never does: 5xx, no logprobs, a rejected ``logprobs``
parameter, a refused key.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from posir.llm import LLMClient, LLMConfig, LLMOutageError, LLMRequestError
from posir.scorers import CachedScorer, ScoreCache, ScorerError, ScorerSpec, ScorerUnavailable, load_scorer
from posir.scorers.llm import LLMRelevanceScorer
from tests._http import send_json

REPO = Path(__file__).resolve().parents[2]
PAIRS = [
    ("Which team won Super Bowl 50?", "The Denver Broncos defeated the Carolina Panthers to win Super Bowl 50."),
    ("Which team won Super Bowl 50?", "Bread is made from flour, water and yeast."),
    ("What is the capital of France?", "Paris is the capital and largest city of France."),
    ("What is the capital of France?", "The Nile is the longest river in Africa."),
]


def client_for(base_url: str, **extra) -> LLMClient:
    config = LLMConfig.from_section(
        dict(
            base_url=base_url,
            model="smollm2",
            api_key_env=None,
            concurrency=1,
            max_retries=2,
            backoff_base=0.01,
            backoff_max=0.05,
            timeout=60,
            **extra,
        )
    )
    return LLMClient(config, cache=None, progress=False)


def requests_made(client: LLMClient) -> int:
    return sum(stage["http_requests"] for stage in client.usage().values())


def llm_spec(**extra) -> ScorerSpec:
    return ScorerSpec.from_config("judge", {"backend": "llm-grade", **extra})


# --- the real server ------------------------------------------------------------------------------


def test_the_local_server_gives_logprobs_and_scores_are_probabilities(smollm2, tmp_path):
    queries, documents = [q for q, _ in PAIRS], [d for _, d in PAIRS]
    with ScoreCache(tmp_path / "scores.sqlite") as cache, client_for(smollm2) as client:
        scorer = load_scorer(llm_spec(), llm_client=client, cache=cache, stage="span_contrast:judge")
        assert isinstance(scorer, CachedScorer) and isinstance(scorer.scorer, LLMRelevanceScorer)
        scores = scorer.score(queries, documents)
        assert scorer.scorer.method() == "logprobs"  # auto: the probe found logprobs (docs: the finding)
        assert all(s is None or 0.0 <= s <= 1.0 for s in scores)
        assert sum(s is not None for s in scores) >= 3, scorer.scorer.counts()
        usage = client.usage()
        assert usage["span_contrast:judge:probe"]["http_requests"] == 1
        assert usage["span_contrast:judge"]["items"] == 4 and usage["span_contrast:judge"]["http_requests"] == 4
        assert usage["span_contrast:judge"]["prompt_tokens"] > 0
    with ScoreCache(tmp_path / "scores.sqlite") as cache, client_for(smollm2) as client:
        rerun = load_scorer(llm_spec(), llm_client=client, cache=cache)
        assert rerun.score(queries, documents) == scores
        assert requests_made(client) == 0  # the method and every real score come from the cache


def test_grade_scoring_on_the_real_server(smollm2):
    with client_for(smollm2, max_tokens=32) as client:
        scorer = load_scorer(llm_spec(scoring="grade"), llm_client=client)
        scores = scorer.score(*zip(*PAIRS[:2]))
        assert all(s is None or s in (0.0, 1.0, 2.0, 3.0, 4.0) for s in scores)
        assert any(s is not None for s in scores), client.usage()  # the schema-constrained grade comes back
        assert scorer.identity()["method"] == "grade"


KILLED_JOB = textwrap.dedent("""
    import sys
    from posir.llm import LLMClient, LLMConfig
    from posir.scorers import ScoreCache, ScorerSpec, load_scorer

    base_url, cache_path, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    client = LLMClient(LLMConfig.from_section({"base_url": base_url, "model": "smollm2", "api_key_env": None,
                                               "concurrency": 1}), cache=None, progress=False)
    scorer = load_scorer(ScorerSpec.from_config("judge", {"backend": "llm-grade", "scoring": "logprobs"}),
                         llm_client=client, cache=ScoreCache(cache_path))
    scorer.score([f"Question number {i}: who won?" for i in range(n)],
                 [f"Document {i}: the Broncos won the game." for i in range(n)])
""")


def test_a_killed_job_repeats_none_of_its_answers(smollm2, tmp_path):
    n, cache_path = 16, tmp_path / "scores.sqlite"
    ScoreCache(cache_path).close()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), os.environ.get("PYTHONPATH", "")])}
    job = subprocess.Popen([sys.executable, "-c", KILLED_JOB, smollm2, str(cache_path), str(n)], env=env)
    try:
        deadline = time.monotonic() + 120
        with ScoreCache(cache_path) as cache:
            while cache.count() < 2 and job.poll() is None and time.monotonic() < deadline:
                time.sleep(0.05)
    finally:
        job.send_signal(signal.SIGKILL)
        job.wait()
    with ScoreCache(cache_path) as cache, client_for(smollm2) as client:
        kept = cache.count()
        assert 2 <= kept < n, "the job finished before it could be killed: raise n"
        rerun = load_scorer(llm_spec(scoring="logprobs"), llm_client=client, cache=cache)
        rerun.score(
            [f"Question number {i}: who won?" for i in range(n)],
            [f"Document {i}: the Broncos won the game." for i in range(n)],
        )
        assert rerun.counts.hits == kept
        assert rerun.counts.computed + rerun.counts.failed == n - kept
        assert requests_made(client) == n - kept  # one call per pair the killed job had not answered


# --- injected faults ----------------------------------------------------------------------------


class ChatServer:
    """Chat completions with a chosen behaviour: ``logprobs`` (a yes/no answer), ``no-logprobs`` (a grade,
    no logprobs), ``reject-logprobs`` (400 for the parameter), ``500``, ``401``."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.bodies: list[dict] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.bodies.append(body)
                mode = server.mode
                if mode == "500":
                    return self.reply(500, {"error": {"message": "overloaded"}})
                if mode == "401":
                    return self.reply(401, {"error": {"message": "bad key"}})
                if mode == "reject-logprobs" and body.get("logprobs"):
                    return self.reply(400, {"error": {"message": "logprobs is not supported by this model"}})
                choice: dict = {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {"role": "assistant", "content": '{"grade": 3}'},
                }
                if mode == "logprobs" and body.get("logprobs"):
                    top = [
                        {"token": "Yes", "logprob": -0.2231, "bytes": None},  # 0.8
                        {"token": "No", "logprob": -1.6094, "bytes": None},
                    ]  # 0.2
                    choice = {
                        **choice,
                        "finish_reason": "length",
                        "message": {"role": "assistant", "content": "Yes"},
                        "logprobs": {"content": [{**top[0], "top_logprobs": top}]},
                    }
                self.reply(
                    200,
                    {
                        "id": "c",
                        "object": "chat.completion",
                        "created": 0,
                        "model": body["model"],
                        "choices": [choice],
                        "usage": {"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11},
                    },
                )

            def reply(self, status: int, payload: dict) -> None:
                send_json(self, status, payload)

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.http.server_address[1]}/v1"
        threading.Thread(target=self.http.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.http.shutdown()
        self.http.server_close()


@pytest.fixture
def chat() -> Iterator[ChatServer]:
    server = ChatServer("logprobs")
    try:
        yield server
    finally:
        server.close()


def test_an_outage_is_never_a_score_and_never_cached(chat, tmp_path):
    chat.mode = "500"
    with ScoreCache(tmp_path / "scores.sqlite") as cache, client_for(chat.base_url) as client:
        scorer = load_scorer(llm_spec(scoring="logprobs"), llm_client=client, cache=cache, stage="s")
        with pytest.raises(LLMOutageError, match="2 of 2 calls"):  # not two None scores, nor a run of them
            scorer.score(["q", "q"], ["a", "b"])
        assert cache.count() == 0
        assert client.usage()["s"]["failures"]["retries_exhausted"] == 2 and client.usage()["s"]["retries"] == 4
    chat.mode = "logprobs"  # back up: a rerun (a new job: its own failure budget) asks again, P(yes) = 0.8 / 1.0
    with ScoreCache(tmp_path / "scores.sqlite") as cache, client_for(chat.base_url) as client:
        scorer = load_scorer(llm_spec(scoring="logprobs"), llm_client=client, cache=cache, stage="s")
        assert scorer.score(["q", "q"], ["a", "b"]) == pytest.approx([0.8, 0.8], abs=1e-3)
        assert cache.count() == 2


def test_auto_falls_back_to_grades_without_logprobs_and_remembers_it(chat, tmp_path):
    chat.mode = "no-logprobs"
    with ScoreCache(tmp_path / "scores.sqlite") as cache, client_for(chat.base_url) as client:
        scorer = load_scorer(llm_spec(), llm_client=client, cache=cache)
        assert scorer.score(["q"], ["d"]) == [3.0]
        assert scorer.identity()["method"] == "grade"
        assert [bool(b.get("logprobs")) for b in chat.bodies] == [True, False]  # one probe, then the grade
    with ScoreCache(tmp_path / "scores.sqlite") as cache, client_for(chat.base_url) as client:
        assert load_scorer(llm_spec(), llm_client=client, cache=cache).score(["q"], ["d"]) == [3.0]
        assert requests_made(client) == 0


def test_a_rejected_logprobs_parameter_also_means_grades(chat):
    chat.mode = "reject-logprobs"
    with client_for(chat.base_url) as client:
        assert load_scorer(llm_spec(), llm_client=client).score(["q"], ["d"]) == [3.0]


def test_logprobs_required_but_not_given_names_the_key(chat):
    chat.mode = "no-logprobs"
    with client_for(chat.base_url) as client, pytest.raises(ScorerError, match=r"scorers\.judge\.scoring: grade"):
        load_scorer(llm_spec(scoring="logprobs"), llm_client=client).score(["q"], ["d"])


def test_the_probe_during_an_outage_stops_instead_of_guessing(chat):
    chat.mode = "500"
    with client_for(chat.base_url) as client, pytest.raises(ScorerUnavailable, match=r"scorers\.judge\.scoring"):
        load_scorer(llm_spec(), llm_client=client).score(["q"], ["d"])


def test_a_refused_key_is_a_config_error(chat):
    chat.mode = "401"
    with client_for(chat.base_url) as client, pytest.raises(LLMRequestError, match="llm.api_key_env"):
        load_scorer(llm_spec(scoring="logprobs"), llm_client=client).score(["q"], ["d"])
