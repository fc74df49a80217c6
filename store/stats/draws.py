"""Seeded draws of the bootstrap (store/hierarchy/bootstrap.py), the same on every machine.

    resample_counts(seed, dataset, ids_md5, n, replicates)   the items each replicate draws
    resample_plays(seed, dataset, ids_md5, item_counts, item_of_play)
                                                             within each drawn item, its plays
    estimate_draws(seed, model, dataset, estimate, ci_low, ci_high, replicates)
                                                             an estimated score in each replicate
"""

from __future__ import annotations

import hashlib

import numpy as np

Z95 = 1.959963984540054  # the standard normal's 97.5 % quantile
_BLOCK = 1 << 16  # draws per block of replicates: bounds the temporaries (~0.5 MB each), not the result


def resample_counts(seed: int, dataset: str, ids_md5: str, n: int, replicates: int,
                    dtype: type = np.int64) -> np.ndarray:
    """(replicates x n) how often each item (in sorted id order) is drawn in each replicate, as ``dtype``
    (float32 holds every count exactly: the bootstrap multiplies them as such without a copy).

    Draw j of replicate r picks item floor(h * n / 2^32), h the high 32 bits of
    splitmix64(base + r * n + j), base a hash of (seed, dataset, the sorted ids).
    """
    base = int.from_bytes(hashlib.blake2b(f"{seed}\n{dataset}\n{ids_md5}".encode(), digest_size=8).digest(),
                          "little")
    out: np.ndarray = np.empty((replicates, n), dtype=dtype)
    # In blocks of replicates: the same draws, with temporaries of ~_BLOCK draws (not 6 arrays of replicates x n)
    step = max(1, _BLOCK // max(1, n))
    for r0 in range(0, replicates, step):
        r1 = min(replicates, r0 + step)
        draws = np.arange(r0 * n, r1 * n, dtype=np.uint64)
        with np.errstate(over="ignore"):
            picked = ((_splitmix64(draws + np.uint64(base)) >> np.uint64(32)) * np.uint64(n)) >> np.uint64(32)
        flat = picked.astype(np.int64).reshape(r1 - r0, n) + (np.arange(r1 - r0, dtype=np.int64) * n)[:, None]
        out[r0:r1] = np.bincount(flat.ravel(), minlength=(r1 - r0) * n).reshape(r1 - r0, n)
    return out

def resample_plays(seed: int, dataset: str, ids_md5: str, item_counts: np.ndarray,
                   item_of_play: np.ndarray, dtype: type = np.int64) -> np.ndarray:
    """(replicates x plays) how often each play is drawn: the second stage of a two-stage bootstrap.

    ``item_counts`` (replicates x items) is the first stage (resample_counts); ``item_of_play`` the
    item (0-based, sorted) of each play, plays of one item adjacent. Each time an item with k plays is
    drawn, k plays are drawn from its own with replacement: draw number d (counted over all replicates,
    items and draws in that order) picks play floor(h * k / 2^32) of its item, h the high 32 bits of
    splitmix64(base + d), base a hash of (seed, dataset, the sorted ids, "plays"). An item with one
    play is drawn as in the one-stage bootstrap. The result is ``dtype`` (as `resample_counts`).
    """
    replicates, n_items = np.shape(item_counts)
    of = np.asarray(item_of_play, dtype=np.int64)
    k = np.bincount(of, minlength=n_items)
    if (k == 1).all():  # every draw picks play 0 of its item (h * 1 < 2^32): the item counts themselves
        return np.asarray(item_counts, dtype=dtype)
    counts = np.asarray(item_counts, dtype=np.int64)
    first = np.concatenate([[0], np.cumsum(k)[:-1]]).astype(np.int64)
    base = int.from_bytes(hashlib.blake2b(f"{seed}\n{dataset}\n{ids_md5}\nplays".encode(), digest_size=8).digest(),
                          "little")
    n_plays = of.size
    out: np.ndarray = np.empty((replicates, n_plays), dtype=dtype)
    step = max(1, _BLOCK // max(1, n_plays))  # in blocks of replicates, as resample_counts
    d0 = 0  # draws made in earlier blocks: d counts over all replicates
    for r0 in range(0, replicates, step):
        r1 = min(replicates, r0 + step)
        per_cell = (counts[r0:r1] * k[None, :]).ravel()  # plays drawn per (replicate, item)
        cell = np.repeat(np.arange(per_cell.size, dtype=np.int64), per_cell)
        item, rep = cell % n_items, cell // n_items
        with np.errstate(over="ignore"):
            h = _splitmix64(np.arange(d0, d0 + cell.size, dtype=np.uint64) + np.uint64(base)) >> np.uint64(32)
            pick = ((h * k[item].astype(np.uint64)) >> np.uint64(32)).astype(np.int64)
        d0 += cell.size
        out[r0:r1] = np.bincount(rep * n_plays + first[item] + pick,
                                 minlength=(r1 - r0) * n_plays).reshape(r1 - r0, n_plays)
    return out

def _splitmix64(x: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        z = x + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def estimate_draws(seed: int, model: str, dataset: str, estimate: float, ci_low: float, ci_high: float,
                   replicates: int) -> np.ndarray:
    """An estimated dataset score (store/estimates/scores.py) in each of `replicates` replicates.

    A split normal at the estimate: below it with sd (estimate - ci_low) / Z95, above it with
    sd (ci_high - estimate) / Z95, so its 2.5 % and 97.5 % quantiles are the estimate's own 95 %
    interval, also where that is not symmetric (a Wilson floor, a bound held at 0 or 100). Kept
    within 0-100. Replicate r's draw depends only on (seed, model, dataset, r): independent of the
    item draws, the same for any number of replicates up to r.
    """
    base = int.from_bytes(hashlib.blake2b(f"{seed}\n{model}\n{dataset}\nestimate".encode(),
                                          digest_size=8).digest(), "little")
    counter = np.arange(2 * replicates, dtype=np.uint64).reshape(replicates, 2)
    with np.errstate(over="ignore"):
        bits = _splitmix64(counter + np.uint64(base)) >> np.uint64(11)  # 53 bits
    u = (bits.astype(np.float64) + 0.5) / 2.0**53  # in (0, 1): the logarithm below is finite
    z = np.sqrt(-2 * np.log(u[:, 0])) * np.cos(2 * np.pi * u[:, 1])  # Box-Muller
    sd = np.where(z < 0, estimate - ci_low, ci_high - estimate) / Z95
    return np.clip(estimate + z * sd, 0.0, 100.0)
