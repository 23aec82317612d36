"""Mean-bias renormalization of text embeddings (R1, R2), as pure functions.

Source: "Correcting Mean Bias in Text Embeddings: A Refined Renormalization with
Training-Free Improvements on MMTEB" (``shared/papers/mean-bias-renormalization.txt``).
Every embedding decomposes as ``e = mu + e_signal`` (Eq. 2) where ``mu``, the mean
embedding of a large text collection (Eqs. 1, 5), is nearly the same for all
texts. Removing it makes the outputs more isotropic and, in the paper's MMTEB
results, helps retrieval most (Sec. 3.2). With ``mu_hat = mu / ||mu||`` (Eq. 6):

* R1 (Eq. 3): ``e' = (e - mu) / ||e - mu||`` -- subtract the mean, renormalise to unit length;
* R2 (Eq. 4): ``e' = (e - <e, mu_hat> mu_hat) / ||e - <e, mu_hat> mu_hat||`` -- remove the component of ``e``
  along ``mu`` and renormalise.

Both end with a normalisation to unit length, so inner-product search on the
result is cosine search. Sec. 2 (Eqs. 7-11) shows that R2 cancels, to first
order, the component of the mean's estimation error parallel to ``mu`` while R1
keeps it, which is why R2 is expected (and in Sec. 3.2 observed) to be better.
The paper assumes unit-length embeddings (Sec. 1, footnote 1); we estimate and
apply the mean on the vectors exactly as the encoder stored them (unit length
when the model entry has ``normalize: true``), since that is the space searched.

Which collection estimates ``mu``
---------------------------------
One mean per model (the paper's single ``mu``), applied to both queries and
documents. The paper estimates it on 100,000 sentences of 64-512 characters
sampled from a Wikipedia snapshot that is *disjoint from all evaluation data*
(Sec. 3.1, "Computation of mu"). Do the same here: set ``renorm_collection`` to
a text collection that shares no text with any evaluated corpus or query set --
e.g. sentences of SQuAD v1.1 *train* articles for the SQuAD-dev-based
benchmarks (train and dev articles are disjoint; note that XQuAD is drawn from
SQuAD dev and therefore is NOT disjoint from them). Encode it with the model's
document role.

Why disjoint: estimating ``mu`` on the evaluated corpus makes the
representation of every document depend on the test collection itself
(a transductive statistic of the test data). That is leakage: the gain would
partly come from knowing the test distribution, would change when the corpus
changes, and would not be reproducible for a new corpus -- and in PosIR the
corpus is built from the very documents whose positional effects we measure,
so a corpus-estimated mean would also absorb corpus-specific (including
position-specific) structure. The paper guards against exactly this
("we ensure that the evaluation data are not used in this computation").

Workflow use: :func:`estimate_mean` on the renorm collection's embeddings,
:func:`save_mean` next to them; at search time :func:`load_mean` and
:func:`renormalize` both the query and the document matrix before the
inner-product search (:func:`apply_to_search_inputs`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from posir.models.declarations.spec import ModelSpec

_EPS = 1e-12


def estimate_mean(embeddings: np.ndarray) -> np.ndarray:
    """``mu = (1/N) sum_i f(x_i)`` over a collection (Eqs. 1 and 5), accumulated in float64."""
    matrix = np.asarray(embeddings)
    if matrix.ndim != 2 or matrix.shape[0] == 0:
        raise ValueError(f"need a non-empty (n_texts, dim) matrix to estimate the mean, got shape {matrix.shape}")
    return matrix.astype(np.float64).mean(axis=0)


def _unit_rows(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.maximum(norms, _EPS)


def _as_matrix(embeddings: np.ndarray, mean: np.ndarray) -> tuple[np.ndarray, np.ndarray, bool]:
    vectors = np.asarray(embeddings, dtype=np.float64)
    single = vectors.ndim == 1
    matrix = vectors[None, :] if single else vectors
    mu = np.asarray(mean, dtype=np.float64)
    if mu.ndim != 1 or matrix.ndim != 2 or matrix.shape[1] != mu.shape[0]:
        raise ValueError(f"embeddings of shape {vectors.shape} do not match a mean vector of shape {mu.shape}")
    return matrix, mu, single


def renormalize_r1(embeddings: np.ndarray, mean: np.ndarray) -> np.ndarray:
    """R1, Eq. 3: ``(e - mu) / ||e - mu||`` row-wise; float32, same shape as ``embeddings``."""
    matrix, mu, single = _as_matrix(embeddings, mean)
    out = _unit_rows(matrix - mu).astype(np.float32)
    return out[0] if single else out


def renormalize_r2(embeddings: np.ndarray, mean: np.ndarray) -> np.ndarray:
    """R2, Eq. 4 with Eq. 6: remove the projection on ``mu_hat = mu/||mu||`` and renormalise."""
    matrix, mu, single = _as_matrix(embeddings, mean)
    norm = float(np.linalg.norm(mu))
    if norm < _EPS:
        raise ValueError("the mean vector is zero, so its direction mu_hat (Eq. 6) is undefined; R2 cannot be applied")
    mu_hat = mu / norm
    projected = matrix - np.outer(matrix @ mu_hat, mu_hat)
    out = _unit_rows(projected).astype(np.float32)
    return out[0] if single else out


def renormalize(embeddings: np.ndarray, mean: np.ndarray, method: str) -> np.ndarray:
    """Apply ``method`` ("r1" or "r2", the ``renorm`` key of a model entry)."""
    if method == "r1":
        return renormalize_r1(embeddings, mean)
    if method == "r2":
        return renormalize_r2(embeddings, mean)
    raise ValueError(f"renorm method must be 'r1' or 'r2', not '{method}'")


# --- storage -----------------------------------------------------------------


@dataclass(frozen=True)
class MeanVector:
    """A stored mean embedding and where it came from."""

    vector: np.ndarray
    collection: str
    n_texts: int
    model: str

    @property
    def norm(self) -> float:
        """``||mu||``: the paper links larger norms to larger renormalization gains (Sec. 3.2, Fig. 2)."""
        return float(np.linalg.norm(self.vector))


def mean_path(embeddings_path: Path) -> Path:
    """Where the mean of an embeddings matrix is stored: ``<name>.mean.npy`` next to ``<name>.npy``."""
    path = Path(embeddings_path)
    return path.with_name(path.stem + ".mean.npy")


def save_mean(path: Path, mean: np.ndarray, *, collection: str, n_texts: int, model: str) -> None:
    """Write ``mean`` as float64 ``.npy`` and its provenance as a ``.json`` sidecar."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    vector = np.asarray(mean, dtype=np.float64)
    np.save(path, vector)
    meta = {
        "model": model,
        "collection": collection,
        "n_texts": int(n_texts),
        "dim": int(vector.shape[0]),
        "norm": float(np.linalg.norm(vector)),
    }
    path.with_suffix(".json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")


def load_mean(path: Path) -> MeanVector:
    path = Path(path)
    vector = np.load(path)
    meta_path = path.with_suffix(".json")
    if not meta_path.exists():
        raise FileNotFoundError(f"{meta_path}: provenance of mean vector {path} is missing; re-run the mean step")
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    if vector.ndim != 1 or vector.shape[0] != meta.get("dim"):
        raise ValueError(
            f"{path}: mean vector of shape {vector.shape} does not match its sidecar (dim {meta.get('dim')})"
        )
    return MeanVector(vector=vector, collection=meta["collection"], n_texts=int(meta["n_texts"]), model=meta["model"])


def check_disjoint(
    mean: MeanVector, evaluated_keys: Sequence[str], collection_keys: Sequence[str], evaluated_name: str
) -> None:
    """Fail if the mean's collection shares keys with an evaluated text set (leakage, see module docstring).

    Keys are whatever identifies provenance at the granularity of leakage -- for
    the SQuAD-based benchmarks, article titles (a long document concatenates
    paragraphs, so exact text comparison would miss shared sentences).
    """
    shared = set(evaluated_keys) & set(collection_keys)
    if shared:
        raise ValueError(
            f"renorm mean of model '{mean.model}' was estimated on '{mean.collection}', which shares "
            f"{len(shared)} key(s) with '{evaluated_name}' (e.g. {sorted(shared)[:3]}); "
            "estimate it on a disjoint collection (renorm_collection in config.yaml)"
        )


def apply_to_search_inputs(
    queries: np.ndarray, documents: np.ndarray, mean: np.ndarray, method: str
) -> tuple[np.ndarray, np.ndarray]:
    """Renormalise query and document matrices with the same mean before inner-product search."""
    return renormalize(queries, mean, method), renormalize(documents, mean, method)


# --- what the workflow calls ---------------------------------------------------


def write_collection_mean(model: str, collection: str, embeddings_path: Path, out_path: Path | None = None) -> Path:
    """Estimate ``mu`` from the renorm collection's cached embeddings and store it (default: next to them)."""
    from posir.results.embeddings import load_embeddings

    ids, vectors, _ = load_embeddings(Path(embeddings_path))
    path = Path(out_path) if out_path is not None else mean_path(Path(embeddings_path))
    save_mean(path, estimate_mean(vectors), collection=collection, n_texts=len(ids), model=model)
    return path


def search_vectors(
    spec: ModelSpec,
    queries: np.ndarray,
    documents: np.ndarray,
    mean_file: Path | None,
    embedding_model: str | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Query and document matrices as the search should see them: unchanged, or renormalised per ``spec.renorm``.

    ``embedding_model`` names the entry whose embeddings (and mean) are used, when
    this entry shares another's (``embeddings_from``); by default the entry itself.
    """
    if spec.renorm is None:
        return queries, documents
    if mean_file is None:
        raise ValueError(
            f"model '{spec.name}': renorm: {spec.renorm} needs the mean vector of "
            f"'{spec.renorm_collection}'; pass its .mean.npy to the search step"
        )
    mean = load_mean(Path(mean_file))
    if mean.model != (embedding_model or spec.name) or mean.collection != spec.renorm_collection:
        raise ValueError(
            f"model '{spec.name}': {mean_file} holds the mean of model '{mean.model}' on '{mean.collection}', "
            f"but the config asks for '{spec.renorm_collection}'; re-run the mean step"
        )
    return apply_to_search_inputs(queries, documents, mean.vector, spec.renorm)
