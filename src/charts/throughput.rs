//! System throughput: output tokens per second summed over all concurrent requests (peak mode).

use infermeter_report::analysis::format::format_number;
use infermeter_report::analysis::highlights::{max_throughput_level, peak_throughput_level};
use infermeter_report::analysis::scaling::tokens_per_hour;
use infermeter_report::analysis::{series_points, Metric};
use infermeter_report::{LoadMode, Stat};

use super::plot::{Plot, XAxis};
use super::{metric_axis, plot, scenario_lines, Source};
use crate::state::ViewState;

/// System throughput per scenario.
pub fn system(sources: &[Source], view: &ViewState) -> Plot {
    let metric = Metric::SystemOutputTokS;
    let mut p = plot(
        XAxis::ConcurrentUsers,
        vec![metric_axis(metric, view.stat)],
        view,
    );
    p.lines = scenario_lines(sources, LoadMode::Peak, metric, view.stat, 0);
    p
}

/// One row of the throughput table: the best scenario at one concurrency.
#[derive(Debug, Clone, PartialEq)]
pub struct ThroughputRow {
    /// "Single user", "Mid concurrency (8 reqs)", "Max concurrency (32 reqs)".
    pub condition: String,
    pub concurrency: u32,
    /// Highest system throughput of any scenario at this concurrency, tok/s.
    pub system_tok_s: f64,
    /// Highest per-user decode speed of any scenario at this concurrency, tok/s.
    pub per_user_tok_s: Option<f64>,
    pub tokens_per_hour: f64,
}

/// Single user, the middle measured concurrency and the highest one, of one report's peak
/// series (fewer rows when fewer levels were measured).
pub fn table(source: &Source, stat: Stat) -> Vec<ThroughputRow> {
    let report = source.analysis.report();
    let best_at = |metric: Metric, concurrency: u32| {
        report
            .scenarios
            .iter()
            .flat_map(|s| source.analysis.points(&s.id, LoadMode::Peak, metric, stat))
            .filter(|&(c, _)| c == concurrency)
            .map(|(_, v)| v)
            .fold(None, |best: Option<f64>, v| {
                Some(best.map_or(v, |b| b.max(v)))
            })
    };
    let mut levels: Vec<u32> = report
        .series
        .iter()
        .filter(|s| s.mode == LoadMode::Peak)
        .flat_map(|s| s.levels.iter().map(|l| l.concurrency))
        .collect();
    levels.sort_unstable();
    levels.dedup();
    let (Some(&first), Some(&last)) = (levels.first(), levels.last()) else {
        return Vec::new();
    };
    let mid = levels[levels.len() / 2];
    let mut picks = vec![(first, condition_name(first, "Lowest concurrency"))];
    if mid != first && mid != last {
        picks.push((mid, condition_name(mid, "Mid concurrency")));
    }
    if last != first {
        picks.push((last, condition_name(last, "Max concurrency")));
    }
    picks
        .into_iter()
        .filter_map(|(concurrency, condition)| {
            let system_tok_s = best_at(Metric::SystemOutputTokS, concurrency)?;
            Some(ThroughputRow {
                condition,
                concurrency,
                system_tok_s,
                per_user_tok_s: best_at(Metric::DecodeTokS, concurrency),
                tokens_per_hour: tokens_per_hour(system_tok_s),
            })
        })
        .collect()
}

/// The reports' sentence under the table, for the scenario and level of peak throughput: "At
/// peak throughput (24 concurrent, Chatbot), this configuration produces approximately 10.7
/// million tokens per hour with a per-user decode speed of 38.8 tok/s. Single-user performance
/// reaches 152.9 tok/s, and scaling efficiency at 32 concurrent is 39%."
///
/// `rows` is the report's table ([`table`]): its first row gives the single-user speed, the
/// best of any scenario, as the reports state it.
pub fn summary(source: &Source, rows: &[ThroughputRow], stat: Stat) -> Option<String> {
    let analysis = &source.analysis;
    let (series, level) = peak_throughput_level(analysis.report())?;
    let scenario = analysis.scenario(&series.scenario)?;
    let (concurrency, tok_s) = (level.concurrency, level.system_output_tok_s);
    let per_user = Metric::DecodeTokS
        .value(level, stat)
        .map_or(String::new(), |d| {
            format!(
                " with a per-user decode speed of {} tok/s",
                format_number(d)
            )
        });
    let first = rows
        .first()
        .and_then(|r| Some((r.concurrency, r.per_user_tok_s?)));
    // The peak's own series, already found: not looked up again.
    let efficiency = series_points(series, Metric::ScalingEfficiency, stat);
    let lowest = match (first, efficiency.last()) {
        (Some((lowest, speed)), Some(&(top, e))) => format!(
            " {} performance reaches {} tok/s, and scaling efficiency at {top} concurrent is {}%.",
            if lowest == 1 {
                "Single-user"
            } else {
                "Lowest-concurrency"
            },
            format_number(speed),
            format_number(Metric::ScalingEfficiency.to_display(e))
        ),
        _ => String::new(),
    };
    Some(format!(
        "At peak throughput ({concurrency} concurrent, {}), this configuration produces \
         approximately {:.1} million tokens per hour{per_user}.{lowest}{}",
        scenario.name,
        tokens_per_hour(tok_s) / 1e6,
        burst_peak(source, tok_s)
    ))
}

/// The highlight card's Max System Throughput can come from a burst run, which no chart here
/// shows: when it does and is higher, says so, so the card and this section do not seem to
/// disagree.
fn burst_peak(source: &Source, peak_tok_s: f64) -> String {
    // The cards show the main report only.
    let card = if source.index == 0 {
        ": the Max System Throughput card's figure"
    } else {
        ""
    };
    match max_throughput_level(source.analysis.report()) {
        Some((series, level))
            if series.mode == LoadMode::Burst && level.system_output_tok_s > peak_tok_s =>
        {
            format!(
                " Under burst load, with requests queued in the engine, throughput reaches {} \
                 tok/s ({} at queue depth {}){card}.",
                format_number(level.system_output_tok_s),
                source
                    .analysis
                    .scenario(&series.scenario)
                    .map_or(series.scenario.as_str(), |s| s.name.as_str()),
                level.concurrency
            )
        }
        _ => String::new(),
    }
}

/// One scenario's system throughput at the highest concurrency it measured: how throughput
/// falls with context, as reference 003's table rows per context length show it.
#[derive(Debug, Clone, PartialEq)]
pub struct ScenarioTop {
    pub scenario: String,
    pub concurrency: u32,
    pub system_tok_s: f64,
}

/// Every scenario's [`ScenarioTop`], in the report's order (peak runs only).
pub fn by_scenario(source: &Source, stat: Stat) -> Vec<ScenarioTop> {
    let analysis = &source.analysis;
    analysis
        .report()
        .scenarios
        .iter()
        .filter_map(|s| {
            let points = analysis.points(&s.id, LoadMode::Peak, Metric::SystemOutputTokS, stat);
            let &(concurrency, system_tok_s) = points.last()?;
            Some(ScenarioTop {
                scenario: s.name.clone(),
                concurrency,
                system_tok_s,
            })
        })
        .collect()
}

fn condition_name(concurrency: u32, what: &str) -> String {
    if concurrency == 1 {
        "Single user".into()
    } else {
        format!("{what} ({concurrency} reqs)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::charts::test_support::*;

    #[test]
    fn one_line_per_peak_scenario() {
        let report = sample();
        let p = with_sources(&report, |s| system(s, &ViewState::default()));
        assert_eq!(p.lines.len(), peak_scenarios(&report));
        assert_eq!(p.y[0].name, "System throughput");
    }

    #[test]
    fn table_has_single_mid_and_max_rows_with_tokens_per_hour() {
        let report = sample();
        let rows = with_sources(&report, |s| table(&s[0], Stat::Mean));
        assert_eq!(rows[0].condition, "Single user");
        assert!(rows.len() >= 2);
        assert!(rows
            .last()
            .unwrap()
            .condition
            .starts_with("Max concurrency"));
        for row in &rows {
            assert!((row.tokens_per_hour - row.system_tok_s * 3600.0).abs() < 1e-6);
        }
        assert!(rows.windows(2).all(|w| w[0].concurrency < w[1].concurrency));
    }

    /// The Step-3.7-Flash run's five contexts at 5 requests, from 194.4 tok/s at 1K down.
    #[test]
    fn by_scenario_reads_each_scenarios_top_level() {
        let report: infermeter_report::Report = serde_json::from_str(include_str!(
            "../../data/reports/sim-step-3.7-flash-2x-rtx-pro-6000.json"
        ))
        .unwrap();
        let rows = with_sources(&report, |s| by_scenario(&s[0], Stat::Mean));
        let names: Vec<&str> = rows.iter().map(|r| r.scenario.as_str()).collect();
        assert_eq!(
            names,
            [
                "Code Completion (1K)",
                "8K context",
                "32K context",
                "64K context",
                "96K context"
            ]
        );
        assert!(rows.iter().all(|r| r.concurrency == 5));
        assert_eq!(format_number(rows[0].system_tok_s), "194.4");
        assert!(rows
            .windows(2)
            .all(|w| w[0].system_tok_s > w[1].system_tok_s));
    }

    /// The sample's peak is Chatbot at 32 concurrent: 70.6 tok/s each, 40.9% efficiency.
    #[test]
    fn summary_reads_the_peak_level_of_its_scenario() {
        let report = sample();
        let text = with_sources(&report, |s| {
            summary(&s[0], &table(&s[0], Stat::Mean), Stat::Mean)
        })
        .unwrap();
        assert_eq!(
            text,
            "At peak throughput (32 concurrent, Chatbot), this configuration produces \
             approximately 8.1 million tokens per hour with a per-user decode speed of 70.6 \
             tok/s. Single-user performance reaches 172.5 tok/s, and scaling efficiency at 32 \
             concurrent is 40.9%. Under burst load, with requests queued in the engine, \
             throughput reaches 9774 tok/s (Chatbot at queue depth 256): the Max System \
             Throughput card's figure."
        );
        // A compared report's sentence names no card: the cards are the main report's.
        let text = with_all_sources(&[report.clone(), report.clone()], |s| {
            summary(&s[1], &table(&s[1], Stat::Mean), Stat::Mean)
        })
        .unwrap();
        assert!(text.ends_with("(Chatbot at queue depth 256)."), "{text}");
        // Without burst runs, nothing to reconcile.
        let mut peak_only = report.clone();
        peak_only.series.retain(|s| s.mode == LoadMode::Peak);
        let text = with_sources(&peak_only, |s| {
            summary(&s[0], &table(&s[0], Stat::Mean), Stat::Mean)
        })
        .unwrap();
        assert!(text.ends_with("is 40.9%."), "{text}");
    }
}
