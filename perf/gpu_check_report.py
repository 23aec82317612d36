"""The GPU check's figures (perf/gpu_check.sh): the workflow's encode jobs against a bare
``SentenceTransformer.encode`` of the same texts on the same device, the GPU's busy share while each ran, and the
largest difference of the workflow's vectors to the CPU's.

* the workflow's throughput: each encode job's texts over its encoding seconds (its log: the job's line of texts
  and seconds, less the model's load, which its log states), and over the job's whole time;
* the bare one: the same model folder loaded once by sentence-transformers on the device, the same texts (the
  documents and the queries) encoded with the job's batch size, timed after a warm-up batch;
* GPU busy: the mean of nvidia-smi's ``utilization.gpu`` over the samples inside each span (``--utilisation``);
* the vectors: a seeded sample of the texts encoded on the CPU by the bare model, against the workflow's.

    python -m perf.gpu_check_report RESULTS MODEL [--utilisation gpu.csv] [--out DIR] [--sample 2000]
"""

from __future__ import annotations

import argparse
import json
import re
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

LINE_TIME = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) ")
ENCODED = re.compile(r"(\d+) texts: (\d+) from the embedding cache, (\d+) encoded; ([\d.]+) s")
LOADED = re.compile(r"loaded model '[^']+' \([^)]*\) in ([\d.]+) s")


def job_spans(results: Path, model: str) -> dict[str, dict[str, Any]]:
    """Per text set kind (corpus, queries): texts, encoded, encode seconds less the load, and the span's clock."""
    spans = {}
    for log in sorted((results / "logs" / "encode_texts" / model).glob("*/*.log")):
        text = log.read_text(errors="replace")
        times = [
            datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S,%f") for m in map(LINE_TIME.match, text.splitlines()) if m
        ]
        encoded = ENCODED.search(text)
        if encoded is None or not times:
            continue
        load = sum(float(s) for s in LOADED.findall(text))
        seconds = float(encoded.group(4))
        spans[log.stem] = {
            "texts": int(encoded.group(1)),
            "encoded": int(encoded.group(3)),
            "seconds": seconds,
            "load_s": load,
            "encode_s": max(seconds - load, 1e-9),
            "start": times[0].timestamp() - seconds,
            "end": times[-1].timestamp(),
        }
    return spans


def busy(utilisation: Path | None, start: float, end: float) -> float | None:
    """Mean GPU utilisation (%) of nvidia-smi's samples in [start, end]."""
    if utilisation is None or not utilisation.is_file():
        return None
    values = []
    for line in utilisation.read_text().splitlines():
        parts = [p.strip() for p in line.split(",")]
        try:
            when = datetime.strptime(parts[0], "%Y/%m/%d %H:%M:%S.%f").timestamp()
        except ValueError:
            continue
        if start <= when <= end:
            values.append(float(parts[1]))
    return float(np.mean(values)) if values else None


def texts_of(results: Path, kind: str) -> tuple[list[str], list[str]]:
    from posir import benchmark as fmt

    folder = results / "benchmarks" / "squad-long"
    if kind == "corpus":
        documents = fmt.read_corpus(folder / fmt.CORPUS)
        return [d.doc_id for d in documents], [d.text for d in documents]
    queries = fmt.read_queries(folder / fmt.QUERIES)
    return [q.qid for q in queries], [q.text for q in queries]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", type=Path)
    parser.add_argument("model")
    parser.add_argument("--utilisation", type=Path)
    parser.add_argument("--out", type=Path, default=Path("gpu-check"))
    parser.add_argument("--sample", type=int, default=2000)
    args = parser.parse_args()

    import torch

    from posir.config import load_config
    from posir.results.embeddings import load_embeddings

    config = load_config(_merged(args.results.parent))
    spec = config.models[args.model]
    spans = job_spans(args.results, args.model)
    report: dict[str, Any] = {"model": args.model, "device": spec.device, "batch_size": spec.batch_size, "sets": {}}
    bare, cpu = (_bare_model(spec, device) for device in (spec.device, "cpu"))
    largest = 0.0
    for kind, span in spans.items():
        ids, texts = texts_of(args.results, kind)
        bare.encode(texts[: spec.batch_size], batch_size=spec.batch_size)  # warm-up
        if spec.device.startswith("cuda"):
            torch.cuda.synchronize()
        started_clock, started = time.time(), time.perf_counter()
        bare.encode(texts, batch_size=spec.batch_size, normalize_embeddings=spec.normalize, convert_to_numpy=True)
        if spec.device.startswith("cuda"):
            torch.cuda.synchronize()
        bare_s = time.perf_counter() - started
        workflow_ids, vectors, _ = load_embeddings(
            args.results / "embeddings" / args.model / "squad-long" / f"{kind}.npy"
        )
        row = {name: i for i, name in enumerate(workflow_ids)}
        sample = np.random.default_rng(0).permutation(len(ids))[: args.sample]
        reference = cpu.encode([texts[i] for i in sample], batch_size=32, normalize_embeddings=spec.normalize)
        theirs = np.stack([vectors[row[ids[i]]] for i in sample])
        difference = float(np.abs(theirs - reference).max())
        largest = max(largest, difference)
        report["sets"][kind] = {
            **{k: v for k, v in span.items() if k not in ("start", "end")},
            "workflow_texts_per_s": span["texts"] / span["encode_s"],
            "workflow_texts_per_s_with_load": span["texts"] / span["seconds"],
            "bare_s": bare_s,
            "bare_texts_per_s": len(texts) / bare_s,
            "workflow_over_bare": (span["texts"] / span["encode_s"]) / (len(texts) / bare_s),
            "gpu_busy_workflow": busy(args.utilisation, span["start"] + span["load_s"], span["end"]),
            "gpu_busy_bare": busy(args.utilisation, started_clock, started_clock + bare_s),
            "largest_difference_to_cpu": difference,
        }
    report["largest_difference_to_cpu"] = largest
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "report.json").write_text(json.dumps(report, indent=1))
    lines = [
        f"{args.model} on {spec.device}, batch {spec.batch_size}",
        "",
        "| texts | n | workflow texts/s | bare texts/s | workflow / bare | GPU busy (workflow, bare) | max |v - CPU| |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for kind, s in report["sets"].items():
        busy_text = ", ".join("-" if b is None else f"{b:.0f} %" for b in (s["gpu_busy_workflow"], s["gpu_busy_bare"]))
        lines.append(
            f"| {kind} | {s['texts']} | {s['workflow_texts_per_s']:.0f} | {s['bare_texts_per_s']:.0f} | "
            f"{s['workflow_over_bare']:.2f} | {busy_text} | {s['largest_difference_to_cpu']:.1e} |"
        )
    (args.out / "report.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


def _bare_model(spec: Any, device: str) -> Any:
    """The entry's folder as sentence-transformers loads it, at the entry's length and dtype (the workflow computes
    a float16 folder in the dtype the entry names)."""
    import torch
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(spec.resolve_model_path(), device=device)
    model.max_seq_length = spec.max_seq_length
    if spec.dtype in ("float32", "float16", "bfloat16"):
        model.to(getattr(torch, spec.dtype))
    return model.eval()


def _merged(workdir: Path) -> dict[str, Any]:
    """config.yaml with the check's overlay over it, as Snakemake merged them."""
    import yaml
    from snakemake.utils import update_config

    merged = yaml.safe_load((workdir / "config.yaml").read_text())
    update_config(merged, yaml.safe_load((workdir / "gpu_check.yaml").read_text()))
    return merged


if __name__ == "__main__":
    main()
