#!/usr/bin/env python3
"""Writes the small traces bundled for tests and tries, deterministically (seeded).

    python3 data/traces/make_traces.py     # rewrites the two .jsonl files next to it

sample-mooncake.jsonl: Mooncake's format (timestamp ms, input_length, output_length, hash_ids
of 512-token blocks). 240 requests over about 40 seconds: most reuse the leading blocks of one
of ten shared contexts (a system prompt, a document), then add blocks of their own; the rest
are fresh. Every line's last block is partial and its own, so every shared block is whole in
every line that has it, as in the real traces where only full blocks are hashed.

sample-sessions.jsonl: the generic format (session_id, turn, timestamp, input_length,
output_length): 12 conversations of 4 turns, each turn's input the previous turn's plus the
answer and a new message.
"""

import json
import os
import random

BLOCK = 512
HERE = os.path.dirname(os.path.abspath(__file__))


def mooncake(rng):
    next_id = 0

    def new_ids(n):
        nonlocal next_id
        ids = list(range(next_id, next_id + n))
        next_id += n
        return ids

    contexts = [new_ids(rng.randint(2, 6)) for _ in range(10)]
    t = 0.0
    lines = []
    for _ in range(240):
        t += max(60.0, rng.expovariate(1 / 160.0))
        if rng.random() < 0.75:
            shared = rng.choice(contexts)[: rng.randint(1, 6)]
        else:
            shared = []
        own_full = rng.randint(0, 2)
        partial = rng.randint(16, BLOCK - 16)
        ids = shared + new_ids(own_full + 1)
        lines.append(
            {
                "timestamp": round(t),
                "input_length": BLOCK * (len(ids) - 1) + partial,
                "output_length": rng.randint(16, 128),
                "hash_ids": ids,
            }
        )
    return lines


def sessions(rng):
    lines = []
    for s in range(12):
        t = s * 1500.0 + rng.uniform(0, 500)
        context = rng.randint(300, 900)
        for turn in range(1, 5):
            out = rng.randint(32, 96)
            lines.append(
                {
                    "session_id": f"user-{s:02d}",
                    "turn": turn,
                    "timestamp": round(t),
                    "input_length": context,
                    "output_length": out,
                }
            )
            context += out + rng.randint(40, 160)
            t += rng.uniform(2000, 6000)
    lines.sort(key=lambda l: l["timestamp"])
    return lines


def write(name, lines):
    with open(os.path.join(HERE, name), "w") as f:
        for line in lines:
            f.write(json.dumps(line) + "\n")


write("sample-mooncake.jsonl", mooncake(random.Random(25)))
write("sample-sessions.jsonl", sessions(random.Random(26)))
