"""vLLM judge figures: engine load, fragments/s over one batch, and the ratio to one fragment per call.

Uses the tiny test model (built on the spot, or GD_ASSETS_TINY_MODEL_DIR / --model) unless
another model is given. Prints only; run with `python bench/llm_judge.py [--n 200] [--model DIR]`.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", default=os.environ.get("GD_ASSETS_TINY_MODEL_DIR"))
    parser.add_argument("--n", type=int, default=200, help="fragments in the batch")
    parser.add_argument("--single", type=int, default=20, help="fragments judged one per call (baseline)")
    args = parser.parse_args()
    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
    os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")
    sys.path.insert(0, str(REPO / "tests"))
    from tinymodel import BUDGET, build_tiny_model, sample_inputs

    from gd_assets.core.judges.vllm import VllmJudge

    started = time.perf_counter()
    model = build_tiny_model(Path(args.model or tempfile.mkdtemp(prefix="gd-tiny-")))
    print(f"{'model ready':<28} {time.perf_counter() - started:8.2f} s   {model}")

    judge = VllmJudge(str(model), budget=BUDGET, max_model_len=2048, enforce_eager=True)
    started = time.perf_counter()
    judge.judge(sample_inputs(1, seed=99))
    print(f"{'engine load + first call':<28} {time.perf_counter() - started:8.2f} s")

    items = sample_inputs(args.n, seed=7)
    started = time.perf_counter()
    judge.judge(items)
    batch = args.n / (time.perf_counter() - started)
    print(f"{'batch':<28} {batch:8.1f} fragments/s  ({args.n} fragments)")

    started = time.perf_counter()
    for item in items[: args.single]:
        judge.judge([item])
    single = args.single / (time.perf_counter() - started)
    print(f"{'one per call':<28} {single:8.1f} fragments/s  ({args.single} fragments)")
    print(f"{'batch / one per call':<28} {batch / single:8.1f} x")


if __name__ == "__main__":
    main()
