//! The sentences of the bundled reports, worded as the reference reports word their own.

use infermeter_report::analysis::{findings, FindingsOptions};
use infermeter_report::{LoadMode, Report};

use super::*;
use crate::charts::test_support::sample;

fn of(report: &Report) -> Findings {
    findings(report, &FindingsOptions::default())
}

fn step() -> Report {
    serde_json::from_str(include_str!(
        "../../data/reports/sim-step-3.7-flash-2x-rtx-pro-6000.json"
    ))
    .unwrap()
}

#[test]
fn fastest_sentences_of_the_sample() {
    let f = of(&sample());
    assert_eq!(
        fastest::decode_by_scenario(&f).unwrap(),
        "Per-user decode speed ranges from 172.5 tok/s (Chatbot, single user) down to 13.2 \
         tok/s (Tool Calling Agentic, 32 concurrent). By the How Fast Is This? scale, that is \
         very fast at best and slow at worst. Peak speed is excellent, matching top-tier \
         single-user performance."
    );
    assert_eq!(
        fastest::decode_band(&f).unwrap(),
        "Peak per-user decode speed is 172.5 tok/s (Chatbot, single user). At 32 concurrent, \
         per-user speed ranges from 13.2 to 70.6 tok/s across scenarios: the band shows how \
         much each user's speed drops under load."
    );
    // Tool Calling Agentic (32K) scales far worse than Chatbot (1K): the reference's cause.
    assert_eq!(
        fastest::scaling(&f).unwrap(),
        "At 32 concurrent, scaling efficiency ranges from 40.9% (Chatbot) to 8% (Tool Calling \
         Agentic). Scaling drops at longer contexts: GPU memory bandwidth is the likely \
         bottleneck. Above 90% is excellent; below 50% means the requests contend heavily for \
         the GPU."
    );
    let itl = fastest::itl_by_scenario(&f).unwrap();
    assert!(
        itl.starts_with("Best inter-token latency is 5.8 ms (Chatbot, single user), rising to ")
            && itl.contains("crosses the 20 ms threshold")
            && itl.ends_with("achieve 4–8 ms at short contexts."),
        "{itl}"
    );
    // 0.189 s at best (< 0.5 s: instant), 6.18 s at worst (5–10 s: slow).
    assert_eq!(
        fastest::ttft_by_scenario(&f).unwrap(),
        "Best TTFT is 0.189 s (Chatbot, single user), worst case 6.18 s (Tool Calling Agentic, 32 \
         concurrent). By the How Responsive Is This? scale, that is instant at best and slow at \
         worst. Industry references: ~50 ms at 1K context, ~2 s at 32K, ~18 s at 128K on top \
         hardware."
    );
}

/// Reference 001's burst sentences.
#[test]
fn burst_sentences_of_the_sample() {
    let f = of(&sample());
    assert_eq!(
        burst::ttft(&f).unwrap(),
        "TTFT under queue saturation: best case 0.19 s (Chatbot, 1 user), worst case 86.5 s \
         (Tool Calling Agentic, 256 queue depth). TTFT increases with queue depth because new \
         prefills queue behind active decode operations. This is what users experience under \
         production burst load."
    );
    assert!(burst::decode(&f)
        .unwrap()
        .starts_with("Per-user decode speed ranges from "));
    let itl = burst::itl(&f).unwrap();
    assert!(itl.contains("70 ms line"), "{itl}");
}

/// The sample's peak is Chatbot at 32 concurrent: 70.6 tok/s each, 40.9% efficiency; its burst
/// runs reach higher, and the sentence says in which mode (the Max System Throughput card's).
#[test]
fn throughput_sentences_of_the_sample() {
    let report = sample();
    let f = of(&report);
    assert_eq!(
        throughput::system(&f).unwrap(),
        "Peak system throughput is 2259.2 tok/s (Chatbot, 32 concurrent), equivalent to \
         ~8,133,120 tokens/hour."
    );
    assert_eq!(
        throughput::summary(&f).unwrap(),
        "At peak throughput (32 concurrent, Chatbot), this configuration produces approximately \
         8.13 million tokens per hour with a per-user decode speed of 70.6 tok/s. Single-user \
         performance reaches 172.5 tok/s, and scaling efficiency at 32 concurrent is 40.9%. \
         Under burst load, with requests queued in the engine, throughput reaches 9774 tok/s \
         (Chatbot at 256 queue depth)."
    );
    let conditions: Vec<String> = f
        .throughput
        .table
        .iter()
        .map(throughput::condition)
        .collect();
    assert_eq!(conditions[0], "Single user");
    assert!(conditions.last().unwrap().starts_with("Max concurrency ("));
    let mut peak_only = report.clone();
    peak_only.series.retain(|s| s.mode == LoadMode::Peak);
    let text = throughput::summary(&of(&peak_only)).unwrap();
    assert!(text.ends_with("is 40.9%."), "{text}");
}

/// The Step-3.7-Flash run by context, worded as reference 003 reads its own charts.
#[test]
fn context_sentences_of_the_step_run() {
    let report = step();
    let f = of(&report);
    assert_eq!(
        context::throughput(&f).unwrap(),
        "At 5 concurrent, system throughput goes from 194 tok/s at 1K context to 21.8 tok/s at \
         96K context."
    );
    assert_eq!(
        context::decode(&f).unwrap(),
        "Per-user decode speed ranges from 95 tok/s (1 concurrent, 1K context) down to 6.79 tok/s \
         (5 concurrent, 96K context). By the How Fast Is This? scale, that is very fast at best \
         and slow at worst."
    );
    assert_eq!(
        context::ttft(&f).unwrap(),
        "Best TTFT is 0.352 s (1 concurrent, 1K context), worst case 41.7 s (5 concurrent, 96K \
         context). By the How Responsive Is This? scale, that is instant at best and frustrating \
         at worst. Industry references: ~50 ms at 1K context, ~2 s at 32K, ~18 s at 128K on top \
         hardware."
    );
    // By context, the lines are concurrencies: nothing to say about longer contexts.
    let scaling = context::scaling(&f).unwrap();
    assert!(
        scaling.starts_with("At 96K context, scaling efficiency ranges from 100% (1 concurrent)")
            && !scaling.contains("longer contexts"),
        "{scaling}"
    );
    // A run whose batching never pays: said once, for every context.
    let mut flat = report.clone();
    for s in flat.series.iter_mut().filter(|s| s.mode == LoadMode::Peak) {
        let lowest = s.levels[0].system_output_tok_s;
        s.levels
            .iter_mut()
            .for_each(|l| l.system_output_tok_s = lowest);
    }
    assert!(context::throughput(&of(&flat)).unwrap().ends_with(
        "At every context length, total throughput at 5 concurrent is no higher than at 1 \
         concurrent: batching does not pay off here."
    ));
    // The sample's batching pays off at every context: no such sentence.
    assert!(!context::throughput(&of(&sample()))
        .unwrap()
        .contains("batching"));
}

/// The key findings of the Step-3.7-Flash run, as reference 003 states its own.
#[test]
fn key_findings_of_the_step_run() {
    assert_eq!(
        of(&step()).key_findings(),
        [
            (
                "TTFT, single request",
                "0.352 s (1K context) → 35.3 s (96K context)".to_string()
            ),
            (
                "Generation speed, single request",
                "95 tok/s (1K context) → 85.8 tok/s (96K context)".to_string()
            ),
            (
                "Throughput scaling",
                "2.56× from 1 to 5 concurrent requests (Code Completion (1K))".to_string()
            ),
        ]
    );
}

#[test]
fn power_sentences_use_the_price() {
    let report = sample();
    let options = FindingsOptions {
        usd_per_kwh: 0.25,
        ..FindingsOptions::default()
    };
    let f = findings(&report, &options);
    let text = power::draw(&f).unwrap();
    // The highest mean draw of the peak-mode levels, in kW, times the price.
    let watts = report
        .series
        .iter()
        .filter(|s| s.mode == LoadMode::Peak)
        .flat_map(|s| &s.levels)
        .filter_map(|l| l.power.as_ref().map(|p| p.mean_w))
        .fold(f64::NAN, f64::max);
    let per_hour = infermeter_report::analysis::format::format_number(watts / 1000.0 * 0.25);
    assert!(
        text.contains(&format!("${per_hour}/hour in electricity at $0.25/kWh")),
        "{text} (expected ${per_hour}/hour)"
    );
    assert!(power::efficiency(&f)
        .unwrap()
        .starts_with("The most energy-efficient point was "));
    assert!(power::cost(&f)
        .unwrap()
        .starts_with("The cheapest energy per million output tokens was $"));
}

/// Compared reports: each report's sentence, named; one report: its sentence alone.
#[test]
fn compared_reports_each_get_their_sentence() {
    let a = sample();
    let mut b = sample();
    for level in b.series.iter_mut().flat_map(|s| s.levels.iter_mut()) {
        if let Some(d) = level.metrics.decode_tok_s.as_mut() {
            d.mean *= 2.0;
        }
    }
    let all = [of(&a), of(&b)];
    let labels = ["H100".to_string(), "H200".to_string()];
    let texts = for_each_report(&all, &labels, fastest::decode_band, |_| true);
    assert_eq!(
        for_each_report(&all, &labels, fastest::decode_band, |i| i == 1)[0],
        texts[1]
    );
    assert_eq!(texts.len(), 2);
    assert_eq!(texts[0].0.as_deref(), Some("H100"));
    assert!(texts[0]
        .1
        .starts_with("Peak per-user decode speed is 172.5 tok/s ("));
    assert!(texts[1]
        .1
        .starts_with("Peak per-user decode speed is 345 tok/s ("));
    let one = for_each_report(&all[..1], &labels[..1], fastest::decode_band, |_| true);
    assert_eq!(one[0].0, None);
}

/// Every report the viewer is tested on: the bundled ones and the browser tests' fixtures.
fn every_report() -> Vec<(String, Report)> {
    let root = std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let mut found = Vec::new();
    for dir in ["data/reports", "tests/browser/fixtures"] {
        for entry in std::fs::read_dir(root.join(dir)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "json") {
                let text = std::fs::read_to_string(&path).unwrap();
                let report = crate::load::parse_report("report.json", &text)
                    .unwrap_or_else(|e| panic!("{path:?}: {e:?}"));
                found.push((path.display().to_string(), report));
            }
        }
    }
    assert!(found.len() >= 6, "only {} reports", found.len());
    found
}

/// For every report and statistic: each highlight card shows the figure `infermeter summary
/// --json` prints at its place in the findings, and the sentence under a chart that states the
/// same figure shows the same text (one value, one formatter).
#[test]
fn cards_and_sentences_state_the_summarys_figures_alike() {
    use infermeter_report::analysis::Metric;
    use infermeter_report::Stat;
    let mut checked = 0;
    for (path, report) in every_report() {
        for stat in [Stat::Mean, Stat::P50, Stat::P90, Stat::P99] {
            let options = FindingsOptions {
                stat,
                ..FindingsOptions::default()
            };
            let f = findings(&report, &options);
            let json = serde_json::to_value(&f).unwrap();
            let at = |pointer: &str| json.pointer(pointer).and_then(|v| v.as_f64());
            let cards = f.cards();
            let card = |id: &str| cards.iter().find(|c| c.id == id).unwrap().value.clone();
            let says = |sentence: Option<String>, figure: &str, what: &str| {
                let sentence = sentence.unwrap_or_default();
                assert!(
                    sentence.contains(figure),
                    "{path} at {stat:?}: the {what} sentence does not say the card's {figure}: {sentence}"
                );
            };
            if let Some(v) = at("/peak/decode/high/value") {
                let figure = card("peak-decode");
                assert_eq!(
                    figure,
                    Metric::DecodeTokS.display_text(v),
                    "{path} {stat:?}"
                );
                says(
                    fastest::decode_band(&f),
                    &format!("is {figure} ("),
                    "decode band",
                );
                says(
                    fastest::decode_by_scenario(&f),
                    &format!("from {figure} ("),
                    "decode",
                );
                says(
                    context::decode(&f),
                    &format!("from {figure} ("),
                    "decode by context",
                );
                checked += 1;
            }
            if let Some(v) = at("/peak/ttft/low/value") {
                let figure = card("best-ttft");
                assert_eq!(figure, Metric::Ttft.display_text(v), "{path} {stat:?}");
                says(
                    fastest::ttft_by_scenario(&f),
                    &format!("is {figure} ("),
                    "TTFT",
                );
                says(
                    context::ttft(&f),
                    &format!("is {figure} ("),
                    "TTFT by context",
                );
            }
            if let Some(v) = at("/throughput/max/value") {
                let figure = card("max-throughput");
                assert_eq!(figure, Metric::SystemOutputTokS.display_text(v));
                // Peak mode's top is the chart's sentence; a burst level's, the table's, with its
                // mode named.
                let (sentence, mode) = match f.throughput.max.as_ref().unwrap().mode {
                    LoadMode::Peak => (throughput::system(&f), "concurrent"),
                    other => (throughput::summary(&f), other.label()),
                };
                says(sentence.clone(), &figure, "throughput summary");
                says(sentence, mode, "throughput summary");
            }
            if f.burst.safe_depths.is_empty() {
                if let Some(scaling) = at("/throughput/peak/scaling/value") {
                    let figure = card("scaling");
                    assert_eq!(figure, Metric::ScalingEfficiency.display_text(scaling));
                    says(
                        throughput::summary(&f),
                        &format!("is {figure}."),
                        "throughput summary",
                    );
                }
            } else if let Some((deepest, _)) = f.burst.deepest() {
                assert_eq!(card("safe-queue"), deepest.value_text());
            }
        }
    }
    assert!(
        checked >= 20,
        "only {checked} report and statistic pairs had figures"
    );
}

/// The session fixture (measured on the simulator with its prefix cache): the Users section's
/// sentences name the scenario, the load and both cache uses; the sample has none.
#[test]
fn users_sentences_of_the_session_fixture() {
    let f = of(&crate::charts::test_support::sessions_sample());
    let turn = users::ttft_by_turn(&f).unwrap();
    assert!(
        turn.starts_with("At 16 users, turn 4 of Chat: ")
            && turn.contains(" with caching, ")
            && turn.ends_with("× sooner)."),
        "{turn}"
    );
    let load = users::ttft_by_users(&f).unwrap();
    assert!(
        load.starts_with("At 16 users, Chat's TTFT over all turns is ")
            && load.ends_with(" with caching defeated."),
        "{load}"
    );
    let hits = users::cache_hits(&f).unwrap();
    assert!(
        hits.starts_with("Share of Chat's prompt tokens served from the prefix cache: ")
            && hits.contains("rising to")
            && hits.contains("0% throughout with caching defeated.")
            && hits.contains("Trace sample-mooncake at 4× speed: "),
        "{hits}"
    );
    let none = of(&sample());
    assert_eq!(users::ttft_by_turn(&none), None);
    assert_eq!(users::cache_hits(&none), None);
}
