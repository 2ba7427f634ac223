//! Numbers read from text the page is given: the address's values and the inputs' and sliders'.
//! Rust's float parser (`str::parse::<f64>`) links a table of powers of five and its own
//! big-decimal code into the wasm, ~11 KB gzip of the weight budget (docs/performance.md), for a
//! few short strings a session; in the wasm, JavaScript's `Number` reads them instead.

/// `text` as a number, as `text.parse::<f64>().ok()` reads it for the plain decimal forms
/// (`12`, `-0.5`, `.5`, `1.`, `+3e-2`); `None` for anything else (also `inf` and `nan`, which
/// no caller accepts, and the empty text).
pub fn parse_f64(text: &str) -> Option<f64> {
    // On this alphabet JavaScript's StrDecimalLiteral and Rust's decimal grammar are the same
    // (an optional sign, digits with an optional point, an optional exponent), both rounded
    // correctly; outside it (whitespace, `0x`, `Infinity`, `inf`) they differ, so it is refused.
    let plain = text
        .bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'+' | b'-' | b'.' | b'e' | b'E'));
    if text.is_empty() || !plain {
        return None;
    }
    read(text)
}

#[cfg(target_arch = "wasm32")]
fn read(text: &str) -> Option<f64> {
    // Unary `+`: JavaScript's ToNumber, as `Number(text)`; it never throws on a string.
    let value = wasm_bindgen::JsValue::from_str(text).unchecked_into_f64();
    (!value.is_nan()).then_some(value)
}

#[cfg(not(target_arch = "wasm32"))]
fn read(text: &str) -> Option<f64> {
    text.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::parse_f64;

    #[test]
    fn reads_the_decimal_forms_and_refuses_the_rest() {
        for (text, want) in [
            ("12", Some(12.0)),
            ("-0.5", Some(-0.5)),
            (".5", Some(0.5)),
            ("1.", Some(1.0)),
            ("+3e-2", Some(0.03)),
            ("1E3", Some(1000.0)),
            ("", None),
            (" 1", None),
            ("1,5", None),
            ("inf", None),
            ("NaN", None),
            ("0x10", None),
            ("1e", None),
            ("1.2.3", None),
            ("--1", None),
        ] {
            assert_eq!(parse_f64(text), want, "{text:?}");
        }
    }
}
