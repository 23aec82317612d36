import numpy as np
import pytest

from posir.builders.sampling import LengthAwareSampler


def test_targets_follow_the_posir_ratio_and_stay_in_their_bucket():
    sampler = LengthAwareSampler()
    rng = np.random.default_rng(0)
    targets = np.array([sampler.draw_target(rng) for _ in range(40_000)])
    assert targets.min() >= 1 and targets.max() <= 2048
    shares = np.bincount((targets - 1) // 256, minlength=8) / len(targets)
    # 3:3:3:3:2:2:2:2 -> 0.15 for each short bucket, 0.10 for each long one
    np.testing.assert_allclose(shares, [0.15] * 4 + [0.10] * 4, atol=0.01)
    # under 1024 tokens 1.5 times as often as above
    assert shares[:4].sum() / shares[4:].sum() == pytest.approx(1.5, rel=0.05)


def test_targets_are_reproducible_with_a_seed():
    sampler = LengthAwareSampler()
    a = [sampler.draw_target(np.random.default_rng(7)) for _ in range(3)]
    b = [sampler.draw_target(np.random.default_rng(7)) for _ in range(3)]
    assert a == b


def test_bucket_index_edges():
    sampler = LengthAwareSampler()
    assert sampler.bucket_index(1) == 0
    assert sampler.bucket_index(256) == 0
    assert sampler.bucket_index(257) == 1
    assert sampler.bucket_index(2048) == 7
    assert sampler.bucket_index(2049) is None
    assert sampler.bucket_index(0) is None


def test_sample_documents_keeps_the_ratio_and_never_borrows_from_other_buckets():
    sampler = LengthAwareSampler(bucket_width=10, ratio=(3, 1))
    lengths = [5] * 100 + [15] * 100 + [25] * 50  # the last 50 are past the last bucket
    chosen = sampler.sample_documents(lengths, 40, np.random.default_rng(1))
    assert len(chosen) == 40 and len(set(chosen)) == 40
    assert sum(lengths[i] == 5 for i in chosen) == 30
    assert sum(lengths[i] == 15 for i in chosen) == 10
    scarce = sampler.sample_documents([5] * 100 + [15] * 2, 40, np.random.default_rng(1))
    assert sum(1 for i in scarce if i >= 100) == 2 and len(scarce) == 32


def test_invalid_ratio_is_rejected():
    with pytest.raises(ValueError):
        LengthAwareSampler(ratio=())
