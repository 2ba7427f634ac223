//! Acceptance 1: the four-scenario suite (quick) in peak and burst mode, validated and summarised.

use infermeter_report::{load_report, LoadMode, RunStatus};

use crate::common::*;

#[tokio::test(flavor = "multi_thread")]
async fn four_scenario_quick_runs_validates_and_summarises() {
    let sim = start_sim(fast_sim_args()).await;
    let dir = out_dir("four-scenario-quick");
    let report_path = dir.join("report.json");
    let extra = [
        "--quiet",
        "--quick",
        "--gpu",
        "Test GPU",
        "--label",
        "purpose=integration-test",
    ];
    let args = run_args(&sim.base_url(), "four-scenario", &report_path, &extra);
    let out = infermeter(&args, &[]).await;
    assert!(out.status.success(), "{}", text(&out));
    eprintln!("report for reuse: {}", report_path.display());

    let report = load_report(&std::fs::read_to_string(&report_path).unwrap()).unwrap();
    assert_eq!(report.status, RunStatus::Complete);
    assert_eq!(report.scenarios.len(), 4);
    assert_eq!(report.metadata.engine.name, "infermeter-sim");
    assert_eq!(report.metadata.labels["purpose"], "integration-test");
    // --gpu wins over what the server reports; the rest comes from the simulator's card.
    let meta = &report.metadata;
    assert_eq!(meta.hardware.gpu_model, "Test GPU");
    assert_eq!(meta.hardware.vram_gb, Some(4000.0));
    assert_eq!(meta.model.organization.as_deref(), Some("Qwen"));
    assert_eq!(meta.model.architecture.as_deref(), Some("MoE"));
    assert_eq!(meta.model.active_params_b, Some(3.3));
    assert!(meta.synthetic, "a simulated run is marked synthetic");
    for mode in [LoadMode::Peak, LoadMode::Burst] {
        let series: Vec<_> = report.series.iter().filter(|s| s.mode == mode).collect();
        assert_eq!(series.len(), 4, "{mode:?}");
        for s in series {
            let levels: Vec<u32> = s.levels.iter().map(|l| l.concurrency).collect();
            assert_eq!(levels, [1, 4, 16], "{} {mode:?}", s.scenario);
            for l in &s.levels {
                assert_eq!(l.requests.errored + l.requests.incomplete, 0);
                let out_tokens = l.metrics.output_tokens.unwrap();
                assert_eq!((out_tokens.min, out_tokens.max), (Some(256.0), Some(256.0)));
                assert!(l.metrics.ttft_s.unwrap().mean > 0.0);
                assert!(l.system_output_tok_s > 0.0);
                // Over loopback on Linux every event carries the kernel's receive timestamp.
                let clock = if cfg!(target_os = "linux") {
                    "kernel_receive"
                } else {
                    "parse"
                };
                let client = l.client.as_ref().expect("client self-check");
                assert_eq!(
                    client.event_clock.as_deref(),
                    Some(clock),
                    "{} {mode:?}",
                    s.scenario
                );
            }
        }
    }
    // Peak levels measure only the steady-state window: at N=4, the first wave of 4 is excluded.
    let peak4 = &report.series[0].levels[1];
    let ttft_samples = peak4.metrics.ttft_s.unwrap().count.unwrap();
    assert!(ttft_samples >= 4);
    assert!(peak4.requests.total() > ttft_samples);

    let records = read_records(&report_path);
    assert_eq!(report.records.as_ref().unwrap().count, records.len() as u64);
    assert!(records.iter().any(|r| r.warmup));
    // Every prompt is unique, so nothing may come from a prefix cache.
    assert!(records.iter().all(|r| r.cached_tokens.unwrap_or(0) == 0));

    check_json_schema(&report_path);

    let out = infermeter(&["summary", report_path.to_str().unwrap(), "--json"], &[]).await;
    assert!(out.status.success(), "{}", text(&out));
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let findings = &summary["reports"][0]["findings"];
    assert_eq!(findings["requests"]["success_rate"], 1.0);
    assert_eq!(
        findings["burst"]["safe_depths"].as_array().unwrap().len(),
        4
    );
    assert!(
        findings["peak"]["decode"]["high"]["value"]
            .as_f64()
            .unwrap()
            > 0.0
    );

    let out = infermeter(&["validate", report_path.to_str().unwrap()], &[]).await;
    assert!(out.status.success(), "{}", text(&out));

    // An existing report is never overwritten without --force.
    let args = run_args(&sim.base_url(), "four-scenario", &report_path, &["--quick"]);
    let again = infermeter(&args, &[]).await;
    assert!(!again.status.success());
    assert!(text(&again).contains("--force") && text(&again).contains("report.json"));
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn validate_explains_a_broken_report() {
    let dir = out_dir("validate-broken");
    let path = dir.join("broken.json");
    std::fs::write(&path, r#"{"schema_version": "9.0.0"}"#).unwrap();
    let out = infermeter(&["validate", path.to_str().unwrap()], &[]).await;
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out).contains("newer"), "{}", text(&out));
}

#[tokio::test(flavor = "multi_thread")]
async fn run_refuses_zero_gpus_before_measuring() {
    let dir = out_dir("zero-gpus");
    let report = dir.join("report.json");
    let args = run_args(
        "http://127.0.0.1:9/v1",
        "four-scenario",
        &report,
        &["--gpu-count", "0"],
    );
    let out = infermeter(&args, &[]).await;
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("--gpu-count"), "{}", text(&out));
    assert!(!report.exists());
}
