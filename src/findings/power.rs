//! Power and efficiency (peak mode).

use infermeter_report::analysis::format::format_number;
use infermeter_report::analysis::Metric;

use super::{Findings, Place};

/// "The highest power draw observed was 466 W (Chatbot, 5 concurrent), costing approximately
/// $0.0466/hour in electricity at $0.1/kWh. …"
pub fn draw(f: &Findings) -> Option<String> {
    let draw = f.power.highest_draw.as_ref()?;
    Some(format!(
        "The highest power draw observed was {} ({}), costing approximately ${}/hour in electricity at ${}/kWh. Budget for peak draw when planning power and cooling: higher concurrency or sustained load beyond the tested conditions may draw more.",
        draw.value_text(Metric::PowerW),
        Place::Scenario.of(draw),
        format_number(f.power.highest_draw_cost_per_hour?),
        format_number(f.options.usd_per_kwh)
    ))
}

pub fn efficiency(f: &Findings) -> Option<String> {
    let best = f.power.most_efficient.as_ref()?;
    Some(format!(
        "The most energy-efficient point was {} ({}).",
        best.value_text(Metric::TokensPerJoule),
        Place::Scenario.of(best)
    ))
}

pub fn cost(f: &Findings) -> Option<String> {
    let cheapest = f.power.cheapest.as_ref()?;
    Some(format!(
        "The cheapest energy per million output tokens was ${} ({}).",
        format_number(cheapest.value),
        Place::Scenario.of(cheapest)
    ))
}
