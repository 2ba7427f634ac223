#!/usr/bin/env python3
"""Prints one comparison table from a cross-check run folder (see run.sh).

Layout the run leaves behind, one folder per tool and setting:
  OUT/aiperf/<api>-c<N>-<in>x<out>/profile_export_aiperf.json
  OUT/guidellm/<api>-c<N>-<in>x<out>/benchmarks.json
  OUT/infermeter/<api>-<in>x<out>/report.json   (peak series, one level per concurrency)

Every figure is read as the tool itself reports it (no recomputation from records), converted to
milliseconds or per-second units. Standard library only, so any python3 runs it.

Usage: table.py OUT [--markdown]
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

SETTING = re.compile(r"^(chat|completions)-c(\d+)-(\d+)x(\d+)$")
INFERMETER_RUN = re.compile(r"^(chat|completions)-(\d+)x(\d+)$")

# (column, unit) in print order; each tool fills what it reports.
COLUMNS = [
    ("ttft_p50", "ms"), ("ttft_p99", "ms"),
    ("itl_p50", "ms"), ("itl_p99", "ms"),
    ("tpot_p50", "ms"), ("tpot_p99", "ms"),
    ("out_tok_s", "tok/s"), ("req_s", "req/s"),
    ("isl", "tok"), ("osl", "tok"), ("n", "req"),
]


def aiperf_row(path: Path) -> dict:
    d = json.loads(path.read_text())

    def stat(tag, key):
        m = d.get(tag)
        return None if not m or m.get(key) is None else float(m[key])

    return {
        "ttft_p50": stat("time_to_first_token", "p50"),
        "ttft_p99": stat("time_to_first_token", "p99"),
        # AIPerf's ITL is per request: (request_latency - ttft) / (osl - 1), i.e. our TPOT.
        "itl_p50": stat("inter_token_latency", "p50"),
        "itl_p99": stat("inter_token_latency", "p99"),
        "tpot_p50": stat("inter_token_latency", "p50"),
        "tpot_p99": stat("inter_token_latency", "p99"),
        "icl_p50": stat("inter_chunk_latency", "p50"),
        "out_tok_s": stat("output_token_throughput", "avg"),
        "req_s": stat("request_throughput", "avg"),
        "isl": stat("input_sequence_length", "p50"),
        "osl": stat("output_sequence_length", "p50"),
        "n": stat("request_count", "avg"),
    }


def guidellm_row(path: Path) -> dict:
    d = json.loads(path.read_text())
    bench = d["benchmarks"][0]
    metrics = bench["metrics"]

    def stat(name, key, scale=1.0):
        m = metrics.get(name)
        if not m:
            return None
        s = m.get("successful") or m
        if key in ("p50", "p99"):
            v = (s.get("percentiles") or {}).get(key)
            if v is None and key == "p50":
                v = s.get("median")
        else:
            v = s.get(key)
        return None if v is None else float(v) * scale

    return {
        "ttft_p50": stat("time_to_first_token_ms", "p50"),
        "ttft_p99": stat("time_to_first_token_ms", "p99"),
        "itl_p50": stat("inter_token_latency_ms", "p50"),
        "itl_p99": stat("inter_token_latency_ms", "p99"),
        "tpot_p50": stat("time_per_output_token_ms", "p50"),
        "tpot_p99": stat("time_per_output_token_ms", "p99"),
        "out_tok_s": stat("output_tokens_per_second", "mean"),
        "req_s": stat("requests_per_second", "mean"),
        "isl": stat("prompt_token_count", "p50"),
        "osl": stat("output_token_count", "p50"),
        "n": stat("request_latency", "count"),
    }


def infermeter_rows(path: Path) -> dict[int, dict]:
    d = json.loads(path.read_text())
    rows = {}
    for series in d["series"]:
        if series["mode"] != "peak":
            continue
        for level in series["levels"]:
            m = level["metrics"]

            def stat(name, key, scale=1000.0):
                dist = m.get(name)
                return None if not dist else float(dist[key]) * scale

            rows[level["concurrency"]] = {
                "ttft_p50": stat("ttft_s", "p50"),
                "ttft_p99": stat("ttft_s", "p99"),
                "itl_p50": stat("itl_s", "p50"),
                "itl_p99": stat("itl_s", "p99"),
                "tpot_p50": stat("tpot_s", "p50"),
                "tpot_p99": stat("tpot_s", "p99"),
                "icl_p50": stat("inter_chunk_s", "p50"),
                "out_tok_s": level.get("system_output_tok_s"),
                "req_s": level.get("requests_per_s"),
                "isl": stat("input_tokens", "p50", 1.0),
                "osl": stat("output_tokens", "p50", 1.0),
                "n": float(level["requests"]["ok"]),
            }
    return rows


def collect(out: Path) -> dict[tuple, dict[str, dict]]:
    """{(api, conc, in, out): {tool: row}}"""
    table: dict[tuple, dict[str, dict]] = {}
    readers = {"aiperf": ("profile_export_aiperf.json", aiperf_row),
               "guidellm": ("benchmarks.json", guidellm_row)}
    for tool, (name, read) in readers.items():
        for folder in sorted((out / tool).glob("*")):
            m = SETTING.match(folder.name)
            if not m or not (folder / name).is_file():
                continue
            key = (m[1], int(m[2]), int(m[3]), int(m[4]))
            try:
                table.setdefault(key, {})[tool] = read(folder / name)
            except (KeyError, IndexError, ValueError, TypeError) as e:
                print(f"warning: could not read {folder / name}: {e!r}", file=sys.stderr)
    for folder in sorted((out / "infermeter").glob("*")):
        m = INFERMETER_RUN.match(folder.name)
        report = folder / "report.json"
        if not m or not report.is_file():
            continue
        for conc, row in infermeter_rows(report).items():
            table.setdefault((m[1], conc, int(m[2]), int(m[3])), {})["infermeter"] = row
    return table


def fmt(v) -> str:
    if v is None:
        return "–"
    return f"{v:.0f}" if abs(v) >= 100 else f"{v:.1f}" if abs(v) >= 10 else f"{v:.2f}"


def delta(ours, theirs) -> str:
    if ours is None or theirs is None or theirs == 0:
        return "–"
    return f"{100.0 * (ours - theirs) / theirs:+.1f}%"


def main() -> int:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if len(args) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    out = Path(args[0])
    table = collect(out)
    if not table:
        print(f"no tool output found under {out}", file=sys.stderr)
        return 1
    headers = ["setting", "tool"] + [f"{c} ({u})" for c, u in COLUMNS]
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    for key in sorted(table):
        api, conc, n_in, n_out = key
        for tool in ("infermeter", "aiperf", "guidellm"):
            row = table[key].get(tool)
            if row is None:
                continue
            cells = [f"{api} c={conc} {n_in}/{n_out}", tool] + [fmt(row.get(c)) for c, _ in COLUMNS]
            lines.append("| " + " | ".join(cells) + " |")
    print("\n".join(lines))

    # infermeter vs AIPerf medians: the ±5% acceptance check of the cross-check.
    print()
    print("| setting | TTFT p50 Δ vs AIPerf | our TPOT p50 vs AIPerf ITL p50 | our ITL p50 vs AIPerf ITL p50 | TTFT p50 Δ vs guidellm | ITL p50 Δ vs guidellm |")
    print("|---|---|---|---|---|---|")
    for key in sorted(table):
        row = table[key]
        ours = row.get("infermeter")
        if ours is None:
            continue
        ap, gl = row.get("aiperf") or {}, row.get("guidellm") or {}
        api, conc, n_in, n_out = key
        print(f"| {api} c={conc} {n_in}/{n_out} | {delta(ours['ttft_p50'], ap.get('ttft_p50'))} "
              f"| {delta(ours['tpot_p50'], ap.get('itl_p50'))} | {delta(ours['itl_p50'], ap.get('itl_p50'))} "
              f"| {delta(ours['ttft_p50'], gl.get('ttft_p50'))} | {delta(ours['itl_p50'], gl.get('itl_p50'))} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
