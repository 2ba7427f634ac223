//! The Pareto frontier: the operating points no other point beats on both axes at once (more
//! throughput per GPU and more interactivity, or whichever two figures are plotted). A point
//! off the frontier is dominated: some configuration and load gives as much of both and more
//! of one.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::operating::{Figure, SeriesPoints};

/// Indices of the points of `points` that no other point dominates, ascending in x (then y).
/// `higher_x`/`higher_y`: whether more is better on that axis. Points that tie exactly are all
/// kept: neither dominates the other. Non-finite points are never on it.
pub fn pareto_front(points: &[(f64, f64)], higher_x: bool, higher_y: bool) -> Vec<usize> {
    let oriented =
        |(x, y): (f64, f64)| (if higher_x { x } else { -x }, if higher_y { y } else { -y });
    let finite = |p: &(f64, f64)| p.0.is_finite() && p.1.is_finite();
    let mut front: Vec<usize> = (0..points.len())
        .filter(|&i| finite(&points[i]))
        .filter(|&i| {
            let (x, y) = oriented(points[i]);
            !points.iter().filter(|p| finite(p)).any(|&q| {
                let (qx, qy) = oriented(q);
                qx >= x && qy >= y && (qx > x || qy > y)
            })
        })
        .collect();
    crate::order::sort_by(&mut front, |&a, &b| {
        points[a]
            .0
            .total_cmp(&points[b].0)
            .then(points[a].1.total_cmp(&points[b].1))
    });
    front
}

/// One operating point of a comparison: which series (index into the series compared), which
/// of its points, the report and load it comes from, and its two plotted figures.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PointRef {
    pub series: usize,
    pub point: usize,
    pub report: usize,
    pub load: f64,
    pub x: f64,
    pub y: f64,
}

/// The frontier of one scenario across every compared report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ScenarioFrontier {
    pub scenario: String,
    pub scenario_name: String,
    pub x: Figure,
    pub y: Figure,
    /// On the frontier, ascending in x.
    pub frontier: Vec<PointRef>,
    /// Every other point with both figures: what some frontier point beats.
    pub dominated: Vec<PointRef>,
}

impl ScenarioFrontier {
    /// The frontier of `scenario` over `series` (of every compared report), `y` against `x`.
    pub fn of(series: &[SeriesPoints], scenario: &str, x: Figure, y: Figure) -> ScenarioFrontier {
        let mut all: Vec<PointRef> = Vec::new();
        let mut name = String::new();
        for (index, s) in series.iter().enumerate() {
            if s.scenario != scenario {
                continue;
            }
            name.clone_from(&s.scenario_name);
            all.extend(s.xy(x, y).into_iter().map(|(point, x, y)| PointRef {
                series: index,
                point,
                report: s.report,
                load: s.points[point].load,
                x,
                y,
            }));
        }
        let xy: Vec<(f64, f64)> = all.iter().map(|p| (p.x, p.y)).collect();
        let on = pareto_front(&xy, x.higher_is_better(), y.higher_is_better());
        let frontier: Vec<PointRef> = on.iter().map(|&i| all[i]).collect();
        let dominated = (0..all.len())
            .filter(|i| !on.contains(i))
            .map(|i| all[i])
            .collect();
        ScenarioFrontier {
            scenario: scenario.to_string(),
            scenario_name: name,
            x,
            y,
            frontier,
            dominated,
        }
    }

    /// Whether point `point` of series `series` is on the frontier.
    pub fn is_on(&self, series: usize, point: usize) -> bool {
        self.frontier
            .iter()
            .any(|p| p.series == series && p.point == point)
    }

    /// The reports with a point on the frontier, in order of first appearance along it.
    pub fn reports_on(&self) -> Vec<usize> {
        let mut reports: Vec<usize> = Vec::new();
        for p in &self.frontier {
            if !reports.contains(&p.report) {
                reports.push(p.report);
            }
        }
        reports
    }
}

/// The scenario ids of `series`, in order of first appearance.
pub fn scenarios(series: &[SeriesPoints]) -> Vec<(String, String)> {
    let mut ids: Vec<(String, String)> = Vec::new();
    for s in series {
        if !ids.iter().any(|(id, _)| *id == s.scenario) {
            ids.push((s.scenario.clone(), s.scenario_name.clone()));
        }
    }
    ids
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::configuration::operating::series_points;
    use crate::analysis::testing::{report, series};
    use crate::schema::LoadMode;
    use crate::stats::Stat;

    #[test]
    fn the_frontier_of_hand_built_points() {
        // (interactivity, throughput): (10, 100) and (30, 50) trade off; (20, 40) is beaten by
        // (30, 50); (5, 100) by (10, 100), which ties it on throughput.
        let points = [(10.0, 100.0), (20.0, 40.0), (30.0, 50.0), (5.0, 100.0)];
        assert_eq!(pareto_front(&points, true, true), [0, 2]);
        // Lower y is better (a cost): (20, 40) is the cheapest and (30, 50) the fastest; both
        // beat (10, 100) and (5, 100).
        assert_eq!(pareto_front(&points, true, false), [1, 2]);
        // Exact ties are both kept; a single point is its own frontier; none, none.
        assert_eq!(pareto_front(&[(1.0, 1.0), (1.0, 1.0)], true, true), [0, 1]);
        assert_eq!(pareto_front(&[(3.0, 4.0)], true, true), [0]);
        assert!(pareto_front(&[], true, true).is_empty());
        assert_eq!(
            pareto_front(&[(f64::NAN, 9.0), (1.0, 1.0)], true, true),
            [1]
        );
    }

    /// Two reports of one scenario: the second is better at every load (twice the throughput
    /// at the same speeds), so it holds the whole frontier and every point of the first is
    /// dominated.
    #[test]
    fn a_dominated_report_has_no_frontier_point() {
        let levels = [(1, 0.1, 100.0), (4, 0.2, 50.0), (16, 0.4, 25.0)];
        let slow = report(&["chat"], vec![series("chat", LoadMode::Peak, &levels)]);
        let mut fast = slow.clone();
        for l in &mut fast.series[0].levels {
            l.system_output_tok_s *= 2.0;
        }
        let all = series_points(&[&slow, &fast], LoadMode::Peak, Stat::Mean, &[]);
        let f = ScenarioFrontier::of(
            &all,
            "chat",
            Figure::Interactivity,
            Figure::ThroughputPerGpu,
        );
        assert_eq!(f.scenario_name, "Scenario chat");
        assert_eq!(f.reports_on(), [1]);
        assert_eq!(f.frontier.len(), 3);
        assert_eq!(
            f.frontier.iter().map(|p| p.load).collect::<Vec<_>>(),
            [16.0, 4.0, 1.0]
        );
        assert_eq!(f.dominated.len(), 3);
        assert!(f.dominated.iter().all(|p| p.report == 0));
        assert!(f.is_on(1, 0) && !f.is_on(0, 0));
        // Against latency, lower is better across: the same report still holds it.
        let e2e = ScenarioFrontier::of(&all, "chat", Figure::E2e, Figure::ThroughputPerGpu);
        assert_eq!(e2e.reports_on(), [1]);
        assert_eq!(scenarios(&all), [("chat".into(), "Scenario chat".into())]);
    }
}
