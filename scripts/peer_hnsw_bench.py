#!/usr/bin/env python3
"""hnswlib peer for Somna's ANN benchmark.

Builds an inner-product hnswlib index over raw little-endian f32 vectors, then
for each ef queries one vector at a time on one thread (k=10) and reports
recall@10 against exact top-10 ids plus latency. Prints one JSON line.
See scripts/README.md for the command.
"""

from __future__ import annotations

import argparse
import json
import time
from importlib.metadata import version
from pathlib import Path

import hnswlib
import numpy as np
import numpy.typing as npt

K = 10
WARMUP_QUERIES = 100


def read_matrix(path: Path, dtype: str, cols: int) -> npt.NDArray:
    flat = np.fromfile(path, dtype=dtype)
    if flat.size == 0 or flat.size % cols:
        raise SystemExit(f"{path}: {flat.size} values is not a non-empty multiple of {cols}")
    return flat.reshape(-1, cols)


def int_list(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x]


def resident_kib(reset_peak: bool) -> tuple[int, int] | None:
    """(resident, high-water mark) in KiB, the mark first set back to the resident size if
    asked; None where /proc is missing."""
    try:
        if reset_peak:
            with open("/proc/self/clear_refs", "w") as f:
                f.write("5")
        fields = {}
        with open("/proc/self/status") as f:
            for line in f:
                name, _, value = line.partition(":")
                fields[name] = value.split()
        return int(fields["VmRSS"][0]), int(fields["VmHWM"][0])
    except (OSError, KeyError, ValueError, IndexError):
        return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True, type=Path, help="raw little-endian f32, n x dim")
    parser.add_argument("--queries", required=True, type=Path, help="raw little-endian f32, q x dim")
    parser.add_argument("--truth", required=True, type=Path, help="raw little-endian u32, q x 10 exact top-10 row ids")
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--m", type=int, default=16)
    parser.add_argument("--ef-construction", type=int, default=200)
    parser.add_argument("--ef", type=int_list, default=[16, 32, 64, 128], help="comma-separated list")
    parser.add_argument("--threads", type=int, default=2, help="threads for the build")
    args = parser.parse_args()

    data = read_matrix(args.data, "<f4", args.dim)
    queries = read_matrix(args.queries, "<f4", args.dim)
    truth = read_matrix(args.truth, "<u4", K)
    if len(truth) != len(queries):
        raise SystemExit(f"{len(queries)} queries but {len(truth)} truth rows")
    n = len(data)

    rss0 = resident_kib(reset_peak=True)
    index = hnswlib.Index(space="ip", dim=args.dim)
    index.init_index(max_elements=n, M=args.m, ef_construction=args.ef_construction)
    wall0, cpu0 = time.perf_counter(), time.process_time()
    index.add_items(data, np.arange(n), num_threads=args.threads)
    build_seconds = time.perf_counter() - wall0
    build_cpu_seconds = time.process_time() - cpu0
    rss1 = resident_kib(reset_peak=False)
    memory = None
    if rss0 and rss1:
        memory = {
            "raw_mib": round(data.nbytes / 2**20, 1),
            "index_mib": round((rss1[0] - rss0[0]) / 1024, 1),
            "peak_mib": round((rss1[1] - rss0[0]) / 1024, 1),
        }

    index.set_num_threads(1)
    index.set_ef(max(args.ef))
    for q in queries[:WARMUP_QUERIES]:
        index.knn_query(q[np.newaxis, :], k=K)

    truth_sets = [set(row.tolist()) for row in truth]
    results = []
    for ef in args.ef:
        index.set_ef(ef)
        latencies_ms = np.empty(len(queries))
        hits = 0
        for i, q in enumerate(queries):
            start = time.perf_counter()
            labels, _ = index.knn_query(q[np.newaxis, :], k=K)
            latencies_ms[i] = (time.perf_counter() - start) * 1000.0
            hits += len(truth_sets[i].intersection(labels[0].tolist()))
        results.append(
            {
                "ef": ef,
                "recall_at_10": round(hits / (K * len(queries)), 4),
                "p50_ms": round(float(np.percentile(latencies_ms, 50)), 4),
                "p99_ms": round(float(np.percentile(latencies_ms, 99)), 4),
                "qps_single_thread": round(len(queries) / (latencies_ms.sum() / 1000.0), 1),
            }
        )

    print(
        json.dumps(
            {
                "peer": "hnswlib",
                "version": version("hnswlib"),
                "n": n,
                "m": args.m,
                "ef_construction": args.ef_construction,
                "build_seconds": round(build_seconds, 3),
                "build_cpu_seconds": round(build_cpu_seconds, 3),
                "memory": memory,
                "results": results,
            }
        )
    )


if __name__ == "__main__":
    main()
