//! The Users section's charts: TTFT by turn, TTFT and cache hits by users (caching allowed and
//! defeated side by side) and a level's timeline. The figures are `report::analysis::sessions`'
//! and `report::analysis::timeline`'s; these only place them on axes.

use infermeter_report::analysis::sessions::{SessionFindings, SessionScenario, SessionSeries};
use infermeter_report::analysis::timeline::{
    default_timeline_level, level_by_key, timeline_points,
};
use infermeter_report::analysis::Metric;
use infermeter_report::{LoadMode, Report};

use super::plot::{Plot, XAxis, YAxis};
use super::{metric_axis, plot, source_line, Source};
use crate::state::ViewState;

/// A line per session series of every report, named "Chat · caching allowed" (the same in
/// every compared report, so it keeps its colour): `lines` gives a scenario's series' points,
/// in display units, by the series' label.
fn session_lines(
    sources: &[Source],
    view: &ViewState,
    mut p: Plot,
    lines: impl Fn(&SessionScenario) -> Vec<(String, Vec<(f64, f64)>)>,
) -> Plot {
    for source in sources {
        let sessions = SessionFindings::of(source.analysis.report(), view.stat);
        for scenario in &sessions.scenarios {
            for (label, points) in lines(scenario) {
                if !points.is_empty() {
                    let shows = format!("{} · {label}", scenario.scenario_name);
                    p.lines
                        .push(source_line(sources, source, &shows, 0, points));
                }
            }
        }
    }
    p
}

/// TTFT of each turn index at the heaviest load every series of a scenario measured, caching
/// allowed and defeated side by side.
pub fn ttft_by_turn(sources: &[Source], view: &ViewState) -> Plot {
    let p = plot(
        XAxis::Turn,
        vec![metric_axis(Metric::Ttft, view.stat)],
        view,
    );
    session_lines(sources, view, p, |scenario| {
        scenario
            .ttft_by_turn()
            .into_iter()
            .map(|line| {
                let points = line
                    .points
                    .into_iter()
                    .map(|(turn, ttft)| (f64::from(turn), Metric::Ttft.to_display(ttft)))
                    .collect();
                (line.series.label(), points)
            })
            .collect()
    })
}

/// TTFT over all turns at each number of users, caching allowed and defeated side by side.
pub fn ttft_by_users(sources: &[Source], view: &ViewState) -> Plot {
    let p = plot(
        XAxis::Users,
        vec![metric_axis(Metric::Ttft, view.stat)],
        view,
    );
    session_lines(sources, view, p, |scenario| {
        users_lines(scenario, SessionSeries::ttft_points, |v| {
            Metric::Ttft.to_display(v)
        })
    })
}

/// The share of prompt tokens served from the prefix cache at each number of users.
pub fn cache_hits(sources: &[Source], view: &ViewState) -> Plot {
    let p = plot(XAxis::Users, vec![YAxis::new("Cache-hit ratio", "%")], view);
    session_lines(sources, view, p, |scenario| {
        users_lines(scenario, SessionSeries::cache_hit_points, |ratio| {
            ratio * 100.0
        })
    })
}

/// The users series of `scenario` (an open-loop sessions series has no place on the users
/// axis), `points` of each in display units.
fn users_lines(
    scenario: &SessionScenario,
    points: fn(&SessionSeries) -> Vec<(u32, f64)>,
    to_display: fn(f64) -> f64,
) -> Vec<(String, Vec<(f64, f64)>)> {
    scenario
        .series
        .iter()
        .filter(|s| s.mode == LoadMode::Users)
        .map(|s| {
            let points = points(s)
                .into_iter()
                .map(|(users, v)| (f64::from(users), to_display(v)))
                .collect();
            (s.label(), points)
        })
        .collect()
}

/// The level whose timeline is shown: the reader's pick, else the main report's default.
pub fn timeline_key(sources: &[Source], view: &ViewState) -> Option<String> {
    view.timeline
        .clone()
        .or_else(|| default_timeline_level(sources.first()?.analysis.report()))
}

/// The picked level's timeline: the chosen metric in each slice, one line per report that
/// measured that level.
pub fn timeline(sources: &[Source], view: &ViewState) -> Plot {
    let metric = view.timeline_metric;
    let mut p = plot(
        XAxis::Seconds,
        vec![YAxis::new(metric.label(), metric.unit())],
        view,
    );
    let Some(key) = timeline_key(sources, view) else {
        return p;
    };
    for source in sources {
        let report: &Report = source.analysis.report();
        let Some(level) = level_by_key(report, &key) else {
            continue;
        };
        let points: Vec<(f64, f64)> = timeline_points(level, metric, view.stat)
            .into_iter()
            .map(|(t, v)| (t, metric.to_display(v)))
            .collect();
        if !points.is_empty() {
            p.lines
                .push(source_line(sources, source, metric.label(), 0, points));
        }
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::charts::test_support::*;
    use infermeter_report::analysis::timeline::{timeline_levels, TimelineMetric};

    /// The session fixture (a real run of the collector against the simulator): TTFT by turn
    /// has a line per cache use over its four turns; the defeated cache hits nothing.
    #[test]
    fn session_charts_plot_both_cache_uses() {
        let report = sessions_sample();
        let view = ViewState::default();
        let turns = with_sources(&report, |s| ttft_by_turn(s, &view));
        let names: Vec<&str> = turns.lines.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(names, ["Chat · caching allowed", "Chat · caching defeated"]);
        for line in &turns.lines {
            let xs: Vec<f64> = line.points.iter().map(|p| p.0).collect();
            assert_eq!(xs, [1.0, 2.0, 3.0, 4.0]);
        }
        let json = chart_json(&turns);
        assert_eq!(x_axis(&json)["type"], "value");
        assert_eq!(x_axis(&json)["minInterval"], 1.0);

        let hits = with_sources(&report, |s| cache_hits(s, &view));
        let defeated = &hits.lines[1];
        assert!(defeated.points.iter().all(|p| p.1 == 0.0), "{defeated:?}");
        let allowed = &hits.lines[0];
        assert!(
            allowed.points.iter().skip(1).all(|p| p.1 > 50.0),
            "{allowed:?}"
        );
        assert_eq!(x_axis(&chart_json(&hits))["type"], "log");
        let by_users = with_sources(&report, |s| ttft_by_users(s, &view));
        let users: Vec<f64> = by_users.lines[0].points.iter().map(|p| p.0).collect();
        assert_eq!(users, [1.0, 4.0, 16.0]);
    }

    /// The timeline follows the level and the metric picked; an unknown level plots nothing.
    #[test]
    fn the_timeline_follows_the_picked_level_and_metric() {
        let report = sessions_sample();
        let levels = timeline_levels(&report);
        let default = with_sources(&report, |s| timeline(s, &ViewState::default()));
        assert_eq!(default.lines.len(), 1);
        assert_eq!(default.x, XAxis::Seconds);
        let other = ViewState {
            timeline: Some(levels[0].key.clone()),
            timeline_metric: TimelineMetric::CacheHitRatio,
            ..ViewState::default()
        };
        let picked = with_sources(&report, |s| timeline(s, &other));
        assert_ne!(picked, default);
        assert_eq!(picked.y[0].unit, "%");
        assert!(picked.lines[0]
            .points
            .iter()
            .all(|p| (0.0..=100.0).contains(&p.1)));
        let unknown = ViewState {
            timeline: Some("nope.users.1".into()),
            ..ViewState::default()
        };
        assert!(with_sources(&report, |s| timeline(s, &unknown)).is_empty());
        // A report without sessions: no session lines.
        assert!(with_sources(&sample(), |s| ttft_by_turn(s, &ViewState::default())).is_empty());
    }

    /// Compared session reports: each report's lines, the label first, same colour per line.
    #[test]
    fn compared_session_reports_overlay() {
        let a = sessions_sample();
        let mut b = sessions_sample();
        b.metadata.hardware.gpu_model = "NVIDIA H200".into();
        let p = with_all_sources(&[a, b], |s| ttft_by_turn(s, &ViewState::default()));
        assert_eq!(p.lines.len(), 4);
        assert!(p.lines[2].name.starts_with("H200 · Chat"));
        assert_eq!(p.lines[0].shows, p.lines[2].shows);
        let t = with_all_sources(
            &[sessions_sample(), {
                let mut b = sessions_sample();
                b.metadata.hardware.gpu_model = "NVIDIA H200".into();
                b
            }],
            |s| timeline(s, &ViewState::default()),
        );
        assert_eq!(t.lines.len(), 2);
    }
}
