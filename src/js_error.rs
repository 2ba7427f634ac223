//! Readable text for a JavaScript exception caught at the wasm boundary.

use wasm_bindgen::{JsCast, JsValue};

/// An `Error`'s message, a thrown string as is, or a generic phrase: what a reader can act on,
/// where `{:?}` of the `JsValue` prints `JsValue(TypeError: … <stack>)`.
pub fn message(error: &JsValue) -> String {
    if let Some(text) = error.as_string() {
        return text;
    }
    match error.dyn_ref::<js_sys::Error>() {
        Some(e) => String::from(e.message()),
        None => "an unknown JavaScript error".into(),
    }
}
