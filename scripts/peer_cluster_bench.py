#!/usr/bin/env python3
"""Python peers for `somna bench --only pca,tsne,kmeans`: scikit-learn PCA, TSNE (barnes_hut),
KMeans (Lloyd, one start), MiniBatchKMeans and openTSNE on the same vectors Somna used (an f32 file, row-major), with
trustworthiness@10 from scikit-learn. Prints one JSON line.

    pip install scikit-learn openTSNE
"""
import argparse
import json
import time

import numpy as np


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--only", default="pca,tsne,kmeans")
    ap.add_argument("--pca-dims", type=int, default=3)
    ap.add_argument("--tsne-n", type=int, default=10000)
    ap.add_argument("--perplexity", type=float, default=30.0)
    ap.add_argument("--iterations", type=int, default=1000)
    ap.add_argument("--k", type=int, default=50)
    ap.add_argument("--kmeans-target-inertia", type=float, default=0.0)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=42)
    a = ap.parse_args()
    only = set(a.only.split(","))
    x = np.fromfile(a.data, dtype=np.float32).reshape(-1, a.dim)
    out = {"n": int(x.shape[0])}
    from sklearn.manifold import trustworthiness

    if "pca" in only:
        from sklearn.decomposition import PCA

        # Three fits with the default solver (the first one warms up); the median counts.
        runs = []
        for _ in range(3):
            t = time.perf_counter()
            p = PCA(n_components=a.pca_dims, random_state=a.seed)
            y = p.fit_transform(x)
            runs.append(time.perf_counter() - t)
        out["pca"] = {
            "seconds": float(np.median(runs)),
            "runs": runs,
            "explained_variance_ratio": p.explained_variance_ratio_.tolist(),
            "solver": p._fit_svd_solver,
        }
    tsne3 = "tsne" in only or "tsne3" in only
    tsne2 = "tsne" in only or "tsne2" in only
    s = x[: a.tsne_n]
    if tsne3:
        from sklearn.manifold import TSNE

        t = time.perf_counter()
        y = TSNE(
            n_components=3,
            perplexity=a.perplexity,
            max_iter=a.iterations,
            method="barnes_hut",
            init="pca",
            random_state=a.seed,
            n_jobs=a.threads,
        ).fit_transform(s)
        out["tsne3_sklearn"] = {
            "seconds": time.perf_counter() - t,
            "trustworthiness10": float(trustworthiness(s, y, n_neighbors=10)),
        }
        # openTSNE's FFT interpolation is for 1 and 2 dimensions; past that it runs
        # Barnes-Hut, as Somna does.
        out["tsne3_opentsne"] = opentsne(s, a, 3, "bh")
    if tsne2:
        out["tsne2_opentsne"] = opentsne(s, a, 2, "fft")
    if "kmeans" in only:
        from sklearn.cluster import KMeans, MiniBatchKMeans

        # Lloyd's algorithm as Somna runs it: one k-means++ start, to convergence.
        t = time.perf_counter()
        km = KMeans(n_clusters=a.k, n_init=1, algorithm="lloyd", random_state=a.seed).fit(x)
        out["kmeans"] = {
            "seconds": time.perf_counter() - t,
            "inertia": float(km.inertia_),
            "iterations": int(km.n_iter_),
        }
        if a.kmeans_target_inertia:
            # The same start stopped after m iterations, for growing m: the first run whose
            # inertia is at most Somna's is the time to equal inertia.
            for m in (5, 10, 15, 20, 25, 30, 35, 40, 50, 60, 80, 100, 150, 200, 300):
                t = time.perf_counter()
                km = KMeans(
                    n_clusters=a.k, n_init=1, algorithm="lloyd", random_state=a.seed,
                    max_iter=m, tol=0.0,
                ).fit(x)
                seconds = time.perf_counter() - t
                if km.inertia_ <= a.kmeans_target_inertia or m == 300:
                    out["kmeans_equal_inertia"] = {
                        "seconds": seconds,
                        "inertia": float(km.inertia_),
                        "iterations": int(km.n_iter_),
                        "reached": bool(km.inertia_ <= a.kmeans_target_inertia),
                    }
                    break

        t = time.perf_counter()
        km = MiniBatchKMeans(n_clusters=a.k, batch_size=1024, n_init=3, random_state=a.seed).fit(x)
        out["minibatch_kmeans"] = {
            "seconds": time.perf_counter() - t,
            "inertia": float(km.inertia_),
            "iterations": int(km.n_iter_),
        }
    print(json.dumps(out))


def opentsne(s, a, dims, method):
    """openTSNE of the rows `s` into `dims` with `method` ("fft" or "bh"), timed, with
    trustworthiness@10; None when openTSNE is not installed."""
    try:
        from openTSNE import TSNE
    except ImportError:
        return None
    from sklearn.manifold import trustworthiness

    # The same schedule as Somna's: `iterations` in all, the first quarter (at most 250)
    # exaggerated. openTSNE's n_iter counts only the steps after the exaggeration.
    early = min(a.iterations // 4, 250)
    t = time.perf_counter()
    y = np.asarray(
        TSNE(
            n_components=dims,
            perplexity=a.perplexity,
            early_exaggeration_iter=early,
            n_iter=a.iterations - early,
            negative_gradient_method=method,
            n_jobs=a.threads,
            random_state=a.seed,
        ).fit(s)
    )
    return {
        "seconds": time.perf_counter() - t,
        "trustworthiness10": float(trustworthiness(s, y, n_neighbors=10)),
    }


if __name__ == "__main__":
    main()
