//! Number formatting shared by verdict sentences and displays, so "11.2 s" reads the same
//! everywhere.

/// `value` with three significant digits (never rounding the integer part away), trailing
/// zeros dropped: 11.2, 8, 0.189, 9774.
pub fn format_number(value: f64) -> String {
    if !value.is_finite() {
        return value.to_string();
    }
    let magnitude = if value == 0.0 {
        0
    } else {
        value.abs().log10().floor() as i32
    };
    let decimals = (2 - magnitude).clamp(0, 6) as usize;
    let text = format!("{value:.decimals$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}
