//! Referee of the bundled four-GPU comparison's ranking (data/index.json "comparisons"): each
//! configuration's users meeting the SLO, throughput per GPU and dollars per million tokens at
//! that load, recomputed here from the reports' raw JSON (each request's columns, each level's
//! recorded throughput) without the report crate's analysis, against `summary --json`.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::common::{infermeter, manifest_dir};

/// The columns' time unit, seconds (the report format's tick).
const TICK_S: f64 = 1e-4;
const USERS: u32 = 500;
const PRICES: [(&str, f64); 3] = [("H100", 2.69), ("H200", 3.59), ("B200", 5.98)];

/// One measured peak level: its users, the share of its requests meeting TTFT ≤ 2 s and
/// TPOT ≤ 50 ms, and its recorded output throughput per GPU.
#[derive(Debug, Clone, Copy)]
struct Level {
    users: f64,
    share: f64,
    tok_s_per_gpu: f64,
}

fn share_meeting(columns: &Value) -> f64 {
    let n = |key: &str, i: usize| columns[key][i].as_u64().unwrap();
    let total = columns["status"].as_array().unwrap().len();
    let met = (0..total)
        .filter(|&i| {
            let (ttft, e2e, tokens) = (n("ttft", i), n("e2e", i), n("output_tokens", i));
            let ttft_ok = ttft as f64 * TICK_S <= 2.0 + 1e-9;
            let tpot_ok =
                tokens <= 1 || (e2e - ttft) as f64 * TICK_S <= 0.050 * (tokens - 1) as f64 + 1e-9;
            n("status", i) == 0 && ttft_ok && tpot_ok
        })
        .count();
    met as f64 / total as f64
}

/// Each peak series of `report`, by scenario id.
fn peak_levels(report: &Value) -> BTreeMap<String, Vec<Level>> {
    let gpus = report["metadata"]["hardware"]["gpu_count"]
        .as_f64()
        .unwrap();
    let mut out = BTreeMap::new();
    for series in report["series"].as_array().unwrap() {
        if series["mode"] != "peak" {
            continue;
        }
        let levels = series["levels"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| Level {
                users: l["concurrency"].as_f64().unwrap(),
                share: share_meeting(&l["per_request"]),
                tok_s_per_gpu: l["system_output_tok_s"].as_f64().unwrap() / gpus,
            })
            .collect();
        out.insert(series["scenario"].as_str().unwrap().to_string(), levels);
    }
    out
}

/// The last level such that it and every lower one meet 95%, and the first that does not:
/// `(None, _)` when even the lowest misses, `(_, None)` when every level passes.
fn limit(levels: &[Level]) -> (Option<Level>, Option<Level>) {
    match levels.iter().position(|l| l.share < 0.95) {
        None => (levels.last().copied(), None),
        Some(0) => (None, Some(levels[0])),
        Some(i) => (Some(levels[i - 1]), Some(levels[i])),
    }
}

async fn summary(extra: &[&str]) -> Value {
    let index: Value = serde_json::from_str(
        &std::fs::read_to_string(manifest_dir().join("../data/index.json")).unwrap(),
    )
    .unwrap();
    let mut args: Vec<String> = vec!["summary".into()];
    for path in index["comparisons"][0]["paths"].as_array().unwrap() {
        let path = manifest_dir().join("../data").join(path.as_str().unwrap());
        args.push(path.display().to_string());
    }
    let prices: Vec<String> = PRICES.iter().map(|(k, p)| format!("{k}={p}")).collect();
    for a in [
        "--json",
        "--users",
        &USERS.to_string(),
        "--slo",
        "ttft=2s,tpot=50ms",
        "--usd-per-gpu-hour",
        &prices.join(","),
    ] {
        args.push(a.to_string());
    }
    args.extend(extra.iter().map(|a| a.to_string()));
    let out = infermeter(&args, &[]).await;
    assert!(out.status.success(), "{out:?}");
    serde_json::from_slice(&out.stdout).unwrap()
}

fn reports() -> Vec<Value> {
    let index: Value = serde_json::from_str(
        &std::fs::read_to_string(manifest_dir().join("../data/index.json")).unwrap(),
    )
    .unwrap();
    index["comparisons"][0]["paths"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let path = manifest_dir().join("../data").join(p.as_str().unwrap());
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
        })
        .collect()
}

fn price_of(report: &Value) -> f64 {
    let model = report["metadata"]["hardware"]["gpu_model"]
        .as_str()
        .unwrap();
    PRICES
        .iter()
        .find(|(k, _)| model.contains(k))
        .map(|p| p.1)
        .unwrap()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs())
}

/// Measured levels only: every figure is a measured level's, so each agrees exactly; only
/// configurations whose limit was found are ranked, in order of what 500 users cost an hour.
#[tokio::test]
async fn the_measured_ranking_agrees_with_the_raw_columns() {
    let reports = reports();
    let printed = summary(&["--measured-only"]).await;
    let rankings = printed["configuration"]["rankings"].as_array().unwrap();
    assert_eq!(rankings.len(), 4);
    let mut ranked_somewhere = 0;
    for ranking in rankings {
        let scenario = ranking["scenario"].as_str().unwrap();
        let mut expected_order: Vec<(f64, f64, usize)> = Vec::new();
        for row in ranking["rows"].as_array().unwrap() {
            let index = row["report"].as_u64().unwrap() as usize;
            let report = &reports[index];
            let gpus = report["metadata"]["hardware"]["gpu_count"]
                .as_f64()
                .unwrap();
            let levels = &peak_levels(report)[scenario];
            let what = format!("{scenario} {}", row["label"]);
            match limit(levels) {
                (Some(pass), Some(fail)) => {
                    assert_eq!(row["standing"], "ranked", "{what}");
                    assert_eq!(
                        row["max_load"]["passing"].as_f64(),
                        Some(pass.users),
                        "{what}"
                    );
                    assert_eq!(
                        row["max_load"]["failing"].as_f64(),
                        Some(fail.users),
                        "{what}"
                    );
                    let at = &row["at_slo"];
                    assert_eq!(at["load"].as_f64(), Some(pass.users), "{what}");
                    assert_eq!(at["basis"], "measured", "{what}");
                    let tput = at["throughput_per_gpu"].as_f64().unwrap();
                    assert!(close(tput, pass.tok_s_per_gpu), "{what}: {tput}");
                    let per_m =
                        price_of(report) * gpus / (pass.tok_s_per_gpu * gpus * 3600.0) * 1e6;
                    let printed_m = at["usd_per_million"].as_f64().unwrap();
                    assert!(close(printed_m, per_m), "{what}: {printed_m} vs {per_m}");
                    let replicas = USERS.div_ceil(pass.users as u32);
                    assert_eq!(
                        row["replicas"]["replicas"].as_u64(),
                        Some(u64::from(replicas))
                    );
                    let per_hour = f64::from(replicas) * gpus * price_of(report);
                    let printed_h = row["replicas"]["usd_per_hour"].as_f64().unwrap();
                    assert!(
                        close(printed_h, per_hour),
                        "{what}: {printed_h} vs {per_hour}"
                    );
                    expected_order.push((per_hour, per_m, index));
                }
                (Some(_), None) => {
                    // Every level passes: a lower bound, never ranked.
                    assert_eq!(row["standing"], "no_limit_found", "{what}");
                    assert_eq!(row["rank"], Value::Null, "{what}");
                    assert_eq!(row["max_load"]["kind"], "all_pass", "{what}");
                }
                (None, _) => assert_eq!(row["rank"], Value::Null, "{what}"),
            }
        }
        expected_order.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
        let ranked: Vec<usize> = ranking["rows"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| !r["rank"].is_null())
            .map(|r| r["report"].as_u64().unwrap() as usize)
            .collect();
        let expected: Vec<usize> = expected_order.iter().map(|e| e.2).collect();
        assert_eq!(ranked, expected, "{scenario}: the ranking's order");
        ranked_somewhere += ranked.len();
    }
    assert!(
        ranked_somewhere >= 4,
        "some scenario has measured limits to rank"
    );
}

/// The default answer reads between the last passing and the first failing level: the limit
/// lies between them (whole users), its throughput between theirs, and no ranked row is a
/// bound, in any scenario.
#[tokio::test]
async fn the_interpolated_ranking_stays_between_the_measured_levels() {
    let reports = reports();
    let printed = summary(&[]).await;
    for ranking in printed["configuration"]["rankings"].as_array().unwrap() {
        let scenario = ranking["scenario"].as_str().unwrap();
        for row in ranking["rows"].as_array().unwrap() {
            let report = &reports[row["report"].as_u64().unwrap() as usize];
            let what = format!("{scenario} {}", row["label"]);
            let ranked = !row["rank"].is_null();
            assert!(
                !ranked || row["max_load"]["kind"] == "between",
                "{what}: a bound ranked"
            );
            let (Some(pass), Some(fail)) = limit(&peak_levels(report)[scenario]) else {
                assert!(!ranked, "{what}");
                continue;
            };
            assert!(ranked, "{what}");
            let at = &row["at_slo"];
            let load = at["load"].as_f64().unwrap();
            assert!(
                load >= pass.users && load < fail.users && load.fract() == 0.0,
                "{what}: {load}"
            );
            let tput = at["throughput_per_gpu"].as_f64().unwrap();
            let (lo, hi) = (
                pass.tok_s_per_gpu.min(fail.tok_s_per_gpu),
                pass.tok_s_per_gpu.max(fail.tok_s_per_gpu),
            );
            assert!(
                tput >= lo - 1e-9 && tput <= hi + 1e-9,
                "{what}: {tput} outside {lo}..{hi}"
            );
            let upr = row["replicas"]["users_per_replica"].as_u64().unwrap();
            assert_eq!(upr, load as u64, "{what}");
            assert_eq!(
                row["replicas"]["replicas"].as_u64(),
                Some(u64::from(USERS).div_ceil(upr))
            );
        }
    }
}
