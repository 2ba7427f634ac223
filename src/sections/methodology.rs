//! Methodology (our definitions, pooling from the report) and the experience tables.

use infermeter_report::analysis::Metric;
use infermeter_report::presets::{Band, ITL_BANDS, SPEED_BANDS, TTFT_BANDS, WHAT_GOOD_LOOKS_LIKE};
use infermeter_report::{PromptTokenizer, Report, TokenSource};
use leptos::prelude::*;

use super::{context, Section, EXPERIENCE, METHODOLOGY};

/// Our metric definitions, in the order a reader meets them.
pub const DEFINITIONS: [(&str, &str); 9] = [
    ("TTFT (time to first token)", "From request start to the first stream event carrying content, reasoning or a tool-call delta. The role-only first chunk some engines send does not count."),
    ("ITL (inter-token latency)", "The gap between successive output tokens. When one stream event carries several tokens, its gap is spread over them, so ITL is per token, not per chunk."),
    ("TPOT (time per output token)", "(E2E − TTFT) / (output tokens − 1) for one request."),
    ("Decode speed", "Per-user generation speed: (output tokens − 1) / (E2E − TTFT) for one request."),
    ("Scaling efficiency", "System throughput / (single-user throughput × concurrency) × 100. 100% means adding users costs nobody speed."),
    ("E2E latency", "From request start to the last token: TTFT plus decode time, measured end to end."),
    ("System throughput", "Output tokens per second summed over all requests in the measurement window."),
    ("Goodput", "Requests (or their output tokens) per second of the measurement window that met every bound of an SLO at once; failed requests meet none. Attainment is their share of the level's requests, with a Wilson 95% interval."),
    ("Stall", "A pause of more than 100 ms between two content events of one stream; jitter is a request's p99 pause over its median pause."),
];

/// Where output token counts come from, in words.
pub fn token_source_text(source: TokenSource) -> &'static str {
    match source {
        TokenSource::Usage => "the usage figures the server reports at the end of each stream",
        TokenSource::ContinuousUsage => "the usage figures the server reports on every chunk",
        TokenSource::Tokenizer => "the model's tokenizer, counted on the client",
        TokenSource::Chunks => {
            "one token per content-carrying chunk (the server reported no usage)"
        }
    }
}

/// Pooling notes of the report, "metric: how" rows.
pub fn pooling_rows(report: &Report) -> Vec<(String, String)> {
    report
        .measurement
        .pooling
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

#[component]
pub fn MethodologySection() -> impl IntoView {
    let ctx = context();
    view! {
        <Section info=&METHODOLOGY>
            <p>"Benchmarks run against a live endpoint with streaming completions. Every token's arrival is timestamped on a monotonic clock at the client; all figures derive from those timestamps. Peak mode holds exactly N requests in flight (a new one starts when one ends); burst mode sends N at once and drains them. Values between measured levels are interpolated with a monotone curve and always marked; nothing is extrapolated. A percentile with fewer than 10 samples beyond it (p99 of fewer than 1,000 requests, p90 of fewer than 100) is only indicative and marked so wherever it appears: a hollow point on a chart (its tooltip gives the sample count), a dotted underline in a table, a note on a card."</p>
            <details class="collapsible" open>
                <summary>"Definitions"</summary>
                <dl class="definitions">
                    {DEFINITIONS.iter().map(|(term, text)| view! { <dt>{*term}</dt><dd>{*text}</dd> }).collect_view()}
                </dl>
            </details>
            {move || ctx.reports.with(|r| r.first().map(|report| {
                let m = &report.measurement;
                view! {
                    <h3>"How this report was measured"</h3>
                    <ul data-testid="measurement">
                        <li>"TTFT ends at: " {m.ttft_definition.clone()}</li>
                        <li>"Output tokens counted from " {token_source_text(m.output_token_source)}</li>
                        {m.prompt_tokens.as_ref().map(|c| view! {
                            <li data-testid="prompt-tokenizer">"Prompt tokens counted by " {PromptTokenizer::describe(c)}</li>
                        })}
                        {m.steady_state.clone().map(|s| view! { <li>"Steady-state window: " {s}</li> })}
                    </ul>
                    <table class="data-table" data-testid="pooling-table">
                        <thead><tr><th scope="col">"Metric"</th><th scope="col">"Samples pooled"</th></tr></thead>
                        <tbody>
                            {pooling_rows(report).into_iter().map(|(k, v)| view! {
                                <tr><th scope="row"><code>{k}</code></th><td>{v}</td></tr>
                            }).collect_view()}
                        </tbody>
                    </table>
                }
            }))}
        </Section>
    }
}

fn band_table(
    title: &'static str,
    header: &'static str,
    bands: &'static [Band],
    testid: &'static str,
) -> impl IntoView {
    view! {
        <h3>{title}</h3>
        <table class="data-table" data-testid=testid>
            <thead><tr><th scope="col">{header}</th><th scope="col">"User experience"</th></tr></thead>
            <tbody>
                {bands.iter().map(|b| view! {
                    <tr><th scope="row">{b.range}</th><td>{b.experience}</td></tr>
                }).collect_view()}
            </tbody>
        </table>
    }
}

#[component]
pub fn ExperienceSection() -> impl IntoView {
    view! {
        <Section info=&EXPERIENCE>
            <dl class="guidance" data-testid="what-good-looks-like">
                {WHAT_GOOD_LOOKS_LIKE.iter().map(|g| view! { <dt>{g.metric}</dt><dd>{g.text}</dd> }).collect_view()}
            </dl>
            {band_table("How Fast Is This?", "Speed", &SPEED_BANDS, "how-fast-table")}
            {band_table("How Responsive Is This?", Metric::Ttft.short_label(), &TTFT_BANDS, "how-responsive-table")}
            {band_table("How Smooth Is This?", Metric::Itl.label(), &ITL_BANDS, "how-smooth-table")}
        </Section>
    }
}
