//! Prompt files and length distributions (#36) against the simulator: a ShareGPT file, a JSONL
//! chat file and a text file drive one run; the simulator's own account of each request
//! (`/infermeter/requests`) bills the prompt tokens the collector counted; a seeded run sends the
//! same prompts in the same order again; bad files are refused, naming file and line, before
//! anything is sent; shards of a dataset level send each prompt at most once and merge into the
//! single run's totals.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use infermeter_report::{
    load_report, LengthDistribution, LoadMode, Outcome, PromptKind, RequestRecord, RunStatus,
};
use infermeter_sim::SimConfig;

use crate::common::*;
use crate::shards::run_shards;

/// Words of the test's prose: a small vocabulary, deterministic for a seed.
const VOCABULARY: [&str; 24] = [
    "the", "river", "ran", "past", "old", "mills", "and", "quiet", "farms", "where", "children",
    "played", "near", "stone", "bridges", "while", "evening", "light", "fell", "across", "green",
    "fields", "of", "barley",
];

fn prose(seed: u64, words: usize) -> String {
    let mut state = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let mut text = Vec::with_capacity(words);
    for i in 0..words {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let word = VOCABULARY[(state >> 33) as usize % VOCABULARY.len()];
        text.push(if i % 11 == 10 {
            format!("{word}.")
        } else {
            word.to_string()
        });
    }
    text.join(" ")
}

/// `n` ShareGPT conversations of varied lengths (a system turn in some, answers in all).
fn sharegpt(n: u64) -> String {
    let conversations: Vec<serde_json::Value> = (0..n)
        .map(|i| {
            let mut turns = Vec::new();
            if i % 3 == 0 {
                turns.push(serde_json::json!({"from": "system", "value": "Answer briefly."}));
            }
            turns.push(serde_json::json!({"from": "human", "value": prose(i, 10 + (i as usize * 37) % 150)}));
            turns.push(serde_json::json!({"from": "gpt", "value": prose(1000 + i, 4 + (i as usize * 13) % 40)}));
            serde_json::json!({"id": format!("c{i}"), "conversations": turns})
        })
        .collect();
    serde_json::to_string_pretty(&conversations).unwrap()
}

/// `n` JSONL chats (a system and a user message) with their output lengths.
fn jsonl_chats(n: u64) -> String {
    (0..n)
        .map(|i| {
            let line = serde_json::json!({
                "messages": [
                    {"role": "system", "content": "You are a helpful assistant."},
                    {"role": "user", "content": prose(500 + i, 20 + (i as usize * 29) % 120)},
                ],
                "output_tokens": 6 + (i * 7) % 30,
            });
            format!("{line}\n")
        })
        .collect()
}

const SUITE: &str = r#"
name = "datasets"
warmup = 1
[[scenario]]
id = "sharegpt"
name = "ShareGPT"
prompts = { file = "sharegpt.json", order = "shuffle", seed = 7, count = 16, max_input = 400 }
[[scenario]]
id = "chat"
name = "JSONL chat"
prompts = "chat.jsonl"
[[scenario]]
id = "text"
name = "Text"
input_tokens = { distribution = "uniform", min = 32, max = 256 }
output_tokens = { distribution = "normal", mean = 24, stddev = 6, min = 4 }
seed = 5
prompts = { file = "book.txt", count = 12 }
[peak]
levels = [1, 3]
requests_per_slot = 4
min_seconds = 0
"#;

fn write_files(dir: &Path) {
    std::fs::write(dir.join("sharegpt.json"), sharegpt(40)).unwrap();
    std::fs::write(dir.join("chat.jsonl"), jsonl_chats(10)).unwrap();
    std::fs::write(dir.join("book.txt"), prose(77, 3000)).unwrap();
}

/// The simulator's billed prompt tokens per response id.
async fn billed(base_url: &str) -> HashMap<String, u64> {
    served_by_id(base_url, "prompt_tokens").await
}

async fn run(base_url: &str, suite: &Path, report: &Path, extra: &[&str]) {
    let mut options = vec!["--quiet"];
    options.extend(extra);
    let args = run_args(base_url, suite.to_str().unwrap(), report, &options);
    let out = infermeter(&args, &[]).await;
    assert!(out.status.success(), "{}", text(&out));
}

/// Each scenario's prompts (their place in the file) at peak 1, in the order they were sent.
fn sent_order(records: &[RequestRecord]) -> BTreeMap<String, Vec<u64>> {
    let mut measured: Vec<&RequestRecord> = records
        .iter()
        .filter(|r| !r.warmup && r.mode == LoadMode::Peak && r.concurrency == 1)
        .collect();
    measured.sort_by(|a, b| a.sent_s.total_cmp(&b.sent_s));
    let mut order: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for r in measured {
        let prompt = r
            .asked
            .expect("asked lengths")
            .prompt
            .expect("a file's prompt");
        order.entry(r.scenario.clone()).or_default().push(prompt);
    }
    order
}

/// Acceptance 1 (#36).
#[tokio::test(flavor = "multi_thread")]
async fn prompt_files_drive_a_run_billed_as_counted_and_repeatable() {
    let sim = start_sim(fast_sim_args()).await;
    let dir = out_dir("datasets");
    write_files(&dir);
    let suite = small_suite(&dir, SUITE);
    let first = dir.join("first.json");
    run(&sim.base_url(), &suite, &first, &[]).await;
    check_json_schema(&first);
    let report = load_report(&std::fs::read_to_string(&first).unwrap()).unwrap();
    assert_eq!(report.status, RunStatus::Complete);
    let kinds: Vec<PromptKind> = report
        .scenarios
        .iter()
        .map(|s| s.prompts.as_ref().expect("a prompt file").kind)
        .collect();
    assert_eq!(
        kinds,
        [PromptKind::Sharegpt, PromptKind::Jsonl, PromptKind::Text]
    );
    // #43 item 9: the report says what counted the prompts: here the server's /tokenize.
    let counter = report
        .measurement
        .prompt_tokens
        .as_ref()
        .expect("the prompts' tokenizer");
    assert_eq!(
        (counter.tokenizer, counter.exact),
        (infermeter_report::PromptTokenizer::Server, true)
    );
    assert_eq!(
        infermeter_report::PromptTokenizer::describe(counter),
        "the server's /tokenize (exact)"
    );
    let sharegpt = report.scenarios[0].prompts.as_ref().unwrap();
    assert_eq!((sharegpt.available, sharegpt.used), (40, 16));
    assert_eq!(sharegpt.sha256.len(), 64);
    let book = report.scenarios[2].prompts.as_ref().unwrap();
    assert_eq!((book.available, book.used), (12, 12));
    let text_plan = report.scenarios[2].lengths.as_ref().unwrap();
    assert_eq!(
        text_plan.input,
        LengthDistribution::Uniform { min: 32, max: 256 }
    );

    // Server's usage = record = what the collector counted, request by request.
    let billed = billed(&sim.base_url()).await;
    let records = read_records(&first);
    let measured: Vec<&RequestRecord> = records.iter().filter(|r| !r.warmup).collect();
    assert!(measured.len() >= 3 * (4 + 3 * 4), "{}", measured.len());
    let mut input_lengths: BTreeMap<&str, Vec<u32>> = BTreeMap::new();
    for r in &measured {
        assert_eq!(r.outcome, Outcome::Ok, "{r:?}");
        let asked = r.asked.expect("asked lengths");
        let id = r.response_id.as_deref().expect("a response id");
        assert_eq!(
            billed[id],
            u64::from(asked.input_tokens),
            "billed prompt tokens of {id} ({})",
            r.scenario
        );
        assert_eq!(r.input_tokens, Some(asked.input_tokens), "{r:?}");
        // Enforced output lengths: the file's for a dataset, drawn for the text.
        assert_eq!(r.output_tokens, Some(asked.output_tokens), "{r:?}");
        input_lengths
            .entry(r.scenario.as_str())
            .or_default()
            .push(asked.input_tokens);
    }
    for (scenario, lengths) in &input_lengths {
        let distinct: std::collections::BTreeSet<_> = lengths.iter().collect();
        assert!(
            distinct.len() >= 3,
            "{scenario}: varied lengths {lengths:?}"
        );
    }
    assert!(input_lengths["text"].iter().all(|n| (32..=256).contains(n)));
    // The JSONL file's own output lengths.
    let chat_outputs: Vec<u32> = measured
        .iter()
        .filter(|r| r.scenario == "chat")
        .map(|r| r.output_tokens.unwrap())
        .collect();
    assert!(chat_outputs.iter().all(|o| (6..36).contains(o)));

    // The summary states each prompt file, the lengths asked and those each level realised.
    let out = infermeter(&["summary", first.to_str().unwrap()], &[]).await;
    assert!(out.status.success(), "{}", text(&out));
    let summary = String::from_utf8_lossy(&out.stdout);
    for expected in [
        "Prompts ShareGPT",
        "ShareGPT sharegpt.json (sha256 ",
        "16 of 40 prompts, shuffled (seed 7), filters input ≤ 400",
        "Lengths asked Text",
        "input uniform 32–256, output normal mean 24, stddev 6",
        "Lengths Text",
        "peak 3 concurrent: input mean ",
        "Prompt tokens counted by          the server's /tokenize (exact)",
    ] {
        assert!(summary.contains(expected), "no {expected:?} in\n{summary}");
    }

    // The same seed: the same prompts in the same order.
    let second = dir.join("second.json");
    run(&sim.base_url(), &suite, &second, &[]).await;
    let (a, b) = (sent_order(&records), sent_order(&read_records(&second)));
    assert_eq!(a.keys().collect::<Vec<_>>(), ["chat", "sharegpt", "text"]);
    for (scenario, order) in &a {
        let again = &b[scenario];
        let n = order.len().min(again.len());
        assert!(n >= 4, "{scenario}: {order:?}");
        assert_eq!(order[..n], again[..n], "{scenario}");
    }
    // In order for the JSONL file: its lines one after another.
    assert_eq!(a["chat"][..4], [0, 1, 2, 3]);
    // Shuffled for ShareGPT: not the file's order.
    assert_ne!(a["sharegpt"][..4], [0, 1, 2, 3]);
    sim.shutdown().await;
}

/// A fast simulated GPU whose model has a context of `context` tokens.
fn small_context_sim(dir: &Path, context: u32) -> SimConfig {
    let profiles = dir.join("profiles.toml");
    let fast = std::fs::read_to_string(fast_profiles()).unwrap();
    std::fs::write(&profiles, format!("{fast}max_model_len = {context}\n")).unwrap();
    SimConfig {
        profiles: Some(profiles),
        ..fast_sim_args()
    }
}

/// Acceptance 3 (#36): each bad file is refused with its name and line, and the simulator
/// served nothing.
#[tokio::test(flavor = "multi_thread")]
async fn bad_prompt_files_are_refused_before_anything_is_sent() {
    let dir = out_dir("datasets-bad");
    let sim = start_sim(small_context_sim(&dir, 2048)).await;
    let long = prose(3, 3000);
    let cases: [(&str, String, &str, &[&str]); 6] = [
        ("notjson.json", "[\n {\"conversations\": [{\"from\": \"human\", \"value\": \"hi\"}]},\n {oops}\n]".into(), "", &["notjson.json line 3", "not valid JSON"]),
        ("nohuman.json", "[\n {\"conversations\": [{\"from\": \"human\", \"value\": \"hi\"}]},\n {\"conversations\": [{\"from\": \"gpt\", \"value\": \"hello\"}]}\n]".into(), "", &["nohuman.json line 3", "no human turn"]),
        ("empty.jsonl", "\n".into(), "", &["empty.jsonl", "holds no prompt"]),
        ("few.jsonl", jsonl_chats(10), ", count = 8, max_input = 40", &["few.jsonl", "fewer than the 8 asked", "widen the filters"]),
        ("long.jsonl", format!("{{\"prompt\": \"short\", \"output_tokens\": 8}}\n{}\n", serde_json::json!({"prompt": long, "output_tokens": 8})), "", &["long.jsonl line 2", "context of 2048 tokens"]),
        ("bad.jsonl", "{\"prompt\": \"a\"}\n{\"prompt\": 5}\n".into(), "", &["bad.jsonl line 2", "\"prompt\""]),
    ];
    for (file, body, settings, expected) in cases {
        std::fs::write(dir.join(file), body).unwrap();
        let suite = format!(
            "name = 'bad'\nwarmup = 1\n[[scenario]]\nid = 's'\nname = 'S'\n\
             prompts = {{ file = '{file}'{settings} }}\n[burst]\nlevels = [2]\n"
        );
        let suite = small_suite(&dir, &suite);
        let report = dir.join(format!("{file}.report.json"));
        let args = run_args(
            &sim.base_url(),
            suite.to_str().unwrap(),
            &report,
            &["--quiet"],
        );
        let out = infermeter(&args, &[]).await;
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{file}: {}", text(&out));
        for e in expected {
            assert!(stderr.contains(e), "{file}: no {e:?} in\n{stderr}");
        }
        assert!(!report.exists(), "{file}: no report");
    }
    // Not one completion reached the simulator.
    assert!(billed(&sim.base_url()).await.is_empty());
    sim.shutdown().await;
}

/// Acceptance 4 (#36): three shards of a burst of 12 over a shuffled ShareGPT file send twelve
/// different prompts, the single run's twelve, and merge into its totals.
#[tokio::test(flavor = "multi_thread")]
async fn shards_send_each_prompt_once_and_merge_into_the_single_run() {
    let sim = start_sim(fast_sim_args()).await;
    let dir = out_dir("datasets-shards");
    write_files(&dir);
    let suite = small_suite(
        &dir,
        "name = 'dataset-shards'\nwarmup = 1\n[[scenario]]\nid = 'sharegpt'\nname = 'ShareGPT'\n\
         prompts = { file = 'sharegpt.json', order = 'shuffle', seed = 11, count = 20 }\n\
         [burst]\nlevels = [12]\n",
    );
    let steps = ["--level-seconds", "3", "--drain-seconds", "2"];
    let shards = run_shards(&sim.base_url(), suite.to_str().unwrap(), &dir, 3, &steps).await;
    let merged = dir.join("merged.json");
    let mut args = vec!["merge".to_string()];
    args.extend(shards.iter().map(|f| f.to_str().unwrap().to_string()));
    args.extend(["-o".into(), merged.to_str().unwrap().into()]);
    let out = infermeter(&args, &[]).await;
    assert!(out.status.success(), "{}", text(&out));
    let single = dir.join("single.json");
    run(&sim.base_url(), &suite, &single, &[]).await;

    let prompts = |path: &Path| -> Vec<u64> {
        let mut sent: Vec<u64> = read_records(path)
            .iter()
            .filter(|r| !r.warmup)
            .map(|r| r.asked.unwrap().prompt.unwrap())
            .collect();
        sent.sort_unstable();
        sent
    };
    let sharded = prompts(&merged);
    assert_eq!(sharded.len(), 12);
    let mut distinct = sharded.clone();
    distinct.dedup();
    assert_eq!(distinct, sharded, "each prompt at most once across shards");
    assert_eq!(sharded, prompts(&single), "the single run's prompts");
    for (i, shard) in shards.iter().enumerate() {
        assert!(!prompts(shard).is_empty(), "shard {i} sent its share");
    }
    // The same per-request totals.
    let totals = |path: &Path| {
        let report = load_report(&std::fs::read_to_string(path).unwrap()).unwrap();
        let level = &report.series[0].levels[0];
        let sum = |d: Option<&infermeter_report::Distribution>| {
            d.and_then(|d| Some((d.mean * d.count? as f64).round() as u64))
        };
        (
            level.requests.ok,
            sum(level.metrics.input_tokens.as_ref()),
            sum(level.metrics.output_tokens.as_ref()),
        )
    };
    assert_eq!(totals(&merged), totals(&single));
    assert_eq!(totals(&single).0, 12);
    sim.shutdown().await;
}

/// Acceptance 2 (#36), on the simulator, whose model ends answers where it draws an end of
/// sequence: natural-stop answers are recorded with the lengths the engine generated, below the
/// caps asked, and the report says the outputs missed the distribution because of it.
#[tokio::test(flavor = "multi_thread")]
async fn natural_stops_are_recorded_with_their_true_lengths() {
    let sim = start_sim(fast_sim_args()).await;
    let dir = out_dir("datasets-natural");
    write_files(&dir);
    let suite = small_suite(
        &dir,
        "name = 'natural'\nwarmup = 1\n[[scenario]]\nid = 'text'\nname = 'Text'\n\
         input_tokens = { distribution = 'lognormal', mean = 120, stddev = 60, max = 400 }\n\
         output_tokens = { distribution = 'uniform', min = 800, max = 1000 }\n\
         output_stop = 'natural'\nprompts = { file = 'book.txt', count = 24 }\n\
         [burst]\nlevels = [24]\n",
    );
    let report_path = dir.join("report.json");
    run(&sim.base_url(), &suite, &report_path, &[]).await;
    check_json_schema(&report_path);
    let generated = served_by_id(&sim.base_url(), "completion_tokens").await;
    let records = read_records(&report_path);
    let measured: Vec<&RequestRecord> = records.iter().filter(|r| !r.warmup).collect();
    assert_eq!(measured.len(), 24);
    let mut stopped_early = 0;
    for r in &measured {
        let asked = r.asked.unwrap();
        assert!(asked.natural, "{r:?}");
        let id = r.response_id.as_deref().unwrap();
        let output = r.output_tokens.unwrap();
        assert_eq!(u64::from(output), generated[id], "{r:?}");
        let chunk_tokens: u32 = r.chunks.iter().map(|c| c.tokens).sum();
        assert_eq!(chunk_tokens, output, "{r:?}");
        assert!(output <= asked.output_tokens, "{r:?}");
        stopped_early += u32::from(output < asked.output_tokens);
    }
    // The simulated model's answers average 300 tokens (geometric): about 93% end before 800.
    assert!(stopped_early >= 16, "{stopped_early} of 24 stopped early");
    let report = load_report(&std::fs::read_to_string(&report_path).unwrap()).unwrap();
    assert!(
        report
            .warnings
            .iter()
            .any(|w| w.contains("output lengths were") && w.contains("natural stop")),
        "{:?}",
        report.warnings
    );
    sim.shutdown().await;
}

/// `--prompts` gives every `[[scenario]]` of a suite a file: a text file cut to each scenario's
/// fixed lengths, token for token; a JSONL file's own prompts with the scenario's outputs.
#[tokio::test(flavor = "multi_thread")]
async fn the_prompts_option_gives_each_scenario_a_file() {
    let sim = start_sim(fast_sim_args()).await;
    let dir = out_dir("datasets-option");
    write_files(&dir);
    let suite = small_suite(
        &dir,
        "name = 'fixed'\nwarmup = 1\n\
         [[scenario]]\nid = 'short'\nname = 'Short'\ninput_tokens = 64\noutput_tokens = 8\n\
         [[scenario]]\nid = 'long'\nname = 'Long'\ninput_tokens = 300\noutput_tokens = 16\n\
         [peak]\nlevels = [1]\nrequests_per_slot = 3\nmin_seconds = 0\n",
    );
    let book = format!("{},count=6", dir.join("book.txt").display());
    let chats = format!("{},count=5", dir.join("chat.jsonl").display());
    for (file, kind, used) in [(book, PromptKind::Text, 6), (chats, PromptKind::Jsonl, 5)] {
        let report_path = dir.join(format!("{kind:?}.json"));
        run(&sim.base_url(), &suite, &report_path, &["--prompts", &file]).await;
        let report = load_report(&std::fs::read_to_string(&report_path).unwrap()).unwrap();
        let billed = billed(&sim.base_url()).await;
        for (scenario, (input, output)) in report.scenarios.iter().zip([(64, 8), (300, 16)]) {
            let source = scenario.prompts.as_ref().expect("the file of --prompts");
            assert_eq!((source.kind, source.used), (kind, used));
            for r in read_records(&report_path)
                .iter()
                .filter(|r| !r.warmup && r.scenario == scenario.id)
            {
                let asked = r.asked.unwrap();
                assert!(asked.prompt.is_some(), "{r:?}");
                if kind == PromptKind::Text {
                    assert_eq!(asked.input_tokens, input, "{r:?}");
                }
                assert_eq!(r.input_tokens, Some(asked.input_tokens), "{r:?}");
                let id = r.response_id.as_deref().unwrap();
                assert_eq!(billed[id], u64::from(asked.input_tokens));
                assert_eq!(r.output_tokens, Some(output), "{r:?}");
            }
        }
    }
    sim.shutdown().await;
}
