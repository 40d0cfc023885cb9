#!/usr/bin/env python3
"""sentence-transformers peer for Somna's embedding benchmark.

Encodes a JSON list of strings with a local sentence-transformers model on the
CPU (normalize_embeddings=True) and prints one JSON line with throughput and
single-query latency. See scripts/README.md for the command.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import sentence_transformers  # noqa: E402
import torch  # noqa: E402
from sentence_transformers import SentenceTransformer  # noqa: E402

WARMUP_SENTENCES = 16
SINGLE_QUERIES = 200


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model-dir", required=True, type=Path)
    parser.add_argument("--input", required=True, type=Path, help="JSON list of strings")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=1, help="timed passes over the input; the fastest is reported")
    args = parser.parse_args()

    texts = json.loads(args.input.read_text(encoding="utf-8"))
    if not isinstance(texts, list) or not texts or not all(isinstance(t, str) for t in texts):
        raise SystemExit(f"{args.input}: expected a non-empty JSON list of strings")

    torch.set_num_threads(args.threads)
    model = SentenceTransformer(str(args.model_dir), device="cpu")

    def encode(batch: list[str]) -> None:
        model.encode(batch, batch_size=args.batch_size, normalize_embeddings=True, convert_to_numpy=True)

    encode(texts[:WARMUP_SENTENCES])

    seconds = float("inf")
    for _ in range(args.repeats):
        start = time.perf_counter()
        encode(texts)
        seconds = min(seconds, time.perf_counter() - start)

    single_ms: list[float] = []
    for i in range(SINGLE_QUERIES):
        text = texts[i % len(texts)]
        start = time.perf_counter()
        encode([text])
        single_ms.append((time.perf_counter() - start) * 1000.0)

    print(
        json.dumps(
            {
                "peer": "sentence-transformers",
                "version": sentence_transformers.__version__,
                "threads": args.threads,
                "batch_size": args.batch_size,
                "sentences": len(texts),
                "seconds": round(seconds, 4),
                "sentences_per_sec": round(len(texts) / seconds, 2),
                "single_query_ms_p50": round(statistics.median(single_ms), 3),
                "single_query_ms_p99": round(sorted(single_ms)[round(0.99 * (len(single_ms) - 1))], 3),
            }
        )
    )


if __name__ == "__main__":
    main()
