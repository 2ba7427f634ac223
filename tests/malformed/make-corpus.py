#!/usr/bin/env python3
"""Regenerates the malformed-input corpus from the bundled sample report. Each file is one way a
report can be wrong; tests/browser/ checks every one shows the error panel (none may load).
Run from the repo root: python3 tests/malformed/make-corpus.py"""
import copy
import json
import os

here = os.path.dirname(os.path.abspath(__file__))
sample = json.load(open(os.path.join(here, "../../data/reports/sample-synthetic.json")))

# A small valid base: one scenario, its peak series, two levels.
base = copy.deepcopy(sample)
base["scenarios"] = base["scenarios"][:1]
sid = base["scenarios"][0]["id"]
base["series"] = [s for s in base["series"] if s["scenario"] == sid and s["mode"] == "peak"][:1]
base["series"][0]["levels"] = base["series"][0]["levels"][:2]
base_text = json.dumps(base, indent=2)


def write(name, text):
    with open(os.path.join(here, name), "w") as f:
        f.write(text)


def variant(name, change):
    report = copy.deepcopy(base)
    change(report)
    write(name, json.dumps(report, indent=2))


def level(r):
    return r["series"][0]["levels"][0]


write("truncated.json", base_text[: len(base_text) // 2])
write("not-json.json", "<!DOCTYPE html>\n<html><body>404 Not Found</body></html>\n")
write("empty-file.json", "")
write("empty-object.json", "{}")
write("array-instead-of-object.json", "[" + base_text + "]")
write("huge-number.json", base_text.replace('"duration_s": ', '"duration_s": 1e999', 1))
variant("wrong-major-version.json", lambda r: r.update(schema_version="2.0.0"))
variant("version-not-semver.json", lambda r: r.update(schema_version="one"))
variant("missing-metadata.json", lambda r: r.pop("metadata"))
variant("missing-series.json", lambda r: r.pop("series"))
variant("nan-string.json", lambda r: level(r)["metrics"]["ttft_s"].update(mean="NaN"))
variant("number-as-string.json", lambda r: level(r).update(system_output_tok_s="12.5"))
variant("unknown-scenario.json", lambda r: r["series"][0].update(scenario="no_such_scenario"))
variant("percentiles-out-of-order.json",
        lambda r: level(r)["metrics"]["ttft_s"].update(p50=9.0, p90=1.0))
variant("negative-duration.json", lambda r: level(r).update(duration_s=-3))
variant("levels-not-increasing.json",
        lambda r: r["series"][0]["levels"].reverse())
variant("empty-model-id.json", lambda r: r["metadata"]["model"].update(id="  "))
variant("negative-power.json", lambda r: level(r).update(
    power={"mean_w": -250.0, "max_w": 300.0, "energy_j": 1.0, "source": "nvml", "samples": 4}))
variant("repeated-series.json", lambda r: r["series"].append(copy.deepcopy(r["series"][0])))

# Not malformed: the control that proves the error panel is about the input, not the page.
with open(os.path.join(here, "../browser/fixtures/valid-small.json"), "w") as f:
    f.write(base_text)

# Hostile text in every free-text field a page shows.
hostile = copy.deepcopy(base)
xss = "<img src=x onerror=alert(1)>"
hostile["metadata"]["title"] = xss + " title"
hostile["metadata"]["model"]["id"] = xss
hostile["metadata"]["hardware"]["gpu_model"] = xss + " GPU"
hostile["metadata"]["engine"]["name"] = "<script>alert(2)</script>"
hostile["scenarios"][0]["name"] = xss + " scenario"
hostile["scenarios"][0]["description"] = xss
hostile["warnings"] = [xss]
with open(os.path.join(here, "../browser/fixtures/hostile-names.json"), "w") as f:
    f.write(json.dumps(hostile, indent=2))

# Other tools' result files (tests/imports, each tool's own output) cut short, of a format
# version the importers do not know, or of a kind they refuse: each gets the error panel naming
# the file, the format detected and what is wrong (tests/browser/imports.test.mjs).
imports = os.path.join(here, "../imports")


def tool_file(path):
    with open(os.path.join(imports, path)) as f:
        return f.read()


write("aiperf-truncated.json", tool_file("aiperf/c1/profile_export_aiperf.json")[:3000])
write("aiperf-unknown-schema.json", tool_file("aiperf/c1/profile_export_aiperf.json")
      .replace('"schema_version": "1.4"', '"schema_version": "2.0"', 1))
write("guidellm-truncated.json", tool_file("guidellm/benchmarks.json")[:3000])
guidellm = json.loads(tool_file("guidellm/benchmarks.json"))
guidellm["metadata"].update(version=3, guidellm_version="0.9.0")
guidellm["benchmarks"] = []
write("guidellm-unknown-version.json", json.dumps(guidellm))
write("inference-perf-truncated.json", tool_file("inference-perf/stage_1_lifecycle_metrics.json")[:2000])
write("inference-perf-summary.json", tool_file("inference-perf/summary_lifecycle_metrics.json"))
write("vllm-truncated.json", tool_file("vllm/c1.json")[:3000])
vllm = json.loads(tool_file("vllm/c1.json"))
for key in ("failed", "latencies", "start_times", "queue_times", "errors", "itls", "ttfts",
            "input_lens", "output_lens", "generated_texts"):
    vllm.pop(key, None)
write("vllm-old.json", json.dumps(vllm))
