"""The rerank-api backend against a local HTTP server that serves a real scorer (MiniLM cosine).

The server speaks the Cohere (``/v2/rerank``), Jina (``/v1/rerank``) and
text-embeddings-inference (``/rerank``) protocols, returns results sorted by
score as real services do, checks the bearer key, and injects faults on
request: 5xx, 429 with Retry-After, a 200 that is not JSON, a wrong number of
results, and a reply slower than the client's timeout.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

from posir.scorers import CachedScorer, ScoreCache, ScorerError, ScorerSpec, load_scorer
from posir.scorers.rerank_api import RerankAPIError, RerankAPIScorer
from tests._http import send_bytes, send_json, serving

KEY_ENV = "POSIR_TEST_RERANK_KEY"
KEY = "sk-test-4f1c9b2e"
QUERY = "Which team won Super Bowl 50?"
DOCUMENTS = [
    "The Denver Broncos defeated the Carolina Panthers 24-10 to win Super Bowl 50.",
    "Bread is made from flour, water, yeast and salt.",
    "The game was played at Levi's Stadium in Santa Clara, California.",
    "Photosynthesis turns light into chemical energy.",
    "Beyonce and Bruno Mars performed at the halftime show.",
]


class RerankServer:
    """A /rerank server over MiniLM cosine; ``faults`` are consumed one per request, ``always`` never is."""

    def __init__(self, encode) -> None:
        self.encode = encode
        self.faults: list[str] = []
        self.always: str | None = None
        self.requests: list[dict] = []
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # keep the test output clean
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with server.lock:
                    server.requests.append(
                        {"path": self.path, "body": body, "authorization": self.headers.get("Authorization")}
                    )
                    fault = server.always or (server.faults.pop(0) if server.faults else None)
                if self.headers.get("Authorization") != f"Bearer {KEY}":
                    return self.reply(401, {"message": "invalid api token"})
                if self.path not in ("/v2/rerank", "/v1/rerank", "/rerank"):
                    return self.reply(404, {"message": f"no route {self.path}"})
                if fault == "500":
                    return self.reply(500, {"message": "internal error"})
                if fault == "429":
                    return self.reply(429, {"message": "slow down"}, {"Retry-After": "0.3"})
                if fault == "slow":
                    time.sleep(6.0)
                if fault == "not-json":
                    return self.reply_raw(200, b"<html>upstream hiccup</html>")
                documents = body["texts"] if self.path == "/rerank" else body["documents"]
                scores = server.cosines(body["query"], documents)
                order = sorted(range(len(documents)), key=lambda i: -scores[i])
                if fault == "short":
                    order = order[:-1]
                if self.path == "/rerank":
                    return self.reply(200, [{"index": i, "score": scores[i]} for i in order])
                return self.reply(
                    200, {"id": "r1", "results": [{"index": i, "relevance_score": scores[i]} for i in order]}
                )

            def reply(self, status: int, payload, headers: dict | None = None) -> None:
                send_json(self, status, payload, headers)

            def reply_raw(self, status: int, data: bytes, headers: dict | None = None) -> None:
                send_bytes(self, status, data, headers)

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.http.server_address[1]}"

    def cosines(self, query: str, documents: list[str]) -> list[float]:
        vectors = self.encode([query, *documents])
        return [float(v) for v in vectors[1:] @ vectors[0]]


@pytest.fixture(scope="module")
def encode(minilm_path):
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(minilm_path, device="cpu")
    return lambda texts: np.asarray(
        model.encode(texts, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)
    )


@pytest.fixture
def server(encode) -> Iterator[RerankServer]:
    served = RerankServer(encode)
    with serving(served.http):
        yield served


@pytest.fixture(autouse=True)
def api_key(monkeypatch):
    monkeypatch.setenv(KEY_ENV, KEY)


def spec(server: RerankServer, protocol: str = "cohere", **extra) -> ScorerSpec:
    entry = {
        "backend": "rerank-api",
        "protocol": protocol,
        "base_url": server.base_url,
        "api_key_env": KEY_ENV,
        "max_retries": 3,
        "backoff_base": 0.01,
        "backoff_max": 1.0,
        "timeout": 5,
    }
    if protocol != "tei":
        entry["model"] = "minilm-cosine"
    return ScorerSpec.from_config("api", {**entry, **extra})


@pytest.mark.parametrize("protocol, path", [("cohere", "/v2/rerank"), ("jina", "/v1/rerank"), ("tei", "/rerank")])
def test_each_protocol_returns_the_served_scores_in_input_order(server, encode, protocol, path):
    scorer = load_scorer(spec(server, protocol, batch_size=2))
    scores = scorer.score([QUERY] * 5 + ["Who performed at halftime?"], DOCUMENTS + [DOCUMENTS[4]])
    expected = server.cosines(QUERY, DOCUMENTS) + server.cosines("Who performed at halftime?", [DOCUMENTS[4]])
    assert scores == pytest.approx(expected, abs=1e-6)
    assert int(np.argmax(scores[:5])) == 0  # the answer outranks the rest
    assert [r["path"] for r in server.requests] == [path] * 4  # 5 documents in batches of 2, then the other query
    first = server.requests[0]
    assert first["authorization"] == f"Bearer {KEY}"
    if protocol == "tei":
        assert first["body"] == {
            "query": QUERY,
            "texts": DOCUMENTS[:2],
            "raw_scores": False,
            "truncate": True,
            "return_text": False,
        }
    else:
        assert first["body"]["model"] == "minilm-cosine" and first["body"]["top_n"] == 2


def test_server_errors_are_retried_until_an_answer(server):
    server.faults = ["500", "500", "not-json"]
    scorer = load_scorer(spec(server))
    assert scorer.score([QUERY], DOCUMENTS[:1]) == pytest.approx(server.cosines(QUERY, DOCUMENTS[:1]), abs=1e-6)
    assert scorer.usage == {"requests": 4, "retries": 3}


def test_retry_after_is_honoured(server):
    server.faults = ["429"]
    waits: list[float] = []
    scorer = RerankAPIScorer(spec(server), sleep=waits.append)
    assert scorer.score([QUERY], DOCUMENTS[:1])[0] is not None
    assert len(waits) == 1 and 0.3 <= waits[0] <= 1.0  # at least Retry-After, at most backoff_max


def test_a_persistent_outage_gives_no_scores_and_caches_nothing(server, tmp_path):
    server.always = "500"
    with ScoreCache(tmp_path / "scores.sqlite") as cache:
        scorer = load_scorer(spec(server), cache=cache)
        assert isinstance(scorer, CachedScorer)
        assert scorer.score([QUERY] * 2, DOCUMENTS[:2]) == [None, None]
        assert cache.count() == 0 and scorer.counts.as_dict() == {"hits": 0, "computed": 0, "failed": 2}
        assert scorer.scorer.usage == {"requests": 4, "retries": 3, "failed_pairs": 2, "retries_exhausted": 1}
        server.always = None  # the endpoint is back: the pairs are asked again and kept
        assert None not in scorer.score([QUERY] * 2, DOCUMENTS[:2])
        assert cache.count() == 2
        rerun = load_scorer(spec(server), cache=cache)
        before = len(server.requests)
        rerun.score([QUERY] * 2, DOCUMENTS[:2])
        assert len(server.requests) == before and rerun.counts.hits == 2


def test_a_200_that_is_never_json_is_an_outage_not_a_score(server):
    server.always = "not-json"
    scorer = load_scorer(spec(server, max_retries=1))
    assert scorer.score([QUERY], DOCUMENTS[:1]) == [None]


def test_a_timeout_is_retried(server):
    server.faults = ["slow"]
    scorer = load_scorer(spec(server, timeout=3.0))
    assert scorer.score([QUERY], DOCUMENTS[:1])[0] is not None
    assert scorer.usage["retries"] == 1


def test_a_wrong_number_of_results_names_the_protocol(server):
    server.faults = ["short"]
    with pytest.raises(RerankAPIError, match=r"1 results for 2 documents.*scorers\.api\.protocol.*scorers\.api\.path"):
        load_scorer(spec(server)).score([QUERY] * 2, DOCUMENTS[:2])


def test_a_refused_key_names_the_variable_never_the_key(server, monkeypatch):
    monkeypatch.setenv(KEY_ENV, "sk-wrong-key-1234")
    with pytest.raises(RerankAPIError, match=rf"HTTP 401.*{KEY_ENV} named by scorers\.api\.api_key_env") as error:
        load_scorer(spec(server)).score([QUERY], DOCUMENTS[:1])
    assert "sk-wrong-key-1234" not in str(error.value)
    scorer = RerankAPIScorer(spec(server))
    assert "sk-wrong-key-1234" not in repr(scorer) and "sk-wrong" not in json.dumps(scorer.identity())


def test_a_missing_key_and_a_wrong_path_are_config_errors(server, monkeypatch):
    with pytest.raises(RerankAPIError, match=r"404.*scorers\.api\.base_url, scorers\.api\.path"):
        load_scorer(spec(server, path="/v3/rerank")).score([QUERY], DOCUMENTS[:1])
    monkeypatch.delenv(KEY_ENV)
    with pytest.raises(ScorerError, match=rf"environment variable {KEY_ENV} \(named by scorers\.api\.api_key_env\)"):
        load_scorer(spec(server))
