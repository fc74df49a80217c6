import random

import pytest

from benchmark.sampling import seeded_sample


def pool(n):
    return [(f"id{i}", i) for i in range(n)]


def test_sample_is_independent_of_file_order():
    p = pool(1000)
    shuffled = p[:]
    random.Random(3).shuffle(shuffled)
    assert seeded_sample(p, "ds", 300) == seeded_sample(shuffled, "ds", 300)


def test_sample_size_and_small_pools():
    assert len(seeded_sample(pool(1000), "ds", 300)) == 300
    assert sorted(seeded_sample(pool(50), "ds", 300)) == sorted(pool(50))


def test_seed_and_dataset_change_the_sample():
    a = {i for i, _ in seeded_sample(pool(1000), "ds", 100, seed=1)}
    assert a != {i for i, _ in seeded_sample(pool(1000), "ds", 100, seed=2)}
    assert a != {i for i, _ in seeded_sample(pool(1000), "other", 100, seed=1)}


def test_smaller_limit_is_a_prefix_of_a_larger_one():
    # So `--limit 20` then `--limit 300` re-uses the 20 answers already stored.
    small = seeded_sample(pool(1000), "ds", 20)
    assert seeded_sample(pool(1000), "ds", 300)[:20] == small


def test_duplicate_ids_are_an_error():
    with pytest.raises(ValueError, match="duplicate item id"):
        seeded_sample([("a", 1), ("a", 2)], "ds", 10)
