"""The default run's GPU part on a GPU that cannot hold the whole workflow, and its way back into a CPU run.

configs/gpu.yaml moves the sentence-transformers entries (MiniLM, me5-small and what shares their embeddings or
windows) to cuda; USE and BM25 stay CPU engines. A lent GPU machine may have no network, no Snakemake and a few
minutes, so the GPU does exactly that part: every text a GPU entry of a finished CPU run encoded, through posir's
encoding service (:mod:`posir.encoding`: its encoder and length-grouped batching), in each dtype asked for. The
vectors of the GPU config's dtype come back and are filed into a copy of the CPU run's embedding cache under the
identity the GPU config's entries look up, with the windows and window budgets of its chunked entries; the
workflow then runs the GPU config there (``--configfile configs/gpu.yaml``), its encode jobs served by the cache
as a GPU job's output would be, and ``python -m perf.gpu_report entries`` gives each entry's per-query nDCG@10
difference to the CPU run.

    posir gpu-encode texts RESULTS DIR            # here: the texts, the GPU entries, a CPU sample
    posir gpu-encode encode DIR OUT [--threads N] # on the GPU: timings, utilisation, vectors
    posir gpu-encode import OUT DIR RESULTS_COPY  # here: the vectors into the copy's cache

(``python -m posir.tools.gpu_encode`` runs it as well.) ``encode`` refuses to run unless the packages the encoding
identity names (the backend and the model package) are installed at the CPU run's versions; the identity itself
also hashes our code's syntax tree, whose dump differs between Python versions, so ``import`` files the vectors
under this machine's identity, and refuses when that is no longer the one ``texts`` wrote down.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import gzip
import json
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

CONFIGS = ("config.yaml", "configs/gpu.yaml")
DTYPES = ("float32", "bfloat16", "float16")
FILE_BYTES = 15_000_000  # per returned file: the device tool brings back files of at most 16 MB
SAMPLE = 2_000  # texts whose CPU vectors travel along to compare each dtype with
CACHE_FILE = "embedding-cache.sqlite"


def merged_config(repo: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """The raw default config, and the same with configs/gpu.yaml merged over it as snakemake merges it."""
    import yaml
    from snakemake.utils import update_config

    default = yaml.safe_load((repo / CONFIGS[0]).read_text())
    gpu = copy.deepcopy(default)
    update_config(gpu, yaml.safe_load((repo / CONFIGS[1]).read_text()))
    return default, gpu


def gpu_entries(repo: Path) -> dict[str, tuple[Any, Any]]:
    """name -> (CPU spec, GPU spec) of each entry configs/gpu.yaml puts on cuda that encodes texts itself."""
    from posir.config import load_config

    default, gpu = (load_config(raw) for raw in merged_config(repo))
    return {
        name: (default.models[name], spec)
        for name, spec in gpu.models.items()
        if spec.uses_gpu and not spec.embeddings_from
    }


def _text_set_file(results: Path, text_set: str, kind: str) -> Path:
    from posir.results.paths import ResultPaths

    paths = ResultPaths(str(results))
    collection = Path(paths.collection_outputs(text_set)["corpus"])
    return collection if collection.is_file() else Path(paths.benchmark_file(text_set, f"{kind}.jsonl"))


def collect_texts(repo: Path, results: Path, out: Path) -> None:
    """Every (identity, role, text) the GPU entries encoded in ``results``, once, and a CPU sample of them."""
    from posir import benchmark as fmt
    from posir.embedding_cache import EmbeddingCache
    from posir.encoding import EncodingService
    from posir.models.identity import text_key, whole_text_identity, window_spec

    cache = results / CACHE_FILE
    groups: dict[tuple[str, str], dict[str, str]] = {}  # (gpu identity, role) -> text -> cpu key
    specs: dict[str, dict[str, Any]] = {}
    versions: dict[str, dict[str, str]] = {}
    windows: list[dict[str, Any]] = []
    for name, (cpu, gpu) in gpu_entries(repo).items():
        # the GPU entry's identity as its encode jobs key texts (a chunked entry's: a window's)
        gpu_id = whole_text_identity(gpu)
        with EncodingService(cpu, cache, threads=1) as service:
            sets = (results / "embeddings" / name).glob("*/*.npy")
            for kind_file in sorted(p for p in sets if p.stem in ("corpus", "queries")):
                text_set, kind = kind_file.parent.name, kind_file.stem
                path = _text_set_file(results, text_set, kind)
                if kind == "corpus":
                    texts, role = [d.text for d in fmt.read_corpus(path)], "document"
                else:
                    texts, role = [q.text for q in fmt.read_queries(path)], "query"
                if gpu.is_chunked and role == "document":
                    window, stride = service.window_size(role, cpu.window_tokens, cpu.stride_tokens, f"models.{name}")
                    spans = service.window_spans(texts, role, window, stride)
                    windows.append(
                        {
                            "text_set": text_set,
                            "identity": gpu_id,
                            "cpu_identity": service.identity,
                            "window": window,
                            "stride": stride,
                        }
                    )
                    texts = [t[s:e] for t, doc in zip(texts, spans) for s, e in doc]
                specs[gpu_id] = (window_spec(gpu) if gpu.is_chunked else gpu).model_dump()
                versions[gpu_id] = _versions(gpu)
                group = groups.setdefault((gpu_id, role), {})
                group.update((t, text_key(service.identity, role, t)) for t in texts if t not in group)
    rows = [(identity, role, text, key) for (identity, role), texts in groups.items() for text, key in texts.items()]
    out.mkdir(parents=True, exist_ok=True)
    with gzip.open(out / "texts.jsonl.gz", "wt", encoding="utf-8") as handle:
        for identity, role, text, _ in rows:
            handle.write(json.dumps({"identity": identity, "role": role, "text": text}, ensure_ascii=False) + "\n")
    sample = np.sort(np.random.default_rng(0).choice(len(rows), size=min(SAMPLE, len(rows)), replace=False))
    with EmbeddingCache(cache) as store:
        found = store.get_many([rows[i][3] for i in sample])
    keep = [i for i in sample if rows[i][3] in found]
    np.savez(out / "cpu-sample.npz", rows=np.array(keep), vectors=np.stack([found[rows[i][3]][0] for i in keep]))
    manifest = {"specs": specs, "windows": windows, "texts": len(rows), "versions": versions}
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1, default=str))
    by_group = {f"{identity[:12]} {role}": len(t) for (identity, role), t in groups.items()}
    print(f"{len(rows)} distinct texts {by_group}; {len(keep)} with a CPU vector in the sample -> {out}")


def _versions(spec: Any) -> dict[str, str]:
    """The installed packages an encoding identity names (posir.models.identity.encoding_identity)."""
    from importlib.metadata import version

    return {p: version(p) for p in (spec.capabilities.distribution, spec.model_package) if p}


class UtilisationSampler:
    """GPU utilisation and memory, sampled through NVML every ``interval`` seconds while it runs."""

    def __init__(self, interval: float = 0.1) -> None:
        import pynvml

        pynvml.nvmlInit()
        self._nvml, self._handle = pynvml, pynvml.nvmlDeviceGetHandleByIndex(0)
        self._interval, self._stop = interval, threading.Event()
        self.samples: list[tuple[int, int]] = []
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            rates = self._nvml.nvmlDeviceGetUtilizationRates(self._handle)
            memory = self._nvml.nvmlDeviceGetMemoryInfo(self._handle)
            self.samples.append((int(rates.gpu), int(memory.used)))
            time.sleep(self._interval)

    def __enter__(self) -> UtilisationSampler:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()

    def summary(self) -> dict[str, float]:
        if not self.samples:
            return {}
        busy = [u for u, _ in self.samples]
        return {
            "gpu_util_mean_pct": float(np.mean(busy)),
            "gpu_util_median_pct": float(np.median(busy)),
            "gpu_memory_peak_mib": max(m for _, m in self.samples) / 2**20,
        }


def _sampler(device: str) -> Any:
    if not device.startswith("cuda"):
        return None
    try:
        return UtilisationSampler()
    except Exception as error:  # noqa: BLE001 - utilisation is a figure, not a requirement
        print(f"no GPU utilisation figures: {error}")
        return None


def _read_texts(directory: Path, limit: int = 0) -> list[dict[str, str]]:
    with gzip.open(directory / "texts.jsonl.gz", "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle][: limit or None]


def encode_on_device(
    directory: Path, out: Path, threads: int, device: str, dtypes: list[str], batch_sizes: list[int], limit: int
) -> None:
    """Each dtype: load, token counts, length-grouped encode of every text (posir's path), timed and compared;
    then the GPU config's dtype again at each of ``batch_sizes`` (timed: the config's batch size travels)."""
    import torch

    from posir.encoding import EncodingService
    from posir.models.declarations.spec import ModelSpec
    from posir.models.registry import encode_by_length

    manifest = json.loads((directory / "manifest.json").read_text())
    records = _read_texts(directory, limit)
    sample = np.load(directory / "cpu-sample.npz")
    sample_rows, cpu_vectors = sample["rows"], sample["vectors"]
    inside = sample_rows < len(records)
    sample_rows, cpu_vectors = sample_rows[inside], cpu_vectors[inside]
    groups: dict[tuple[str, str], list[int]] = {}
    for index, record in enumerate(records):
        groups.setdefault((record["identity"], record["role"]), []).append(index)
    report: dict[str, Any] = {
        "device": torch.cuda.get_device_name(0) if device.startswith("cuda") else device,
        "torch": torch.__version__,
        "texts": len(records),
        "runs": [],
    }
    out.mkdir(parents=True, exist_ok=True)
    returned: np.ndarray | None = None
    # The identity itself cannot be compared across machines: it hashes our code's syntax tree, whose dump
    # differs between Python versions. What it names besides the code are these versions.
    for identity, planned in manifest["specs"].items():
        found, wanted = _versions(ModelSpec.model_validate(planned)), manifest["versions"][identity]
        if found != wanted:
            raise SystemExit(f"{planned['name']}: installed {found}, the CPU run had {wanted}: install those here")
    returned_dtype = next(iter(manifest["specs"].values()))["dtype"] or "float32"
    for dtype, batch_size in [(d, None) for d in dtypes] + [(returned_dtype, b) for b in batch_sizes]:
        vectors = np.zeros((len(records), 0), dtype=np.float32)
        tokens = np.zeros(len(records), dtype=np.int32)
        seconds = {"load": 0.0, "tokenize": 0.0, "encode": 0.0}
        sampler = _sampler(device)
        with sampler if sampler is not None else contextlib.nullcontext():
            for (identity, role), members in groups.items():
                planned = manifest["specs"][identity]
                batch = {"batch_size": batch_size} if batch_size else {}
                spec = ModelSpec.model_validate({**planned, "device": device, "dtype": dtype, **batch})
                start = time.perf_counter()
                encoder = EncodingService(spec, threads=threads, keyed="entry").encoder  # no cache on this machine
                seconds["load"] += time.perf_counter() - start
                texts = [records[i]["text"] for i in members]
                start = time.perf_counter()
                counts = encoder.input_tokens(texts, role)
                seconds["tokenize"] += time.perf_counter() - start
                start = time.perf_counter()
                encoded = encode_by_length(encoder, texts, role, counts)
                seconds["encode"] += time.perf_counter() - start
                if vectors.shape[1] == 0:
                    vectors = np.zeros((len(records), encoded.shape[1]), dtype=np.float32)
                vectors[members], tokens[members] = encoded, counts
        cosine = np.sum(vectors[sample_rows] * cpu_vectors, axis=1)
        run = {
            "dtype": dtype,
            "batch_size": spec.batch_size,
            **{f"{k}_s": round(v, 2) for k, v in seconds.items()},
            "texts_per_s": round(len(records) / seconds["encode"], 1),
            "tokens_per_s": round(float(tokens.sum()) / seconds["encode"], 1),
            "input_tokens": int(tokens.sum()),
            "cpu_sample": int(len(sample_rows)),
            "max_abs_diff_to_cpu": float(np.abs(vectors[sample_rows] - cpu_vectors).max()) if len(cosine) else None,
            "min_cosine_to_cpu": float(cosine.min()) if len(cosine) else None,
            **(sampler.summary() if sampler is not None else {}),
        }
        if batch_size and returned is not None:
            run["max_abs_diff_to_returned"] = float(np.abs(vectors - returned).max())
        if device.startswith("cuda"):
            run["torch_max_allocated_mib"] = torch.cuda.max_memory_allocated() / 2**20
            torch.cuda.reset_peak_memory_stats()
        report["runs"].append(run)
        print(json.dumps(run), flush=True)
        if dtype == returned_dtype and not batch_size:
            returned = vectors
            _save_parts(vectors, tokens, out)
    (out / "report.json").write_text(json.dumps(report, indent=1))


def _save_parts(vectors: np.ndarray, tokens: np.ndarray, out: Path) -> None:
    """The vectors in files the device tool brings back: float16 when that loses nothing, else float32."""
    half = vectors.astype(np.float16)
    stored = half if np.array_equal(half.astype(np.float32), vectors) else vectors
    rows = FILE_BYTES // (stored.shape[1] * stored.itemsize)
    np.save(out / "tokens.npy", tokens)
    for part, first in enumerate(range(0, len(stored), rows)):
        np.save(out / f"vectors-{part}.npy", stored[first : first + rows])


def import_vectors(returned: Path, directory: Path, results: Path) -> None:
    """The returned vectors into ``results``' cache under each GPU entry's identity, through the encoding service;
    and the windows and window budget the chunked GPU entries will look up, copied from the CPU entry's."""
    from posir import benchmark as fmt
    from posir.embedding_cache import EmbeddingCache
    from posir.encoding import EncodingService
    from posir.models.declarations.spec import ModelSpec
    from posir.models.identity import text_key

    manifest = json.loads((directory / "manifest.json").read_text())
    records = _read_texts(directory)
    parts = sorted(returned.glob("vectors-*.npy"), key=lambda p: int(p.stem.split("-")[1]))
    vectors = np.concatenate([np.load(p).astype(np.float32) for p in parts])
    tokens = np.load(returned / "tokens.npy")
    if not (len(vectors) == len(tokens) == len(records)):
        raise SystemExit(f"{returned}: {len(vectors)} vectors, {len(tokens)} token counts for {len(records)} texts")
    cache = results / CACHE_FILE
    for identity, planned in manifest["specs"].items():
        # the GPU entry as its encode jobs key texts: a chunked entry's windows and queries as its window's entry
        with EncodingService(ModelSpec.model_validate(planned), cache, keyed="entry") as service:
            if service.identity != identity:
                raise SystemExit(
                    f"{directory}: the entry '{planned['name']}' is keyed {service.identity[:12]} here, not "
                    f"{identity[:12]} as when its texts were collected (the encoding code or a package changed): "
                    f"collect the texts again"
                )
            for role in ("query", "document"):
                members = [i for i, r in enumerate(records) if r["identity"] == identity and r["role"] == role]
                if members:
                    service.store([records[i]["text"] for i in members], role, vectors[members], tokens[members])
    with EmbeddingCache(cache) as store:
        for entry in manifest["windows"]:
            texts = [d.text for d in fmt.read_corpus(_text_set_file(results, entry["text_set"], "corpus"))]
            role = f"document-windows-{entry['window']}-{entry['stride']}"
            cpu_keys = [text_key(entry["cpu_identity"], role, t) for t in texts]
            spans = store.get_spans(cpu_keys)
            store.put_spans({text_key(entry["identity"], role, t): spans[k] for t, k in zip(texts, cpu_keys)})
            budget = store.window_budget(entry["cpu_identity"], "document")
            if budget is not None:
                store.set_window_budget(entry["identity"], "document", budget)
    print(f"{len(records)} vectors and the windows of {len(manifest['windows'])} corpora -> {results}")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="posir gpu-encode", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    steps = parser.add_subparsers(dest="step", required=True)
    texts = steps.add_parser("texts", help="here: the texts a finished CPU run's GPU entries encoded")
    texts.add_argument("results", type=Path)
    texts.add_argument("directory", type=Path)
    encode = steps.add_parser("encode", help="on the GPU: encode them in each dtype")
    encode.add_argument("directory", type=Path)
    encode.add_argument("out", type=Path)
    encode.add_argument("--threads", type=int, default=None)
    encode.add_argument("--device", default="cuda")
    encode.add_argument("--dtypes", nargs="+", default=list(DTYPES), choices=DTYPES)
    encode.add_argument("--batch-sizes", nargs="*", type=int, default=[], help="the config's dtype at these too")
    encode.add_argument("--limit", type=int, default=0, help="the first N texts only (a rehearsal)")
    back = steps.add_parser("import", help="here: the returned vectors into a copy of the run's cache")
    back.add_argument("returned", type=Path)
    back.add_argument("directory", type=Path)
    back.add_argument("results", type=Path)
    args = parser.parse_args(argv)
    if args.step == "texts":
        collect_texts(Path.cwd(), args.results, args.directory)
    elif args.step == "encode":
        encode_on_device(args.directory, args.out, args.threads, args.device, args.dtypes, args.batch_sizes, args.limit)
    else:
        import_vectors(args.returned, args.directory, args.results)


if __name__ == "__main__":
    main()
