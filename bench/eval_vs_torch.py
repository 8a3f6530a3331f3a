#!/usr/bin/env python3
"""torch's eager CPU time for the math of bench/eval_bench.cc's graphs, for
the evaluator/torch ratio (docs/eval.md §7). Same shapes, f32, the same
number of threads as the evaluator uses (all cores).

    /usr/bin/python3 bench/eval_vs_torch.py [REPEATS]
"""
import sys
import time

import torch

torch.manual_seed(0)
REPEATS = int(sys.argv[1]) if len(sys.argv) > 1 else 5


def best(fn):
    fn()
    times = []
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times) * 1e3


for T, H in [(128, 256), (512, 512), (1024, 1024)]:
    x, w1, b1, w2 = torch.randn(T, H), torch.randn(H, 4 * H), torch.randn(4 * H), torch.randn(4 * H, H)
    print(f"mlp T={T} H={H}: {best(lambda: torch.relu(x @ w1 + b1) @ w2):.2f} ms")
for B, T in [(8, 128), (16, 512)]:
    q, k, v = (torch.randn(B, T, 64) for _ in range(3))
    print(f"attention B={B} T={T}: {best(lambda: torch.softmax(q @ k.transpose(1, 2) * 0.125, -1) @ v):.2f} ms")
x, y = torch.randn(1 << 24), torch.randn(1 << 24)
print(f"add 2^24 f32: {best(lambda: x + y):.2f} ms")
