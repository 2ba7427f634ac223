//! Readable text for a JavaScript exception caught at the wasm boundary.

use wasm_bindgen::{JsCast, JsValue};

/// An `Error`'s message, a thrown string as is, or a generic phrase. (Formatting the `JsValue`
/// with `{:?}` would do, but pulls wasm-bindgen's value printer into the shipped wasm.)
pub fn message(error: &JsValue) -> String {
    if let Some(text) = error.as_string() {
        return text;
    }
    match error.dyn_ref::<js_sys::Error>() {
        Some(e) => String::from(e.message()),
        None => "an unknown JavaScript error".into(),
    }
}
