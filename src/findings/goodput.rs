//! Goodput in words: the "max load meeting the SLO" cards and the line naming the SLO. The
//! figures are the report crate's (`analysis::goodput`).

use infermeter_report::analysis::goodput::{slo_text, SeriesGoodput};
use infermeter_report::Slo;

/// One card: (value, label, context), e.g. ("≈ 11", "Chatbot: max users meeting the SLO",
/// "between measured 8 and 16").
pub fn card(series: &SeriesGoodput) -> (String, String, String) {
    let value = series.max_load.value_text();
    let unit = if series.mode.is_open_loop() {
        format!(" {}", series.mode.unit(2.0))
    } else {
        String::new()
    };
    (
        format!("{value}{unit}"),
        format!("{}: {}", series.scenario_name, series.mode.max_load_name()),
        series.max_load.note(),
    )
}

/// "Judged by: TTFT ≤ 5 s, TPOT ≤ 50 ms; 95% of requests."
pub fn judged_by(slo: &Slo) -> String {
    format!("Judged by: {}.", slo_text(slo))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::charts::goodput::per_source;
    use crate::charts::test_support::{sample, with_sources};
    use infermeter_report::analysis::goodput::DEFAULT_SLO;

    #[test]
    fn cards_name_the_scenario_and_how_the_load_was_read() {
        let report = sample();
        let all = with_sources(&report, |s| per_source(s, &DEFAULT_SLO));
        let chatbot = &all[0].series[0];
        assert_eq!(
            card(chatbot),
            (
                "≥ 32".to_string(),
                "Chatbot: max users meeting the SLO".to_string(),
                "all tested levels pass".to_string()
            )
        );
        let burst = &all[0].series[1];
        assert_eq!(card(burst).1, "Chatbot: max queue depth meeting the SLO");
        assert_eq!(
            judged_by(&DEFAULT_SLO),
            "Judged by: TTFT ≤ 5 s, TPOT ≤ 50 ms; 95% of requests."
        );
    }
}
