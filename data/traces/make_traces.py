#!/usr/bin/env python3
"""Writes the small traces bundled for tests and tries, deterministically (seeded).

    python3 data/traces/make_traces.py     # rewrites the .jsonl files and sample-agents/

sample-mooncake.jsonl: Mooncake's format (timestamp ms, input_length, output_length, hash_ids
of 512-token blocks). 240 requests over about 40 seconds: most reuse the leading blocks of one
of ten shared contexts (a system prompt, a document), then add blocks of their own; the rest
are fresh. Every line's last block is partial and its own, so every shared block is whole in
every line that has it, as in the real traces where only full blocks are hashed.

sample-sessions.jsonl: the generic format (session_id, turn, timestamp, input_length,
output_length): 12 conversations of 4 turns, each turn's input the previous turn's plus the
answer and a new message.

sample-agents/: agentic jobs in the shape of Weka / SemiAnalysis cc-traces (one trace, one job,
per file; blocks of 64 tokens): 8 coding-agent jobs, each a root agent of 3 to 5 turns whose
context grows turn by turn over a shared system prompt; after some turns it spawns 1 to 3
subagents that run in parallel (sharing the system prompt's blocks, a few spawning one of their
own) and its next turn joins them; tool waits of 0.3 to 1.5 s between a reply and the next call.
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


CC_BLOCK = 64


def agent_calls(rng, t, turns, system, next_id, depth, model):
    """One agent's `requests` from time `t`: its calls, each after the previous reply and a tool
    wait, some followed by subagents its next call joins. Returns the entries and the time its
    last reply (or its children's) came."""
    entries = []
    context = list(system)
    end = t
    for turn in range(turns):
        context = context + next_id(rng.randint(2, 6))
        out = rng.randint(40, 240)
        api = round(0.3 + out * 0.012, 3)
        entries.append({
            "t": round(t, 3), "type": "s", "model": model,
            "in": CC_BLOCK * len(context) - rng.randint(1, 40), "out": out,
            "hash_ids": list(context), "stop": "tool_use" if turn < turns - 1 else "end_turn",
            "api_time": api, "think_time": 0.0,
        })
        end = t + api
        t = end + rng.uniform(0.3, 1.5)
        spawn = turn < turns - 1 and depth < 2 and rng.random() < (0.6 if depth == 0 else 0.3)
        if spawn:
            joined = t
            for k in range(rng.randint(1, 3 if depth == 0 else 1)):
                child, child_end = agent_calls(rng, t + 0.05 * k, rng.randint(1, 3), system,
                                               next_id, depth + 1, "claude-haiku")
                entries.append({
                    "t": round(t, 3), "type": "subagent", "agent_id": f"agent_{next_id(1)[0]:04d}",
                    "subagent_type": "Explore", "status": "completed", "models": ["claude-haiku"],
                    "requests": child,
                })
                joined = max(joined, child_end)
            t = joined + rng.uniform(0.1, 0.4)
            # The joined answers join the parent's context.
            context = context + next_id(rng.randint(1, 3))
    return entries, end


def agents(rng):
    jobs = []
    for j in range(8):
        ids = iter(range(1, 1_000_000))

        def next_id(n):
            return [next(ids) for _ in range(n)]

        system = next_id(rng.randint(16, 32))
        requests, _ = agent_calls(rng, 0.0, rng.randint(3, 5), system, next_id, 0, "claude-opus")
        jobs.append({
            "id": f"sample-agent-{j:02d}", "models": ["claude-opus", "claude-haiku"],
            "block_size": CC_BLOCK, "hash_id_scope": "local", "requests": requests,
        })
    return jobs


def write(name, lines):
    with open(os.path.join(HERE, name), "w") as f:
        for line in lines:
            f.write(json.dumps(line) + "\n")


write("sample-mooncake.jsonl", mooncake(random.Random(25)))
write("sample-sessions.jsonl", sessions(random.Random(26)))
os.makedirs(os.path.join(HERE, "sample-agents"), exist_ok=True)
for job in agents(random.Random(27)):
    with open(os.path.join(HERE, "sample-agents", job["id"] + ".json"), "w") as f:
        json.dump(job, f, indent=1)
        f.write("\n")
