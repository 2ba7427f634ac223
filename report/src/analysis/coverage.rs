//! What a report tested: the load levels of each mode and the token lengths of the scenarios
//! measured, as the reference reports state them ("Concurrency from 1 - 5 requests", "Context
//! lengths from 1K - 256K tokens").

use super::Analysis;
use crate::schema::{LoadMode, Report};

/// Lowest and highest of something tested; equal when only one value was.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Span<T> {
    pub low: T,
    pub high: T,
}

impl<T: PartialOrd + Copy> Span<T> {
    fn widen(span: Option<Self>, value: T) -> Option<Self> {
        Some(match span {
            None => Span {
                low: value,
                high: value,
            },
            Some(s) => Span {
                low: if value < s.low { value } else { s.low },
                high: if value > s.high { value } else { s.high },
            },
        })
    }
}

impl Span<u32> {
    /// The smallest span holding both.
    pub fn merge(self, other: Span<u32>) -> Span<u32> {
        Span {
            low: self.low.min(other.low),
            high: self.high.max(other.high),
        }
    }
}

impl<T: PartialEq + Copy> Span<T> {
    /// "1–32", or "8" when one value was tested.
    pub fn text(self, show: impl Fn(T) -> String) -> String {
        if self.low == self.high {
            show(self.low)
        } else {
            format!("{}–{}", show(self.low), show(self.high))
        }
    }
}

/// The peak concurrencies any of `reports` measured: the range the viewer's interpolation
/// cursor moves over when reports are overlaid.
pub fn concurrency_domain<'a>(reports: impl IntoIterator<Item = &'a Report>) -> Option<Span<u32>> {
    reports
        .into_iter()
        .filter_map(|r| coverage(r).load(LoadMode::Peak))
        .map(|s| Span {
            low: s.low as u32,
            high: s.high as u32,
        })
        .reduce(Span::merge)
}

/// The ranges tested, over series that have levels; `None` where nothing was.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Coverage {
    /// Each mode tested and the range of its levels' loads as the mode counts them
    /// ([`LoadMode::tested_value`]), in the order of [`LoadMode::ALL`].
    pub loads: Vec<(LoadMode, Span<f64>)>,
    pub input_tokens: Option<Span<u32>>,
    pub output_tokens: Option<Span<u32>>,
}

impl Coverage {
    /// The range of `mode`'s loads, if it was tested.
    pub fn load(&self, mode: LoadMode) -> Option<Span<f64>> {
        self.loads.iter().find(|(m, _)| *m == mode).map(|(_, s)| *s)
    }
}

/// The ranges `report` tested. A scenario counts only when a series measured it.
pub fn coverage(report: &Report) -> Coverage {
    let mut loads: Vec<(LoadMode, Option<Span<f64>>)> =
        LoadMode::ALL.iter().map(|&m| (m, None)).collect();
    let mut c = Coverage::default();
    for series in report.series.iter().filter(|s| !s.levels.is_empty()) {
        let Some((_, span)) = loads.iter_mut().find(|(m, _)| *m == series.mode) else {
            continue;
        };
        for value in series
            .levels
            .iter()
            .filter_map(|l| series.mode.tested_value(l))
        {
            *span = Span::widen(*span, value);
        }
        if let Some(s) = Analysis::new(report).scenario(&series.scenario) {
            c.input_tokens = Span::widen(c.input_tokens, s.input_tokens);
            c.output_tokens = Span::widen(c.output_tokens, s.output_tokens);
        }
    }
    c.loads = loads
        .into_iter()
        .filter_map(|(m, s)| s.map(|s| (m, s)))
        .collect();
    c
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::testing::series;
    use crate::schema::Scenario;

    #[test]
    fn ranges_per_mode_and_of_the_measured_scenarios_only() {
        let mut report: Report =
            serde_json::from_str(include_str!("../../../data/reports/sample-synthetic.json"))
                .unwrap();
        let c = coverage(&report);
        assert_eq!(
            c.load(LoadMode::Peak),
            Some(Span {
                low: 1.0,
                high: 32.0
            })
        );
        assert_eq!(
            c.load(LoadMode::Burst),
            Some(Span {
                low: 1.0,
                high: 256.0
            })
        );
        assert_eq!(c.load(LoadMode::Rate), None);
        assert_eq!(
            c.input_tokens,
            Some(Span {
                low: 1024,
                high: 32768
            })
        );
        assert_eq!(
            c.output_tokens,
            Some(Span {
                low: 256,
                high: 256
            })
        );
        // A scenario no series measured widens nothing; nor does a series without levels.
        report.scenarios.push(Scenario {
            id: "huge".into(),
            name: "Huge".into(),
            description: String::new(),
            input_tokens: 262_144,
            output_tokens: 1,
            session: None,
            trace: None,
            prompts: None,
            lengths: None,
            agents: None,
        });
        report.series.push(series("huge", LoadMode::Peak, &[]));
        assert_eq!(coverage(&report), c);
        // Rate runs count by their arrival rates, not their observed concurrency.
        let mut rate = series("chatbot", LoadMode::Rate, &[(3, 0.2, 90.0), (9, 0.4, 60.0)]);
        rate.levels[0].request_rate = Some(2.0);
        rate.levels[1].request_rate = Some(0.5);
        report.series.push(rate);
        let with_rate = coverage(&report);
        assert_eq!(
            with_rate.load(LoadMode::Rate),
            Some(Span {
                low: 0.5,
                high: 2.0
            })
        );
        assert_eq!(with_rate.load(LoadMode::Peak), c.load(LoadMode::Peak));
        let mut wider = report.clone();
        wider.series.retain(|s| s.mode == LoadMode::Peak);
        wider.series[0].levels[0].concurrency = 64;
        assert_eq!(
            concurrency_domain([&report, &wider]),
            Some(Span { low: 1, high: 64 })
        );
        report.series.clear();
        assert_eq!(coverage(&report), Coverage::default());
        assert_eq!(concurrency_domain([&report]), None);
    }
}
