//! A real engine: llama.cpp's `llama-server` on CPU (engines/llama-cpp), measured through the
//! built binary with `--engine auto`, then checked against the engine's own `timings`.
//!
//! Needs `INFERMETER_LLAMA_SERVER`, `INFERMETER_LLAMA_MODEL` and `INFERMETER_LLAMA_TOKENIZER`
//! (the lines `engines/llama-cpp/setup.sh` prints). Without them it says why and passes, except
//! under `CI=true`, where a skipped real-engine test would hide a broken setup.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use infermeter_report::stats::percentile_sorted;
use infermeter_report::{
    load_report, CacheUse, LoadMode, Outcome, RequestRecord, RunStatus, TokenSource,
};

use crate::common::*;

const OUTPUT_TOKENS: u32 = 32;
const INPUTS: [u32; 3] = [64, 256, 1024];

struct LlamaPaths {
    server: PathBuf,
    model: PathBuf,
    tokenizer: PathBuf,
}

fn llama_paths() -> Option<LlamaPaths> {
    let var = |name| std::env::var_os(name).map(PathBuf::from);
    match (
        var("INFERMETER_LLAMA_SERVER"),
        var("INFERMETER_LLAMA_MODEL"),
        var("INFERMETER_LLAMA_TOKENIZER"),
    ) {
        (Some(server), Some(model), Some(tokenizer)) => Some(LlamaPaths {
            server,
            model,
            tokenizer,
        }),
        _ => {
            let why =
                "INFERMETER_LLAMA_SERVER, INFERMETER_LLAMA_MODEL and INFERMETER_LLAMA_TOKENIZER \
                       are not all set; run `bash engines/llama-cpp/setup.sh` and export the \
                       LLAMA_SERVER, MODEL_GGUF and TOKENIZER_DIR it prints under these names";
            if std::env::var("CI").is_ok_and(|v| v == "true") {
                panic!("the llama.cpp test cannot run under CI=true: {why}");
            }
            eprintln!("SKIPPED llama.cpp test: {why}");
            None
        }
    }
}

/// The server process, killed when the test ends (also on panic).
struct LlamaServer {
    child: Child,
    base_url: String,
    log: PathBuf,
}

impl Drop for LlamaServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl LlamaServer {
    /// `-t 1`: on two cores the collector needs the other one.
    async fn start(paths: &LlamaPaths, dir: &Path) -> LlamaServer {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let log = dir.join("llama-server.log");
        let log_file = std::fs::File::create(&log).unwrap();
        let child = Command::new(&paths.server)
            .args(["-m".as_ref(), paths.model.as_os_str()])
            .args(["-a", "tiny-llama", "--host", "127.0.0.1", "--port"])
            .arg(port.to_string())
            .args([
                "-c",
                "16384",
                "-np",
                "4",
                "-t",
                "1",
                "--metrics",
                "--no-webui",
            ])
            .stdin(Stdio::null())
            .stdout(log_file.try_clone().unwrap())
            .stderr(log_file)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", paths.server.display()));
        let mut server = LlamaServer {
            child,
            base_url: format!("http://127.0.0.1:{port}/v1"),
            log,
        };
        server.wait_healthy(port).await;
        server
    }

    async fn wait_healthy(&mut self, port: u16) {
        let client = reqwest::Client::new();
        let deadline = Instant::now() + Duration::from_secs(120);
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("llama-server exited ({status}):\n{}", self.log_tail());
            }
            let health = client
                .get(format!("http://127.0.0.1:{port}/health"))
                .send()
                .await;
            if health.is_ok_and(|r| r.status().is_success()) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("llama-server not healthy after 120 s:\n{}", self.log_tail());
    }

    fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(30)..].join("\n")
    }
}

fn suite_toml(name: &str, inputs: &[u32], modes: &str) -> String {
    let mut toml = format!("name = '{name}'\nwarmup = 1\n");
    for input in inputs {
        toml.push_str(&format!(
            "[[scenario]]\nid = 'in-{input}'\nname = 'In {input}'\ninput_tokens = {input}\noutput_tokens = {OUTPUT_TOKENS}\n"
        ));
    }
    toml + modes
}

async fn run_suite(server: &LlamaServer, dir: &Path, suite: &str, extra: &[&str]) -> PathBuf {
    let suite = small_suite(dir, suite);
    let report = dir.join("report.json");
    let mut args = run_args(&server.base_url, suite.to_str().unwrap(), &report, extra);
    args.extend(["--quiet", "--gpu", "CPU (no GPU)"].map(String::from));
    let out = infermeter(&args, &[]).await;
    assert!(
        out.status.success(),
        "{}\nllama-server log:\n{}",
        text(&out),
        server.log_tail()
    );
    let out = infermeter(&["validate", report.to_str().unwrap()], &[]).await;
    assert!(out.status.success(), "{}", text(&out));
    report
}

fn ok_measured(records: &[RequestRecord]) -> Vec<&RequestRecord> {
    let measured: Vec<&RequestRecord> = records.iter().filter(|r| !r.warmup).collect();
    for r in &measured {
        assert_eq!(r.outcome, Outcome::Ok, "{r:?}");
    }
    measured
}

/// Output length exact from usage, and the chunks' running counts add up to it.
fn check_output(r: &RequestRecord) {
    assert_eq!(r.output_tokens, Some(OUTPUT_TOKENS), "{r:?}");
    let chunk_tokens: u32 = r.chunks.iter().map(|c| c.tokens).sum();
    assert_eq!(chunk_tokens, OUTPUT_TOKENS, "{r:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn timed_llama_cpp_cpu_matches_its_own_timings() {
    let _timing = timing_sensitive().await;
    let Some(paths) = llama_paths() else {
        return;
    };
    let dir = out_dir("llama-cpp");
    let server = LlamaServer::start(&paths, &dir).await;
    let tokenizer = paths.tokenizer.to_str().unwrap();

    // Completions: the HF tokenizer counts the raw prompt exactly, so input lengths are exact.
    let modes = "[peak]\nlevels = [1, 4]\nrequests_per_slot = 2\nmin_seconds = 0\n\
                 [burst]\nlevels = [1, 4]\n";
    let report_path = run_suite(
        &server,
        &dir,
        &suite_toml("llama-test", &INPUTS, modes),
        &["--api", "completions", "--tokenizer", tokenizer],
    )
    .await;
    let report = load_report(&std::fs::read_to_string(&report_path).unwrap()).unwrap();
    assert_eq!(report.status, RunStatus::Complete);
    assert_eq!(report.metadata.engine.name, "llama.cpp", "auto-detected");
    let version = report.metadata.engine.version.clone().unwrap_or_default();
    assert!(
        version.starts_with('b'),
        "build_info from /props: {version}"
    );
    assert_eq!(
        report.measurement.output_token_source,
        TokenSource::ContinuousUsage
    );
    assert_only_lag_warnings(&report);
    assert_eq!(report.series.len(), INPUTS.len() * 2);
    for series in &report.series {
        for level in &series.levels {
            let server_metrics = level.server.as_ref().expect("server metrics");
            assert_eq!(server_metrics.dialect.as_deref(), Some("llamacpp"));
            let engine_decode = server_metrics.engine_decode_tok_s.expect("engine decode");
            let client_decode = level.metrics.decode_tok_s.unwrap();
            assert_eq!(engine_decode.count, client_decode.count);
            assert!(server_metrics.engine_prefill_tok_s.is_some());
            // llama-server closes every connection: the close must not erase the last stamp.
            if cfg!(target_os = "linux") {
                let client = level.client.as_ref().expect("client self-check");
                assert_eq!(client.event_clock.as_deref(), Some("kernel_receive"));
            }
        }
    }
    assert!(report
        .series
        .iter()
        .any(|s| s.mode == LoadMode::Peak && s.levels.iter().any(|l| l.concurrency == 4)));

    let records = read_records(&report_path);
    let measured = ok_measured(&records);
    assert!(measured.len() >= INPUTS.len() * (2 + 8 + 1 + 4));
    let mut decode_ratios = Vec::new();
    // The same ratios of the requests that had the engine to themselves (one user).
    let mut alone_ratios = Vec::new();
    let mut ttft_minus_prompt_ms = Vec::new();
    for r in &measured {
        check_output(r);
        let asked = report
            .scenarios
            .iter()
            .find(|s| s.id == r.scenario)
            .unwrap()
            .input_tokens;
        assert_eq!(r.input_tokens, Some(asked), "usage.prompt_tokens: {r:?}");
        // `cache_prompt: false`: no prompt token came from the cache, all were computed.
        assert_eq!(r.cached_tokens, Some(0), "{r:?}");
        let t = r.engine_timings.expect("timings on every request");
        assert_eq!(t.prompt_n, Some(u64::from(asked)));
        assert_eq!(t.predicted_n, Some(u64::from(OUTPUT_TOKENS)));
        let (ttft, e2e) = (r.ttft_s.unwrap(), r.e2e_s.unwrap());
        let client_decode = f64::from(OUTPUT_TOKENS - 1) / (e2e - ttft);
        let predicted_ms = t.predicted_ms.unwrap();
        let engine_per_second = t.predicted_n.unwrap() as f64 / predicted_ms * 1000.0;
        decode_ratios.push(client_decode / engine_per_second);
        if r.concurrency == 1 {
            alone_ratios.push(client_decode / engine_per_second);
        }
        // TTFT holds the whole prefill (plus any wait for a slot and the trip to the client).
        let prompt_ms = t.prompt_ms.unwrap();
        ttft_minus_prompt_ms.push(ttft * 1000.0 - prompt_ms);
        assert!(ttft * 1000.0 + 0.01 >= prompt_ms, "TTFT {ttft} s < {t:?}");
    }
    decode_ratios.sort_by(f64::total_cmp);
    alone_ratios.sort_by(f64::total_cmp);
    ttft_minus_prompt_ms.sort_by(f64::total_cmp);
    let at = |p: f64| percentile_sorted(&decode_ratios, p);
    let (lo, mid, hi) = (at(0.0), at(50.0), at(100.0));
    eprintln!(
        "llama.cpp, {} requests: client decode tok/s / engine predicted_per_second min {lo:.3} median {mid:.3} max {hi:.3}; TTFT - prompt_ms min {:.1} ms median {:.1} ms",
        decode_ratios.len(),
        ttft_minus_prompt_ms[0],
        percentile_sorted(&ttft_minus_prompt_ms, 50.0),
    );
    // Measured 0.95..0.99 (median 0.97 = 31/32: the engine divides by all 32 tokens, the
    // client by the 31 gaps after the first). A 1.5x error in either clock or count moves
    // them all and fails the median. The tails are checked where the engine served one user:
    // with four slots, a slot's generation clock starts when its prompt is done, but its first
    // token leaves with the next batch, which may carry another slot's prompt (on 2026-11-29,
    // 6 of 69 requests at 256 tokens in, four users, read 1.52-1.55: the engine's decode time
    // held ~250 ms of a neighbour's prefill). A single request may still land far off on a
    // busy machine (once 1.95: its first token reached the client late, with the next ones),
    // so the check is on the 5th to 95th percentiles, not on every request.
    let alone = |p: f64| percentile_sorted(&alone_ratios, p);
    assert!(
        (0.9..1.05).contains(&mid) && alone(5.0) > 0.7 && alone(95.0) < 1.3,
        "decode ratios {decode_ratios:?}, one user {alone_ratios:?}"
    );

    // Chat: the role-only first chunk, usage on a separate `choices: []` chunk.
    let chat_dir = out_dir("llama-cpp-chat");
    let report_path = run_suite(
        &server,
        &chat_dir,
        &suite_toml("llama-chat-test", &[64], "[burst]\nlevels = [4]\n"),
        &["--engine", "llamacpp", "--tokenizer", tokenizer],
    )
    .await;
    let report = load_report(&std::fs::read_to_string(&report_path).unwrap()).unwrap();
    assert_eq!(report.metadata.engine.api.as_deref(), Some("chat"));
    let records = read_records(&report_path);
    let measured = ok_measured(&records);
    assert_eq!(measured.len(), 4);
    for r in measured {
        check_output(r);
        // Exact with the chat template's tokens counted too.
        assert_eq!(r.input_tokens, Some(64), "{r:?}");
        assert!(r.ttft_s.unwrap() > 0.0 && r.engine_timings.is_some());
    }

    // Sessions (acceptance 2): with prompt caching on, every later turn finds the
    // conversation in the slot's cache (`timings.cache_n`); with caching defeated, none does.
    let sessions_dir = out_dir("llama-cpp-sessions");
    let sessions = "name = 'llama-sessions'\nwarmup = 0\n\
        [[session]]\nid = 'chat'\nname = 'Chat'\nsystem_prompt_tokens = 128\n\
        first_turn_tokens = 64\nturn_tokens = 32\nturns = 3\noutput_tokens = 16\n\
        think_time = { distribution = 'fixed', seconds = 0.1 }\n\
        [users]\nlevels = [1, 2]\n";
    let report_path = run_suite(
        &server,
        &sessions_dir,
        sessions,
        &["--engine", "llamacpp", "--tokenizer", tokenizer],
    )
    .await;
    let report = load_report(&std::fs::read_to_string(&report_path).unwrap()).unwrap();
    assert_only_lag_warnings(&report);
    let records = read_records(&report_path);
    let measured = ok_measured(&records);
    assert_eq!(measured.len(), 2 * (1 + 2) * 3);
    for r in measured {
        let turn = r.session.expect("a session turn").turn;
        let cache_n = r.engine_timings.and_then(|t| t.cache_n);
        // The record's cached tokens are the engine's own count.
        assert_eq!(r.cached_tokens.map(u64::from), cache_n, "{r:?}");
        match r.cache.unwrap() {
            CacheUse::Allowed if turn >= 2 => {
                assert!(cache_n.unwrap() > 0, "turn {turn}: {r:?}")
            }
            CacheUse::Allowed => {}
            CacheUse::Defeated => assert_eq!(cache_n, Some(0), "turn {turn}: {r:?}"),
        }
    }

    natural_stop(&server, tokenizer).await;
}

/// Acceptance 2 of #36 on a real engine: prompts cut from a text file to drawn lengths, outputs
/// left to stop where the model stops. llama.cpp is sent no `ignore_eos` (its slots say so), and
/// each record holds the engine's own count of what it generated. (This tiny random-weight model
/// never emits its end of sequence under greedy decoding, so its answers run to the caps; with
/// its end-of-sequence logit raised by `--extra-body '{"logit_bias": {"2": 1.7}}'` some end
/// early and are recorded at llama.cpp's count, but which ones changes from run to run, and an
/// answer ended at its first token has no content, so that is not a test.) The run's extra body
/// reaches the engine: its slots show the `top_k` it carried.
async fn natural_stop(server: &LlamaServer, tokenizer: &str) {
    let dir = out_dir("llama-cpp-natural");
    let words = [
        "the", "river", "ran", "past", "old", "mills", "and", "quiet", "farms.",
    ];
    let text: Vec<&str> = (0..4000)
        .map(|i| words[(i * 7 + i / 5) % words.len()])
        .collect();
    std::fs::write(dir.join("book.txt"), text.join(" ")).unwrap();
    let suite = "name = 'llama-natural'\nwarmup = 1\n[[scenario]]\nid = 'book'\nname = 'Book'\n\
        input_tokens = { distribution = 'uniform', min = 32, max = 200 }\n\
        output_tokens = { distribution = 'uniform', min = 8, max = 24 }\n\
        output_stop = 'natural'\nprompts = { file = 'book.txt', count = 8 }\n\
        [burst]\nlevels = [4]\n";
    let report_path = run_suite(
        server,
        &dir,
        suite,
        &[
            "--api",
            "completions",
            "--tokenizer",
            tokenizer,
            // Greedy already (temperature 0): this changes no answer, and shows in /slots.
            "--extra-body",
            r#"{"top_k": 1}"#,
        ],
    )
    .await;
    let report = load_report(&std::fs::read_to_string(&report_path).unwrap()).unwrap();
    assert_eq!(
        report.metadata.labels.get("extra_body").map(String::as_str),
        Some(r#"{"top_k":1}"#)
    );
    let records = read_records(&report_path);
    let measured = ok_measured(&records);
    assert_eq!(measured.len(), 4);
    for r in measured {
        let asked = r.asked.expect("asked lengths");
        assert!(asked.natural, "{r:?}");
        assert_eq!(r.input_tokens, Some(asked.input_tokens), "{r:?}");
        let output = r.output_tokens.expect("usage");
        let t = r.engine_timings.expect("timings");
        assert_eq!(t.predicted_n, Some(u64::from(output)), "{r:?}");
        let chunk_tokens: u32 = r.chunks.iter().map(|c| c.tokens).sum();
        assert_eq!(chunk_tokens, output, "{r:?}");
        assert!(output <= asked.output_tokens, "{r:?}");
    }
    let root = server.base_url.trim_end_matches("/v1");
    let slots = get_json(&format!("{root}/slots")).await;
    let used: Vec<&serde_json::Value> = slots
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s.get("params"))
        .collect();
    assert!(!used.is_empty(), "{slots}");
    for params in used {
        assert_eq!(params["ignore_eos"], false, "{params}");
        assert_eq!(params["top_k"], 1, "{params}");
    }
}

/// The most tasks the engine's log shows in its slots at once (`launch_slot_` to `release`),
/// and the slots it says it made (`n_slots = N`).
fn slots_in_log(log: &str) -> (u32, u32) {
    let made = log
        .lines()
        .find_map(|l| l.split("n_slots = ").nth(1))
        .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|n| n.parse().ok())
        .expect("llama-server logs n_slots");
    let (mut active, mut most) = (0u32, 0u32);
    for line in log.lines() {
        if line.contains("launch_slot_: id") {
            active += 1;
            most = most.max(active);
        } else if line.contains("release: id") {
            active = active.saturating_sub(1);
        }
    }
    (made, most)
}

/// The most requests the client saw generating at once: their first-to-last-token spans
/// (less a millisecond at each end, for stamps a hair apart) overlapping.
fn most_generating(records: &[&RequestRecord]) -> usize {
    let spans: Vec<(f64, f64)> = records
        .iter()
        .map(|r| (r.sent_s + r.ttft_s.unwrap(), r.sent_s + r.e2e_s.unwrap()))
        .collect();
    spans
        .iter()
        .map(|(start, _)| {
            spans
                .iter()
                .filter(|(s, e)| *s <= *start + 0.001 && *e > *start + 0.001)
                .count()
        })
        .max()
        .unwrap_or(0)
}

/// Acceptance 2 of #37: a sweep of llama-server's `--parallel` (its slots). The engine's log
/// says how many slots it made and how many it used at once; each report shows the same: one
/// slot generates one request at a time and queues the others before their first token, four
/// generate together.
#[tokio::test(flavor = "multi_thread")]
async fn timed_a_sweep_of_llama_cpp_parallel_slots_differs_as_its_log_says() {
    let _timing = timing_sensitive().await;
    let Some(paths) = llama_paths() else {
        return;
    };
    let dir = out_dir("llama-cpp-sweep");
    let suite = small_suite(
        &dir,
        &suite_toml(
            "llama-sweep",
            &[64],
            "[peak]\nlevels = [4]\nrequests_per_slot = 2\nmin_seconds = 0\n",
        ),
    );
    let serve = format!(
        "exec {} -m {} -a tiny-llama --host 127.0.0.1 --port {{port}} -c 8192 --parallel {{n}} \
         -t 1 --metrics --no-webui",
        paths.server.display(),
        paths.model.display()
    );
    let out_dir = dir.join("out");
    let swept = [
        "--serve",
        &serve,
        "--param",
        "n=1,4",
        "--ready",
        "/health",
        "--ready-timeout",
        "120",
        "--",
        "--api",
        "completions",
        "--tokenizer",
        paths.tokenizer.to_str().unwrap(),
        "--gpu",
        "CPU (no GPU)",
    ];
    let out = infermeter(&sweep_args(&suite, &out_dir, &swept), &[]).await;
    assert!(out.status.success(), "{}", text(&out));
    let mut waits = Vec::new();
    for n in [1u32, 4] {
        let report_path = out_dir.join(format!("n-{n}.json"));
        let report = load_report(&std::fs::read_to_string(&report_path).unwrap()).unwrap();
        assert_eq!(report.status, RunStatus::Complete);
        assert_eq!(report.metadata.engine.name, "llama.cpp");
        let configuration = report.metadata.configuration.as_ref().unwrap();
        assert_eq!(
            configuration.parameters.get("n"),
            Some(n.to_string().as_str())
        );
        let log = std::fs::read_to_string(out_dir.join(format!("logs/n-{n}.log"))).unwrap();
        let (made, used) = slots_in_log(&log);
        assert_eq!(made, n, "the engine made the slots asked for");
        let records = read_records(&report_path);
        let measured = ok_measured(&records);
        assert!(measured.len() >= 8, "{} requests", measured.len());
        let generating = most_generating(&measured);
        eprintln!(
            "llama.cpp --parallel {n}: log n_slots {made}, most slots busy at once {used}; \
             report: most requests generating at once {generating}"
        );
        // The report shows what the engine's log does: as many generating at once as it had
        // slots busy (never more than it made).
        assert!(generating as u32 <= made, "{generating} > {made} slots");
        if n == 1 {
            assert_eq!((used, generating), (1, 1));
        } else {
            assert!(used > 1 && generating > 1, "{used} busy, {generating} seen");
        }
        // The wait before the engine starts a request (TTFT less its own prompt time).
        let mut wait: Vec<f64> = measured
            .iter()
            .map(|r| r.ttft_s.unwrap() - r.engine_timings.unwrap().prompt_ms.unwrap() / 1000.0)
            .collect();
        wait.sort_by(f64::total_cmp);
        waits.push(percentile_sorted(&wait, 50.0));
    }
    eprintln!(
        "llama.cpp sweep: median wait for a slot --parallel 1 {:.3} s, --parallel 4 {:.3} s",
        waits[0], waits[1]
    );
    // One slot for four users: most of them wait for another's whole answer.
    assert!(
        waits[0] > 2.0 * waits[1],
        "median wait for a slot: --parallel 1 {:.3} s, --parallel 4 {:.3} s",
        waits[0],
        waits[1]
    );
}
