"""Seed-bootstrap refits: fits.bootstrap's vectorised variable projection against a loop of
lmfit `Model.fit`, 1000 refits for each of 3 curves of 20 points, side by side in one run.

    python bench/bootstrap.py [--draws 1000]
"""

import argparse
import time

import lmfit
import numpy as np

from fits.bootstrap import _resampled_means, bootstrap_saturating
from fits.fit import curve_points
from fits.laws import saturating

TRUTHS = [(0.2, 0.05, 0.3), (0.15, 0.04, 0.5), (0.12, 0.02, 0.2)]
SIZES = 145e3 * 1.6 ** np.arange(20)


def lmfit_loop(points, draws: int, rng: np.random.Generator) -> np.ndarray:
    """The same resampled curves (fits.bootstrap's resampling), each refitted by lmfit."""
    model = lmfit.Model(saturating, independent_vars=["S"])
    params = model.make_params(
        a_inf=dict(value=0.2, min=0, max=1), b=dict(value=0.05, min=0), alpha=dict(value=0.3, min=0.01, max=2)
    )
    out = []
    for means in _resampled_means(points, draws, rng):
        params["a_inf"].set(min=means.max())
        result = model.fit(means, params, S=points.samples, weights=1 / points.sigma)
        out.append([result.params[n].value for n in ("a_inf", "b", "alpha")])
    return np.array(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=1000)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    curves = []
    for truth in TRUTHS:
        samples = np.repeat(SIZES, 3)
        curves.append(curve_points(samples, saturating(samples, *truth) + rng.normal(0, 0.005, samples.size)))
    start = time.perf_counter()
    ours = [bootstrap_saturating(points, args.draws, seed=i) for i, points in enumerate(curves)]
    ours_s = time.perf_counter() - start
    start = time.perf_counter()
    theirs = [lmfit_loop(points, args.draws, np.random.default_rng(i)) for i, points in enumerate(curves)]
    # bootstrap_saturating(seed=i) draws its resamples from default_rng(i) too: the same curves.
    theirs_s = time.perf_counter() - start
    print(f"{len(curves)} curves x {args.draws} refits, {len(SIZES)} points each")
    print(f"fits.bootstrap (vectorised): {ours_s:8.2f} s")
    print(f"lmfit Model.fit loop:        {theirs_s:8.2f} s")
    print(f"speed-up: {theirs_s / ours_s:.0f}x")
    for i, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        ours_sd, lmfit_sd = a.std(0).round(4), b.std(0).round(4)
        print(f"curve {i}: bootstrap sd of (a_inf, b, alpha): ours {ours_sd}, lmfit {lmfit_sd}")


if __name__ == "__main__":
    main()
