//! "What do the scenarios represent?" and the metric glossary.

use infermeter_report::analysis::format::format_grouped;
use infermeter_report::presets::{scenario_preset, GLOSSARY as TERMS, RULE_OF_THUMB};
use infermeter_report::{Report, Scenario};
use leptos::prelude::*;

use super::{context, Section, GLOSSARY, SCENARIOS};

/// The scenario's own description, else the preset wording for its id.
pub fn description(s: &Scenario) -> String {
    if !s.description.trim().is_empty() {
        return s.description.clone();
    }
    scenario_preset(&s.id)
        .map(|p| p.description.to_string())
        .unwrap_or_default()
}

/// "1,024 in / 256 out".
pub fn shape(s: &Scenario) -> String {
    format!(
        "{} in / {} out",
        format_grouped(f64::from(s.input_tokens)),
        format_grouped(f64::from(s.output_tokens))
    )
}

/// The key insight when scenarios differ only in input length, as in the four-scenario suite.
pub fn key_insight(report: &Report) -> Option<String> {
    let s = &report.scenarios;
    let (first, last) = (s.first()?, s.last()?);
    let same_output = s.iter().all(|x| x.output_tokens == first.output_tokens);
    if s.len() < 2 || !same_output || first.input_tokens == last.input_tokens {
        return None;
    }
    Some(format!(
        "As input grows from {} to {} tokens, prefill cost rises: higher TTFT, more GPU memory per \
         request, and fewer concurrent users at acceptable quality. Output is held at {} tokens in \
         every scenario, so the differences come from input context length alone.",
        format_grouped(f64::from(first.input_tokens)),
        format_grouped(f64::from(last.input_tokens)),
        format_grouped(f64::from(first.output_tokens))
    ))
}

#[component]
pub fn ScenariosSection() -> impl IntoView {
    let ctx = context();
    view! {
        <Section info=&SCENARIOS>
            <p>"Each benchmark scenario simulates a different real-world usage pattern with distinct input and output token profiles."</p>
            {move || ctx.reports.with(|r| r.first().map(|report| view! {
                <div class="scenario-grid">
                    {report.scenarios.iter().map(|s| view! {
                        <article class="scenario-card" data-testid="scenario-card">
                            <h3>{s.name.clone()}</h3>
                            <p class="scenario-shape">{shape(s)}</p>
                            <p>{description(s)}</p>
                        </article>
                    }).collect_view()}
                </div>
                {key_insight(report).map(|k| view! { <p class="insight"><strong>"Key insight: "</strong>{k}</p> })}
            }))}
        </Section>
    }
}

#[component]
pub fn GlossarySection() -> impl IntoView {
    view! {
        <Section info=&GLOSSARY>
            <p>"Quick definitions for the metrics used throughout this report. All timing metrics are measured on a live streaming endpoint."</p>
            <details class="collapsible" open>
                <summary>"Definitions"</summary>
                <dl class="glossary">
                    {TERMS.iter().map(|g| view! {
                        <div class="glossary-entry">
                            <dt>{g.term}<span class="glossary-category">{g.category}</span></dt>
                            <dd>{g.definition}</dd>
                        </div>
                    }).collect_view()}
                </dl>
            </details>
            <p class="insight"><strong>"Rule of thumb: "</strong>{RULE_OF_THUMB}</p>
        </Section>
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::charts::test_support::sample;

    #[test]
    fn scenario_texts() {
        let report = sample();
        let chatbot = &report.scenarios[0];
        assert_eq!(shape(chatbot), "1,024 in / 256 out");
        assert!(!description(chatbot).is_empty());
        let mut bare = chatbot.clone();
        bare.description.clear();
        assert_eq!(
            description(&bare),
            scenario_preset("chatbot").unwrap().description
        );
        assert!(key_insight(&report).unwrap().contains("1,024 to 32,768"));
    }
}
