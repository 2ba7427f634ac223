//! GPU power (peak mode): the highest draw and what it costs an hour, the most energy-efficient
//! level, the cheapest million tokens, and every level that recorded power.

use schemars::JsonSchema;
use serde::Serialize;

use super::{located_points, lowest, range, Located};
use crate::analysis::cost::{cost_per_hour_from_power, cost_per_million_tokens};
use crate::analysis::format::format_number;
use crate::analysis::metric::Metric;
use crate::schema::{LoadMode, Report};
use crate::stats::Stat;

/// Power and throughput of one measured level, with what its electricity costs.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct PowerLevel {
    /// The draw, W, all GPUs: the mean over the level (the maximum for [`Stat::Max`]).
    pub draw: Located,
    pub system_tok_s: f64,
    /// Dollars an hour at the chosen price.
    pub cost_per_hour: f64,
    /// Dollars per million output tokens; `None` when nothing was produced.
    pub cost_per_million_tokens: Option<f64>,
}

/// Every peak-mode level that recorded power, scenarios in report order.
pub fn levels(report: &Report, stat: Stat, usd_per_kwh: f64) -> Vec<PowerLevel> {
    let throughput = located_points(report, LoadMode::Peak, Metric::SystemOutputTokS, stat);
    located_points(report, LoadMode::Peak, Metric::PowerW, stat)
        .into_iter()
        .filter_map(|draw| {
            let tok_s = throughput
                .iter()
                .find(|t| t.scenario == draw.scenario && t.concurrency == draw.concurrency)?
                .value;
            let cost_per_hour = cost_per_hour_from_power(draw.value, usd_per_kwh);
            Some(PowerLevel {
                cost_per_million_tokens: cost_per_million_tokens(cost_per_hour, tok_s),
                draw,
                system_tok_s: tok_s,
                cost_per_hour,
            })
        })
        .collect()
}

/// The power figures of one report; all `None` (and no levels) when it recorded no power.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct PowerFindings {
    /// The highest draw, W.
    pub highest_draw: Option<Located>,
    /// What that draw costs an hour, dollars.
    pub highest_draw_cost_per_hour: Option<f64>,
    /// The most output tokens per joule.
    pub most_efficient: Option<Located>,
    /// The lowest dollars per million output tokens.
    pub cheapest: Option<Located>,
    pub levels: Vec<PowerLevel>,
}

impl PowerFindings {
    /// The power lines `infermeter summary` prints after the key findings, label and text:
    /// the highest draw with its cost an hour, the most tokens per joule and the cheapest
    /// million tokens, each where it was measured. None when the report recorded no power.
    pub fn key_lines(&self, usd_per_kwh: f64) -> Vec<(&'static str, String)> {
        let at = |l: &Located, value: String| format!("{value}  ({})", l.card_context());
        let draw = self.highest_draw.as_ref().map(|d| {
            let per_hour = self.highest_draw_cost_per_hour.map_or(String::new(), |c| {
                format!(
                    ", ${}/hour at ${}/kWh",
                    format_number(c),
                    format_number(usd_per_kwh)
                )
            });
            at(d, format!("{}{per_hour}", d.value_text(Metric::PowerW)))
        });
        [
            ("GPU power, highest draw", draw),
            (
                "Energy efficiency, best",
                self.most_efficient
                    .as_ref()
                    .map(|e| at(e, e.value_text(Metric::TokensPerJoule))),
            ),
            (
                "Electricity per 1M tokens, lowest",
                self.cheapest
                    .as_ref()
                    .map(|c| at(c, format!("${}", format_number(c.value)))),
            ),
        ]
        .into_iter()
        .filter_map(|(label, text)| Some((label, text?)))
        .collect()
    }

    pub(super) fn of(report: &Report, stat: Stat, usd_per_kwh: f64) -> PowerFindings {
        let highest_draw = range(report, LoadMode::Peak, Metric::PowerW, stat).map(|r| r.high);
        let levels = levels(report, stat, usd_per_kwh);
        let costs = levels.iter().filter_map(|l| {
            Some(Located {
                value: l.cost_per_million_tokens?,
                ..l.draw.clone()
            })
        });
        let cheapest = lowest(costs);
        PowerFindings {
            highest_draw_cost_per_hour: highest_draw
                .as_ref()
                .map(|d| cost_per_hour_from_power(d.value, usd_per_kwh)),
            highest_draw,
            most_efficient: range(report, LoadMode::Peak, Metric::TokensPerJoule, stat)
                .map(|r| r.high),
            cheapest,
            levels,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::testing::{report, series};
    use crate::schema::PowerStats;

    fn with_power() -> Report {
        let mut r = report(
            &["chat"],
            vec![series(
                "chat",
                LoadMode::Peak,
                &[(1, 0.2, 100.0), (4, 0.3, 80.0)],
            )],
        );
        for (level, watts) in r.series[0].levels.iter_mut().zip([300.0, 466.0]) {
            level.power = Some(PowerStats {
                mean_w: watts,
                max_w: watts + 50.0,
                energy_j: watts * 60.0,
                source: "nvml".into(),
                samples: 60,
            });
        }
        r
    }

    /// "466 W … costing approximately $0.05/hour at $0.10/kWh" (reference 003).
    #[test]
    fn highest_draw_its_cost_and_the_cheapest_tokens() {
        let p = PowerFindings::of(&with_power(), Stat::Mean, 0.10);
        let draw = p.highest_draw.unwrap();
        assert_eq!((draw.value, draw.concurrency), (466.0, 4));
        assert!((p.highest_draw_cost_per_hour.unwrap() - 0.0466).abs() < 1e-12);
        // 320 tok/s for 466 W beats 100 tok/s for 300 W, in tokens per joule and in dollars.
        assert_eq!(p.most_efficient.unwrap().concurrency, 4);
        let cheapest = p.cheapest.unwrap();
        assert_eq!(cheapest.concurrency, 4);
        assert_eq!(Some(cheapest.value), p.levels[1].cost_per_million_tokens);
        let max = PowerFindings::of(&with_power(), Stat::Max, 0.10);
        assert_eq!(max.levels[1].draw.value, 516.0);
    }

    #[test]
    fn no_power_no_figures() {
        let mut r = with_power();
        r.series[0].levels.iter_mut().for_each(|l| l.power = None);
        let p = PowerFindings::of(&r, Stat::Mean, 0.10);
        assert_eq!((p.highest_draw, p.cheapest), (None, None));
        assert!(p.levels.is_empty());
    }
}
