//! Number formatting shared by verdict sentences and displays, so "11.2 s" reads the same
//! everywhere.

/// From this magnitude a figure is absurd (a hand-edited file) and is written as a power of ten,
/// not hundreds of digits: in displays here, and in the validator's messages.
pub const ABSURD_MAGNITUDE: f64 = 1e15;

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

#[cfg(test)]
mod tests {
    use super::format_number;

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
