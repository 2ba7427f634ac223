//! The finding sentences under the charts, in the published reports' words, read from the same
//! [`Plot`] the chart draws (display units), so text and picture always agree.

use infermeter_report::analysis::format::format_number;
use infermeter_report::analysis::scaling::tokens_per_hour;
use infermeter_report::presets::Band;

use crate::charts::capacity::group_thousands;
use crate::charts::plot::{LineKind, Plot, XAxis};

/// One extreme point of a plot: value, series and x.
#[derive(Debug, Clone, PartialEq)]
pub struct Extreme {
    pub value: f64,
    pub series: String,
    pub x: f64,
}

/// Smallest and largest value over the plot's plain lines (bands excluded).
pub fn extremes(plot: &Plot) -> Option<(Extreme, Extreme)> {
    let mut points = plot
        .lines
        .iter()
        .filter(|l| l.kind == LineKind::Plain)
        .flat_map(|l| {
            l.points.iter().map(|&(x, value)| Extreme {
                value,
                series: l.name.clone(),
                x,
            })
        });
    let first = points.next()?;
    let (low, high) = points.fold((first.clone(), first), |(lo, hi), p| {
        let lo = if p.value < lo.value { p.clone() } else { lo };
        let hi = if p.value > hi.value { p } else { hi };
        (lo, hi)
    });
    Some((low, high))
}

/// Value with its unit: "172 tok/s", "5.8 ms", "41%".
pub fn with_unit(value: f64, unit: &str) -> String {
    match unit {
        "%" => format!("{}%", format_number(value)),
        "" => format_number(value),
        unit => format!("{} {unit}", format_number(value)),
    }
}

/// Where a point sits: "single user", "32 concurrent", "256 queue depth", "32K context".
pub fn position(x_axis: XAxis, x: f64) -> String {
    match x_axis {
        XAxis::ConcurrentUsers if x == 1.0 => "single user".into(),
        XAxis::ConcurrentUsers => format!("{} concurrent", format_number(x)),
        XAxis::QueueDepth if x == 1.0 => "1 user".into(),
        XAxis::QueueDepth => format!("{} queue depth", format_number(x)),
        XAxis::ContextTokens => context_phrase(x),
    }
}

/// A token count as the reports write context sizes: 1024 -> "1K", 262144 -> "256K",
/// 1000 -> "1,000".
pub fn context_label(tokens: f64) -> String {
    let t = tokens.round() as u32;
    if t >= 1024 && t.is_multiple_of(1024) {
        format!("{}K", t / 1024)
    } else {
        group_thousands(t)
    }
}

/// "32K context"; "64-token context" for a count not in K.
pub fn context_phrase(tokens: f64) -> String {
    context_words(tokens, ["token", "context"])
}

/// [`context_phrase`] with its two words given, so a heading can capitalise them.
pub fn context_words(tokens: f64, [token, context]: [&str; 2]) -> String {
    let count = context_label(tokens);
    if count.ends_with('K') {
        format!("{count} {context}")
    } else {
        format!("{count}-{token} {context}")
    }
}

fn unit(plot: &Plot) -> &str {
    plot.y.first().map_or("", |y| y.unit.as_str())
}

fn at(plot: &Plot, e: &Extreme) -> String {
    format!("{}, {}", e.series, position(plot.x, e.x))
}

/// "Per-user decode speed ranges from 172.5 tok/s (Chatbot, single user) down to 13.2 tok/s
/// (Tool Calling Agentic, 32 concurrent)." (higher is better).
pub fn speed_range(plot: &Plot, what: &str) -> Option<String> {
    let (low, high) = extremes(plot)?;
    Some(speed_range_between(plot, what, &low, &high))
}

/// [`speed_range`] for extremes the caller has already found.
pub fn speed_range_between(plot: &Plot, what: &str, low: &Extreme, high: &Extreme) -> String {
    let u = unit(plot);
    format!(
        "{what} ranges from {} ({}) down to {} ({}).",
        with_unit(high.value, u),
        at(plot, high),
        with_unit(low.value, u),
        at(plot, low)
    )
}

/// "Best inter-token latency is 5.8 ms (Chatbot, single user), rising to 75.8 ms under maximum
/// load (Tool Calling Agentic, 32 concurrent)." (lower is better).
pub fn latency_range(plot: &Plot, what: &str) -> Option<String> {
    let (low, high) = extremes(plot)?;
    let u = unit(plot);
    Some(format!(
        "Best {what} is {} ({}), rising to {} under maximum load ({}).",
        with_unit(low.value, u),
        at(plot, &low),
        with_unit(high.value, u),
        at(plot, &high)
    ))
}

/// Where a plot's measured values sit against a limit where lower is better.
enum Against {
    AllWithin,
    Crosses,
    AllAbove,
}

fn against(plot: &Plot, limit: f64) -> Option<Against> {
    let (low, high) = extremes(plot)?;
    Some(if high.value <= limit {
        Against::AllWithin
    } else if low.value <= limit {
        Against::Crosses
    } else {
        Against::AllAbove
    })
}

/// How the ITL compares with the instant-streaming line.
pub fn itl_verdict(plot: &Plot, instant_ms: f64) -> Option<String> {
    let line = with_unit(instant_ms, "ms");
    Some(match against(plot, instant_ms)? {
        Against::AllWithin => format!(
            "Every measured level stays under the {line} threshold where streaming feels instantaneous."
        ),
        Against::Crosses => format!(
            "Streaming feels instant at low load and crosses the {line} threshold as load grows."
        ),
        Against::AllAbove => {
            format!("Even the best case is above the {line} threshold of instant streaming.")
        }
    })
}

/// How queued ITL compares with the line where streaming turns sluggish.
pub fn sluggish_verdict(plot: &Plot, sluggish_ms: f64) -> Option<String> {
    let line = with_unit(sluggish_ms, "ms");
    Some(match against(plot, sluggish_ms)? {
        Against::AllWithin => format!(
            "Every queue depth stays under the {line} line: streaming stays smooth even when requests pile up."
        ),
        Against::Crosses => format!(
            "The deeper queues cross the {line} line: streaming turns sluggish there."
        ),
        Against::AllAbove => format!(
            "Even the shallowest queue is above the {line} line: streaming is sluggish under any burst."
        ),
    })
}

/// The highest x any line reaches, with the highest and the lowest value of the lines measured
/// there: the spread across scenarios at the heaviest load.
fn spread_at_top(plot: &Plot) -> Option<(f64, Extreme, Extreme)> {
    let x = plot
        .lines
        .iter()
        .filter_map(|l| l.points.last().map(|p| p.0))
        .fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.max(x))))?;
    let at_x: Vec<Extreme> = plot
        .lines
        .iter()
        .filter_map(|l| {
            let &(x, value) = l.points.iter().find(|p| p.0 == x)?;
            Some(Extreme {
                value,
                series: l.name.clone(),
                x,
            })
        })
        .collect();
    let high = at_x.iter().max_by(|a, b| a.value.total_cmp(&b.value))?;
    let low = at_x.iter().min_by(|a, b| a.value.total_cmp(&b.value))?;
    Some((x, high.clone(), low.clone()))
}

/// "At 32 concurrent, scaling efficiency ranges from 41% (Chatbot) to 8% (Tool Calling
/// Agentic)." read at the highest concurrency measured, with the reports' scale.
/// When the lines are scenarios and the worst is both far lower and of a longer context than
/// the best, says what that points to, as reference 001 does.
pub fn scaling_at_max(plot: &Plot) -> Option<String> {
    let (x, best, worst) = spread_at_top(plot)?;
    let tokens = |e: &Extreme| {
        plot.lines
            .iter()
            .find(|l| l.name == e.series)
            .and_then(|l| l.input_tokens)
    };
    let longer_context_drops = matches!(
        (tokens(&best), tokens(&worst)),
        (Some(b), Some(w)) if w > b && worst.value < 0.75 * best.value
    );
    Some(format!(
        "At {}, scaling efficiency ranges from {} ({}) to {} ({}).{} Above 90% is excellent; \
         below 50% means the requests contend heavily for the GPU.",
        position(plot.x, x),
        with_unit(best.value, "%"),
        best.series,
        with_unit(worst.value, "%"),
        worst.series,
        if longer_context_drops {
            " Scaling drops at longer contexts: GPU memory bandwidth is the likely bottleneck."
        } else {
            ""
        }
    ))
}

/// The decode band's sentence, read from the per-scenario speeds (reference 002): "Peak
/// per-user decode speed is 172.5 tok/s (Chatbot, single user). At 32 concurrent, per-user
/// speed ranges from 13.2 to 70.6 tok/s across scenarios: the band shows how much each user's
/// speed drops under load." Of the main report only: the figures name no report.
pub fn speed_spread(plot: &Plot) -> Option<String> {
    let main = Plot {
        lines: plot
            .lines
            .iter()
            .filter(|l| l.report == 0)
            .cloned()
            .collect(),
        ..plot.clone()
    };
    let plot = &main;
    let (_, peak) = extremes(plot)?;
    let (x, high, low) = spread_at_top(plot)?;
    let u = unit(plot);
    Some(format!(
        "Peak per-user decode speed is {} ({}). At {}, per-user speed ranges from {} to {} \
         across scenarios: the band shows how much each user's speed drops under load.",
        with_unit(peak.value, u),
        at(plot, &peak),
        position(plot.x, x),
        format_number(low.value),
        with_unit(high.value, u)
    ))
}

/// "Best TTFT is 0.211 s (Chatbot, single user), worst case 6.18 s (Tool Calling Agentic, 32
/// concurrent)." for `best_is` "Best TTFT is" (lower is better).
pub fn best_worst(plot: &Plot, best_is: &str) -> Option<String> {
    let (low, high) = extremes(plot)?;
    let u = unit(plot);
    Some(format!(
        "{best_is} {} ({}), worst case {} ({}).",
        with_unit(low.value, u),
        at(plot, &low),
        with_unit(high.value, u),
        at(plot, &high)
    ))
}

/// A range graded on one of the experience scales of "What Good Looks Like", as the reports
/// grade their figures: "By the How Fast Is This? scale, that is very fast at best and slow at
/// worst."
pub fn graded(scale: &str, best: &Band, worst: &Band) -> String {
    // ASCII names: `to_lowercase` would link Unicode case tables (~3 KB gzip).
    let (best, worst) = (
        best.name.to_ascii_lowercase(),
        worst.name.to_ascii_lowercase(),
    );
    if best == worst {
        format!("By the {scale} scale, that is {best} throughout.")
    } else {
        format!("By the {scale} scale, that is {best} at best and {worst} at worst.")
    }
}

/// "Peak system throughput is 2961 tok/s (Chatbot, 24 concurrent), equivalent to
/// ~10,659,600 tokens/hour."
pub fn peak_throughput(plot: &Plot) -> Option<String> {
    let (_, high) = extremes(plot)?;
    Some(format!(
        "Peak system throughput is {} ({}), equivalent to ~{} tokens/hour.",
        with_unit(high.value, unit(plot)),
        at(plot, &high),
        group_thousands(tokens_per_hour(high.value).round() as u32)
    ))
}

/// The highest value of a plot with where it was seen: "466 W (1K context, 5 concurrent)".
pub fn highest(plot: &Plot) -> Option<(Extreme, String)> {
    let (_, high) = extremes(plot)?;
    let text = format!(
        "{} ({})",
        with_unit(high.value, unit(plot)),
        at(plot, &high)
    );
    Some((high, text))
}

#[cfg(test)]
mod tests {
    use super::*;
    use infermeter_report::presets::{band_for_itl, ITL_BANDS};

    #[test]
    fn a_range_within_one_band_is_graded_once() {
        let good = band_for_itl(0.015);
        assert_eq!(good, &ITL_BANDS[1]);
        assert_eq!(
            graded("How Smooth Is This?", good, good),
            "By the How Smooth Is This? scale, that is good throughout."
        );
    }
    use crate::charts::plot::{Line, YAxis};
    use crate::theme::Theme;

    fn plot(x: XAxis, unit: &str, lines: Vec<Line>) -> Plot {
        Plot {
            x,
            y: vec![YAxis::new("m", unit)],
            lines,
            thresholds: Vec::new(),
            cursor: None,
            theme: Theme::Light,
        }
    }

    fn reference_decode() -> Plot {
        plot(
            XAxis::ConcurrentUsers,
            "tok/s",
            vec![
                Line::plain("Chatbot", 0, vec![(1.0, 172.5), (32.0, 70.6)]),
                Line::plain("Tool Calling Agentic", 0, vec![(1.0, 160.0), (32.0, 13.2)]),
            ],
        )
    }

    #[test]
    fn decode_sentence_reads_like_the_reference() {
        assert_eq!(
            speed_range(&reference_decode(), "Per-user decode speed").unwrap(),
            "Per-user decode speed ranges from 172.5 tok/s (Chatbot, single user) down to \
             13.2 tok/s (Tool Calling Agentic, 32 concurrent)."
        );
    }

    #[test]
    fn latency_and_scaling_sentences() {
        let itl = plot(
            XAxis::ConcurrentUsers,
            "ms",
            vec![
                Line::plain("Chatbot", 0, vec![(1.0, 5.8), (32.0, 14.0)]),
                Line::plain("Tool Calling Agentic", 0, vec![(1.0, 6.5), (32.0, 75.8)]),
            ],
        );
        assert_eq!(
            latency_range(&itl, "inter-token latency").unwrap(),
            "Best inter-token latency is 5.8 ms (Chatbot, single user), rising to 75.8 ms \
             under maximum load (Tool Calling Agentic, 32 concurrent)."
        );
        assert!(itl_verdict(&itl, 20.0)
            .unwrap()
            .contains("crosses the 20 ms"));
        // Queued ITL against the 70 ms line, on each side of it.
        assert_eq!(
            sluggish_verdict(&itl, 70.0).unwrap(),
            "The deeper queues cross the 70 ms line: streaming turns sluggish there."
        );
        assert!(sluggish_verdict(&itl, 80.0)
            .unwrap()
            .starts_with("Every queue depth stays under the 80 ms line"));
        assert!(sluggish_verdict(&itl, 5.0)
            .unwrap()
            .starts_with("Even the shallowest queue is above the 5 ms line"));
        let eff = plot(
            XAxis::ConcurrentUsers,
            "%",
            vec![
                Line::plain("Chatbot", 0, vec![(1.0, 100.0), (32.0, 41.0)]),
                Line::plain("Tool Calling Agentic", 0, vec![(1.0, 100.0), (32.0, 8.0)]),
            ],
        );
        assert_eq!(
            scaling_at_max(&eff).unwrap(),
            "At 32 concurrent, scaling efficiency ranges from 41% (Chatbot) to 8% (Tool Calling \
             Agentic). Above 90% is excellent; below 50% means the requests contend heavily for \
             the GPU."
        );
    }

    #[test]
    fn burst_positions_and_throughput() {
        let ttft = plot(
            XAxis::QueueDepth,
            "s",
            vec![Line::plain("Chatbot", 0, vec![(1.0, 0.19), (256.0, 8.25)])],
        );
        assert_eq!(
            best_worst(&ttft, "TTFT under load: best case").unwrap(),
            "TTFT under load: best case 0.19 s (Chatbot, 1 user), worst case 8.25 s (Chatbot, 256 \
             queue depth)."
        );
        let tput = plot(
            XAxis::ConcurrentUsers,
            "tok/s",
            vec![Line::plain(
                "Chatbot",
                0,
                vec![(1.0, 153.0), (24.0, 2961.0)],
            )],
        );
        assert_eq!(
            peak_throughput(&tput).unwrap(),
            "Peak system throughput is 2961 tok/s (Chatbot, 24 concurrent), equivalent to \
             ~10,659,600 tokens/hour."
        );
        assert_eq!(context_label(131072.0), "128K");
        assert_eq!(context_label(1000.0), "1,000");
        assert_eq!(context_phrase(32768.0), "32K context");
        assert_eq!(context_phrase(64.0), "64-token context");
        assert_eq!(extremes(&plot(XAxis::QueueDepth, "s", vec![])), None);
    }
}
