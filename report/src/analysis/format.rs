//! The one number formatter: the page, its tooltips (which receive these strings from the
//! viewer) and `infermeter summary` all write figures through it, so "6.18 s" reads the same
//! everywhere. Also the phrases that place a figure ("32K context") that both print.

use crate::validate::ABSURD_MAGNITUDE;

/// `value` the way the reference reports print figures, trailing zeros dropped: one decimal
/// from 100 up (172.5, 9774), three significant digits below (75.8, 11.2, 6.18, 0.189, 0.0466),
/// so a table row or a sentence does not mix "75.76 ms" with "5.8 ms".
pub fn format_number(value: f64) -> String {
    if !value.is_finite() {
        return value.to_string();
    }
    let magnitude = value.abs();
    if magnitude >= ABSURD_MAGNITUDE {
        let text = format!("{value:.3e}");
        let (mantissa, exponent) = text.split_once('e').unwrap_or((&text, "0"));
        let mantissa = mantissa.trim_end_matches('0').trim_end_matches('.');
        return format!("{mantissa}e{exponent}");
    }
    let decimals = if magnitude >= 100.0 || magnitude == 0.0 {
        1
    } else {
        (2 - magnitude.log10().floor() as i32).clamp(0, 6) as usize
    };
    let text = format!("{value:.decimals$}");
    let trimmed = if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.')
    } else {
        &text
    };
    if trimmed == "-0" {
        "0".into()
    } else {
        trimmed.into()
    }
}

/// A whole number with its thousands grouped, as the reports write counts and tokens per hour:
/// 10659600.4 -> "10,659,600", 32768 -> "32,768". An absurd magnitude as [`format_number`]
/// writes it, not twenty digits.
pub fn format_grouped(value: f64) -> String {
    if !value.is_finite() || value.abs() >= ABSURD_MAGNITUDE {
        return format_number(value);
    }
    let rounded = value.round();
    let digits = format!("{:.0}", rounded.abs());
    let mut out = String::with_capacity(digits.len() + digits.len() / 3 + 1);
    if rounded < 0.0 {
        out.push('-');
    }
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A figure with its unit: "172.5 tok/s", "5.8 ms", "41%", "8" without a unit.
pub fn with_unit(value: f64, unit: &str) -> String {
    match unit {
        "%" => format!("{}%", format_number(value)),
        "" => format_number(value),
        unit => format!("{} {unit}", format_number(value)),
    }
}

/// "1 sample", "36 samples", "1,000 samples".
pub fn samples_text(count: u64) -> String {
    match count {
        1 => "1 sample".into(),
        n => format!("{} samples", format_grouped(n as f64)),
    }
}

/// A token count as the reports write context sizes: 1024 -> "1K", 262144 -> "256K",
/// 1000 -> "1,000".
pub fn context_label(tokens: u32) -> String {
    if tokens >= 1024 && tokens.is_multiple_of(1024) {
        format!("{}K", tokens / 1024)
    } else {
        format_grouped(f64::from(tokens))
    }
}

/// "32K context"; "64-token context" for a count not in K.
pub fn context_phrase(tokens: u32) -> String {
    context_words(tokens, ["token", "context"])
}

/// [`context_phrase`] with its two words given, so a heading can capitalise them.
pub fn context_words(tokens: u32, [token, context]: [&str; 2]) -> String {
    let count = context_label(tokens);
    if count.ends_with('K') {
        format!("{count} {context}")
    } else {
        format!("{count}-{token} {context}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_group_their_thousands() {
        for (value, text) in [
            (32768.0, "32,768"),
            (128.0, "128"),
            (10_659_600.4, "10,659,600"),
            (999.5, "1,000"),
            (-1234.0, "-1,234"),
            (0.2, "0"),
            (1e300, "1e300"),
        ] {
            assert_eq!(format_grouped(value), text, "{value}");
        }
        assert_eq!(context_label(131072), "128K");
        assert_eq!(context_label(1000), "1,000");
        assert_eq!(context_phrase(32768), "32K context");
        assert_eq!(context_phrase(64), "64-token context");
        assert_eq!(with_unit(41.0, "%"), "41%");
        assert_eq!(with_unit(5.8, "ms"), "5.8 ms");
        assert_eq!(samples_text(1), "1 sample");
        assert_eq!(samples_text(1000), "1,000 samples");
    }

    #[test]
    fn formats_like_the_reference_reports() {
        for (value, text) in [
            (172.5, "172.5"),
            (9774.0, "9774"),
            (10_659_600.0, "10659600"),
            (11.2, "11.2"),
            (8.0, "8"),
            (5.797, "5.8"),
            (75.76, "75.8"),
            (40.93, "40.9"),
            (6.18, "6.18"),
            (10.0, "10"),
            (99.96, "100"),
            (0.189, "0.189"),
            (0.04662, "0.0466"),
            (0.0, "0"),
            (-0.0001, "-0.0001"),
            (999_999_999_999_999.0, "999999999999999"),
            (1e300, "1e300"),
            (-1.23456e20, "-1.235e20"),
        ] {
            assert_eq!(format_number(value), text, "{value}");
        }
    }
}
