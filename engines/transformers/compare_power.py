#!/usr/bin/env python3
"""NVML against nvidia-smi, level by level, from one gpu-run.sh output folder.

The collector samples NVML during each level and logs the level's window on the wall clock
(`power window from_unix_s=… to_unix_s=… mean_w=…`, at INFERMETER_LOG=infermeter::power=debug);
gpu-run.sh runs `nvidia-smi --query-gpu=timestamp,index,power.draw,power.draw.instant -lms 100`
beside it. For each window this prints NVML's mean, nvidia-smi's time-weighted mean of power.draw
(and of power.draw.instant) over the same window, and their difference; the level is named from
the report entry whose power mean is NVML's.

Usage: python compare_power.py OUT_DIR   (reads report.json, collector.log, smi.csv)
"""

import json
import re
import sys
from datetime import datetime, timezone
from pathlib import Path

WINDOW = re.compile(r'power window.*?from_unix_s="?([\d.]+)"?.*?to_unix_s="?([\d.]+)"?.*?mean_w="?([\d.]+)"?')


def smi_trace(path: Path):
    trace = []
    for line in path.read_text().splitlines():
        fields = [f.strip() for f in line.split(",")]
        if len(fields) < 4:
            continue
        try:
            t = datetime.strptime(fields[0], "%Y/%m/%d %H:%M:%S.%f").replace(tzinfo=timezone.utc).timestamp()
            draw, instant = float(fields[2]), float(fields[3]) if fields[3] not in ("[N/A]", "") else float("nan")
        except ValueError:
            continue
        trace.append((t, draw, instant))
    return trace


def mean_over(trace, start, end, column):
    points = [(row[0], row[column]) for row in trace if start <= row[0] <= end]
    if len(points) < 2:
        return None, len(points)
    energy = sum((a[1] + b[1]) / 2 * (b[0] - a[0]) for a, b in zip(points, points[1:]))
    return energy / (points[-1][0] - points[0][0]), len(points)


def level_names(report):
    names = {}
    for series in report.get("series", []):
        for level in series.get("levels", []):
            power = level.get("power")
            if power:
                names[f"{power['mean_w']:.1f}"] = f"{series['scenario']} {series['mode']} @{level['concurrency']}"
    return names


def main():
    out = Path(sys.argv[1])
    report = json.loads((out / "report.json").read_text())
    names = level_names(report)
    trace = smi_trace(out / "smi.csv")
    windows = [tuple(float(g) for g in m.groups()) for m in map(WINDOW.search, (out / "collector.log").read_text().splitlines()) if m]
    print(f"{'level':<24} {'NVML W':>8} {'smi draw W':>11} {'diff':>7} {'smi instant W':>14} {'samples':>8}")
    diffs = []
    for start, end, nvml in windows:
        draw, n = mean_over(trace, start, end, 1)
        instant, _ = mean_over(trace, start, end, 2)
        name = names.get(f"{nvml:.1f}", "?")
        if draw is None:
            print(f"{name:<24} {nvml:>8.1f} {'no samples':>11}")
            continue
        diff = (nvml - draw) / draw * 100
        diffs.append(abs(diff))
        print(f"{name:<24} {nvml:>8.1f} {draw:>11.1f} {diff:>+6.1f}% {instant:>14.1f} {n:>8}")
    if diffs:
        print(f"levels: {len(diffs)}; largest |difference| {max(diffs):.1f}%, median {sorted(diffs)[len(diffs) // 2]:.1f}%")


if __name__ == "__main__":
    main()
