#!/usr/bin/env python3
"""Python peer for `somna bench --only umap`: umap-learn on the same vectors Somna used (an f32
file, row-major), n_neighbors 15, min_dist 0.1, Euclidean, its default spectral start, every
core (no random_state, so it runs in parallel as Somna's SGD does). A first fit on 2,000 points
compiles numba's functions and is timed apart. Trustworthiness@10 (scikit-learn) of the first
`--sample` points. Prints one JSON line.

    pip install umap-learn
"""
import argparse
import json
import time

import numpy as np


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--dims", type=int, default=2)
    ap.add_argument("--sample", type=int, default=10000)
    a = ap.parse_args()
    x = np.fromfile(a.data, dtype=np.float32).reshape(-1, a.dim)
    import umap
    from sklearn.manifold import trustworthiness

    def fit(v):
        return umap.UMAP(
            n_neighbors=15, min_dist=0.1, n_components=a.dims, metric="euclidean"
        ).fit_transform(v)

    t = time.perf_counter()
    fit(x[:2000])
    warmup = time.perf_counter() - t
    t = time.perf_counter()
    y = fit(x)
    seconds = time.perf_counter() - t
    m = min(a.sample, len(x))
    out = {
        "n": int(len(x)),
        "seconds": seconds,
        "warmup_seconds": warmup,
        "trustworthiness10": float(trustworthiness(x[:m], y[:m], n_neighbors=10)),
        "umap_learn": umap.__version__,
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
