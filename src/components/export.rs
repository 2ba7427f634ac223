//! Browser downloads for chart exports: a PNG data URL or a CSV text (the CSV itself comes from
//! the chart's plot, `crate::charts`).

/// Makes the browser save `href` (a data: or blob: URL) as `file_name`.
pub fn download_url(href: &str, file_name: &str) -> Result<(), wasm_bindgen::JsValue> {
    use wasm_bindgen::JsCast;
    let document = web_sys::window()
        .and_then(|w| w.document())
        .ok_or("no document")?;
    let a: web_sys::HtmlAnchorElement = document.create_element("a")?.dyn_into()?;
    a.set_href(href);
    a.set_download(file_name);
    a.click();
    Ok(())
}

/// Saves `text` as a file of MIME type `mime`.
pub fn download_text(text: &str, mime: &str, file_name: &str) -> Result<(), wasm_bindgen::JsValue> {
    let parts = js_sys::Array::of1(&wasm_bindgen::JsValue::from_str(text));
    let options = web_sys::BlobPropertyBag::new();
    options.set_type(mime);
    let blob = web_sys::Blob::new_with_str_sequence_and_options(&parts, &options)?;
    let url = web_sys::Url::create_object_url_with_blob(&blob)?;
    let result = download_url(&url, file_name);
    web_sys::Url::revoke_object_url(&url)?;
    result
}

/// A file name made of the safe characters of `id`.
pub fn file_stem(id: &str) -> String {
    let stem: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect();
    if stem.is_empty() {
        "chart".into()
    } else {
        stem
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_stems_are_safe() {
        assert_eq!(file_stem("capacity/../x y"), "capacity----x-y");
        assert_eq!(file_stem("some_chart.id"), "some_chart-id");
        assert_eq!(file_stem(""), "chart");
    }
}
