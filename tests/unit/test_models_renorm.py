"""R1/R2 renormalization (mean-bias paper Eqs. 3-6) against a hand-computed 3-d example."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from posir.models import renorm

# Collection: the three unit basis vectors, so mu = (1/3, 1/3, 1/3) (Eq. 5)
# and mu_hat = (1, 1, 1) / sqrt(3) (Eq. 6).
COLLECTION = np.eye(3, dtype=np.float32)
Q = np.array([0.6, 0.8, 0.0], dtype=np.float32)  # a unit vector

# R1 (Eq. 3): q - mu = (9/15 - 5/15, 12/15 - 5/15, -5/15) = (4, 7, -5)/15, ||.||^2 = 90/225
R1_EXPECTED = np.array([4.0, 7.0, -5.0]) / np.sqrt(90.0)
# R2 (Eq. 4): <q, mu_hat> mu_hat = (1.4/3)(1, 1, 1) = (7/15)(1, 1, 1);
# q - that = (2, 5, -7)/15, ||.||^2 = 78/225
R2_EXPECTED = np.array([2.0, 5.0, -7.0]) / np.sqrt(78.0)


def test_mean_is_the_average_embedding() -> None:
    np.testing.assert_allclose(renorm.estimate_mean(COLLECTION), [1 / 3, 1 / 3, 1 / 3], atol=1e-12)


def test_r1_matches_hand_computation() -> None:
    mu = renorm.estimate_mean(COLLECTION)
    np.testing.assert_allclose(renorm.renormalize_r1(Q, mu), R1_EXPECTED, atol=1e-6)


def test_r2_matches_hand_computation_and_is_orthogonal_to_mean() -> None:
    mu = renorm.estimate_mean(COLLECTION)
    out = renorm.renormalize_r2(Q, mu)
    np.testing.assert_allclose(out, R2_EXPECTED, atol=1e-6)
    assert abs(float(out @ mu)) < 1e-6  # the component along mu is removed


def test_matrix_form_row_wise_unit_length_and_float32() -> None:
    mu = renorm.estimate_mean(COLLECTION)
    batch = np.vstack([Q, -Q, [0.0, 0.0, 1.0]]).astype(np.float32)
    for method, first in (("r1", R1_EXPECTED), ("r2", R2_EXPECTED)):
        out = renorm.renormalize(batch, mu, method)
        assert out.dtype == np.float32 and out.shape == batch.shape
        np.testing.assert_allclose(out[0], first, atol=1e-6)
        np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-6)


def test_r2_is_invariant_to_the_scale_of_the_mean_but_r1_is_not() -> None:
    mu = renorm.estimate_mean(COLLECTION)
    np.testing.assert_allclose(renorm.renormalize_r2(Q, 5 * mu), renorm.renormalize_r2(Q, mu), atol=1e-6)
    assert not np.allclose(renorm.renormalize_r1(Q, 5 * mu), renorm.renormalize_r1(Q, mu), atol=1e-3)


def test_errors() -> None:
    with pytest.raises(ValueError, match="undefined"):
        renorm.renormalize_r2(Q, np.zeros(3))
    with pytest.raises(ValueError, match="do not match"):
        renorm.renormalize_r1(Q, np.zeros(4))
    with pytest.raises(ValueError, match="'r1' or 'r2'"):
        renorm.renormalize(Q, np.ones(3), "r3")
    with pytest.raises(ValueError, match="non-empty"):
        renorm.estimate_mean(np.zeros((0, 3)))


def test_save_and_load_next_to_embeddings(tmp_path: Path) -> None:
    embeddings = tmp_path / "minilm" / "squad-train-sentences" / "corpus.npy"
    path = renorm.mean_path(embeddings)
    assert path == embeddings.with_name("corpus.mean.npy")
    mu = renorm.estimate_mean(COLLECTION)
    renorm.save_mean(path, mu, collection="squad-train-sentences", n_texts=3, model="minilm")
    loaded = renorm.load_mean(path)
    np.testing.assert_array_equal(loaded.vector, mu)
    assert (loaded.collection, loaded.n_texts, loaded.model) == ("squad-train-sentences", 3, "minilm")
    assert loaded.norm == pytest.approx(1 / np.sqrt(3))


def test_leakage_check_rejects_overlapping_collections() -> None:
    mean = renorm.MeanVector(np.ones(3), "xquad-en", 3, "minilm")
    renorm.check_disjoint(mean, ["Normans", "Amazon"], ["Oxygen"], "squad-long")
    with pytest.raises(ValueError, match="shares 1 key"):
        renorm.check_disjoint(mean, ["Normans", "Amazon"], ["Amazon", "Oxygen"], "squad-long")


def test_apply_to_search_inputs_uses_one_mean_for_both_sides() -> None:
    mu = renorm.estimate_mean(COLLECTION)
    queries, documents = renorm.apply_to_search_inputs(Q[None, :], COLLECTION, mu, "r2")
    np.testing.assert_allclose(queries[0], R2_EXPECTED, atol=1e-6)
    np.testing.assert_allclose(documents @ mu, 0.0, atol=1e-6)


def test_workflow_helpers_round_trip(tmp_path: Path) -> None:
    from posir.models.declarations.spec import ModelSpec
    from posir.results.embeddings import save_embeddings

    collection = tmp_path / "embeddings" / "minilm" / "squad-train-sentences" / "corpus.npy"
    save_embeddings(collection, ["s1", "s2", "s3"], COLLECTION, [3, 3, 3])
    mean_file = renorm.write_collection_mean("minilm", "squad-train-sentences", collection)
    assert mean_file == collection.with_name("corpus.mean.npy")
    spec = ModelSpec.from_config(
        "minilm",
        {
            "backend": "sentence-transformers",
            "model": "x",
            "renorm": "r2",
            "renorm_collection": "squad-train-sentences",
        },
    )
    queries, documents = renorm.search_vectors(spec, Q[None, :], COLLECTION, mean_file)
    np.testing.assert_allclose(queries[0], R2_EXPECTED, atol=1e-6)
    np.testing.assert_allclose(documents.sum(axis=1), 0.0, atol=1e-6)  # orthogonal to mu = (1,1,1)/3
    plain = ModelSpec.from_config("minilm", {"backend": "sentence-transformers", "model": "x"})
    unchanged = renorm.search_vectors(plain, Q[None, :], COLLECTION, None)
    assert unchanged[0] is not None and unchanged[1] is COLLECTION
    other = ModelSpec.from_config(
        "minilm",
        {"backend": "sentence-transformers", "model": "x", "renorm": "r1", "renorm_collection": "wiki-sentences"},
    )
    with pytest.raises(ValueError, match="re-run the mean step"):
        renorm.search_vectors(other, Q[None, :], COLLECTION, mean_file)
    with pytest.raises(ValueError, match="needs the mean vector"):
        renorm.search_vectors(other, Q[None, :], COLLECTION, None)
