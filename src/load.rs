//! Getting report text into the app: the report list (`data/index.json`), report URLs, reports
//! inlined in the page (a file written by `infermeter export`), and files picked or dropped.
//! Reading is the report crate's: `load_report` for infermeter's reports, `import::read` for
//! other tools' result files (vLLM bench, AIPerf, guidellm, inference-perf), told apart by their
//! content. This module only adds where the text came from, so an error panel can say what is
//! wrong and in which input.

use std::fmt;
use std::sync::Arc;

use infermeter_report::import::{self, Format, ImportError, Input};
use infermeter_report::index::ReportIndex;
use infermeter_report::{inline, Report};

/// The report list shipped with the viewer, relative to the page (works under any sub-path).
pub const INDEX_URL: &str = "data/index.json";

/// Larger inputs are refused before parsing: a report is kilobytes to a few megabytes, and a
/// browser tab would freeze on a gigabyte of JSON.
pub const MAX_REPORT_BYTES: u64 = 64 * 1024 * 1024;

/// Why an input could not be shown: which input, and the reader's message (with line and column
/// or the JSON path of the problem).
#[derive(Debug, Clone, PartialEq)]
pub struct LoadFailure {
    pub source: String,
    pub message: String,
}

impl fmt::Display for LoadFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.source, self.message)
    }
}

impl std::error::Error for LoadFailure {}

impl LoadFailure {
    fn new(source: &str, message: impl Into<String>) -> LoadFailure {
        LoadFailure {
            source: source.to_string(),
            message: message.into(),
        }
    }
}

/// Index paths are relative to `data/` (where the index lives) unless absolute or already under it:
/// the URL of an entry's report, relative to the page.
pub fn index_url(path: &str) -> String {
    if path.contains("://") || path.starts_with('/') || path.starts_with("data/") {
        path.to_string()
    } else {
        format!("data/{path}")
    }
}

/// One input read as the page reads it: the first report it makes.
#[cfg(test)]
pub fn parse_report(source: &str, text: &str) -> Result<Report, LoadFailure> {
    read_inputs(&[(source.to_string(), text.to_string())]).map(|mut reports| reports.remove(0))
}

/// Reads every input (an infermeter report each, or other tools' result files, which join into
/// reports: a sweep's files into one) after the checks of size and emptiness.
pub fn read_inputs(inputs: &[(String, String)]) -> Result<Vec<Report>, LoadFailure> {
    for (source, text) in inputs {
        if text.len() as u64 > MAX_REPORT_BYTES {
            return Err(too_large(source, text.len() as u64));
        }
        if text.trim().is_empty() {
            return Err(LoadFailure::new(source, "the file is empty"));
        }
    }
    let inputs: Vec<Input<'_>> = inputs
        .iter()
        .map(|(name, text)| Input { name, text })
        .collect();
    import::read(&inputs).map_err(|e: ImportError| LoadFailure::new(&e.file, e.detail()))
}

fn too_large(source: &str, bytes: u64) -> LoadFailure {
    LoadFailure::new(
        source,
        format!(
            "is {:.1} MB; reports larger than {} MB are not opened",
            bytes as f64 / 1e6,
            MAX_REPORT_BYTES / (1024 * 1024)
        ),
    )
}

/// The bytes of an input as text. Inputs are read as bytes and decoded here rather than by the
/// browser: a browser string would be copied into the wasm a second time, re-encoded. A leading
/// byte-order mark is dropped, as the browser would.
fn utf8_text(source: &str, bytes: Vec<u8>) -> Result<String, LoadFailure> {
    let mut text = String::from_utf8(bytes).map_err(|e| {
        LoadFailure::new(
            source,
            format!(
                "is not UTF-8 text (invalid byte at offset {}); save it as UTF-8 JSON",
                e.utf8_error().valid_up_to()
            ),
        )
    })?;
    if text.starts_with('\u{feff}') {
        text.drain(..'\u{feff}'.len_utf8());
    }
    Ok(text)
}

/// The reports inlined in the page, as `inline:N` URLs in order: all of an exported file's
/// reports, the first the main one. None on a served viewer.
pub fn inlined_report_urls() -> Vec<String> {
    let document = leptos::prelude::document();
    (1..)
        .take_while(|&n| document.get_element_by_id(&inline::element_id(n)).is_some())
        .map(inline::url)
        .collect()
}

/// The text of the report an `inline:N` URL names; `None` for any other URL.
fn inlined_text(url: &str) -> Option<Result<String, LoadFailure>> {
    let id = inline::element_id_of(url)?;
    let element = leptos::prelude::document().get_element_by_id(&id);
    Some(element.and_then(|e| e.text_content()).ok_or_else(|| {
        LoadFailure::new(
            url,
            "this page holds no such report (reports are inlined only in a file written by \
             `infermeter export`)",
        )
    }))
}

/// GETs `url` as text (`inline:N`: reads the report inlined in the page); HTTP errors and
/// network failures become messages.
pub async fn fetch_text(url: &str) -> Result<String, LoadFailure> {
    if let Some(inlined) = inlined_text(url) {
        return inlined;
    }
    let response = gloo_net::http::Request::get(url)
        .send()
        .await
        .map_err(|e| LoadFailure::new(url, format!("could not be fetched: {e}")))?;
    if !response.ok() {
        return Err(LoadFailure::new(
            url,
            format!(
                "the server answered HTTP {} {}",
                response.status(),
                response.status_text()
            ),
        ));
    }
    let bytes = response
        .binary()
        .await
        .map_err(|e| LoadFailure::new(url, format!("could not be read: {e}")))?;
    utf8_text(url, bytes)
}

/// Reports read from the address: all of them, or, when infermeter reports are compared, the
/// main one first, so its page is drawn while the others are read ([`Reading::rest`]).
#[derive(Clone)]
pub struct Reading {
    /// Shared, since a resource's value is cloned where it is awaited: the viewer never clones
    /// a report (its `Clone` would be compiled into the wasm, ~5 KB gzip).
    pub reports: Vec<Arc<Report>>,
    /// Every input (the main report's first) when the compared ones are still to be read:
    /// all infermeter reports, so [`read_inputs`] of the rest gives the compared reports in
    /// order, as a reading of all at once would.
    pub rest: Option<Arc<Vec<(String, String)>>>,
}

impl Reading {
    fn whole(reports: Vec<Report>) -> Reading {
        Reading {
            reports: shared(reports),
            rest: None,
        }
    }
}

/// `reports`, each shared.
pub fn shared(reports: Vec<Report>) -> Vec<Arc<Report>> {
    reports.into_iter().map(Arc::new).collect()
}

/// Fetches every report URL, main report first; the first failure wins. With `main_first`,
/// compared infermeter reports are left for later ([`Reading::rest`]): reading four reports
/// with per-request columns takes ~100 ms before anything is drawn. Other tools' result files
/// are read together, since several of them can make one report.
pub async fn fetch_reports(urls: Vec<String>, main_first: bool) -> Result<Reading, LoadFailure> {
    let inputs = fetch_inputs(&urls).await?;
    let compared_reports = inputs.len() > 1
        && inputs
            .iter()
            .all(|(_, text)| import::detect(text) == Some(Format::Infermeter));
    if main_first && compared_reports {
        return Ok(Reading {
            reports: shared(read_inputs(&inputs[..1])?),
            rest: Some(Arc::new(inputs)),
        });
    }
    read_inputs(&inputs).map(Reading::whole)
}

/// The text of every report URL. An AIPerf summary given without its records takes the
/// `profile_export.jsonl` beside it, when the server has one.
async fn fetch_inputs(urls: &[String]) -> Result<Vec<(String, String)>, LoadFailure> {
    let mut inputs = Vec::with_capacity(urls.len());
    for url in urls {
        let text = fetch_text(url).await?;
        inputs.push((url.clone(), text));
    }
    let formats: Vec<Option<Format>> = inputs.iter().map(|(_, t)| import::detect(t)).collect();
    if !formats.contains(&Some(Format::AiperfRecords)) {
        for (i, format) in formats.iter().enumerate() {
            let url = &inputs[i].0;
            if *format != Some(Format::AiperfSummary) || url.starts_with("inline:") {
                continue;
            }
            let beside = match url.rsplit_once('/') {
                Some((dir, _)) => format!("{dir}/profile_export.jsonl"),
                None => "profile_export.jsonl".into(),
            };
            if let Ok(text) = fetch_text(&beside).await {
                if import::detect(&text) == Some(Format::AiperfRecords) {
                    inputs.push((beside, text));
                }
            }
        }
    }
    Ok(inputs)
}

/// The landing page's report list.
pub async fn fetch_index() -> Result<ReportIndex, LoadFailure> {
    let text = fetch_text(INDEX_URL).await?;
    ReportIndex::parse(&text).map_err(|e| LoadFailure::new(INDEX_URL, e.to_string()))
}

/// Reads picked or dropped files, in order (the first is the main report).
pub async fn read_files(files: Vec<web_sys::File>) -> Result<Reading, LoadFailure> {
    let mut inputs = Vec::with_capacity(files.len());
    for file in files {
        let name = file.name();
        let size = file.size();
        if size > MAX_REPORT_BYTES as f64 {
            return Err(too_large(&name, size as u64));
        }
        let buffer = wasm_bindgen_futures::JsFuture::from(file.array_buffer())
            .await
            .map_err(|e| {
                LoadFailure::new(
                    &name,
                    format!("could not be read: {}", crate::js_error::message(&e)),
                )
            })?;
        let text = utf8_text(&name, js_sys::Uint8Array::new(&buffer).to_vec())?;
        inputs.push((name, text));
    }
    read_inputs(&inputs).map(Reading::whole)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_paths_are_relative_to_the_data_folder() {
        assert_eq!(index_url("reports/a.json"), "data/reports/a.json");
        assert_eq!(index_url("data/reports/a.json"), "data/reports/a.json");
        assert_eq!(
            index_url("https://example.org/c.json"),
            "https://example.org/c.json"
        );
        assert_eq!(index_url("/r/c.json"), "/r/c.json");
    }

    #[test]
    fn input_bytes_must_be_utf8_and_lose_a_byte_order_mark() {
        assert_eq!(
            utf8_text("a.json", b"\xef\xbb\xbf{}".to_vec()).unwrap(),
            "{}"
        );
        assert_eq!(utf8_text("a.json", b"{}".to_vec()).unwrap(), "{}");
        let err = utf8_text("latin1.json", b"{\"model\": \"caf\xe9\"}".to_vec()).unwrap_err();
        assert_eq!(err.source, "latin1.json");
        assert!(err.message.contains("not UTF-8"), "{}", err.message);
        assert!(err.message.contains("offset 14"), "{}", err.message);
    }

    #[test]
    fn report_errors_name_the_input_and_the_place() {
        let err =
            parse_report("bad.json", "{\n  \"schema_version\": \"1.0.0\",\n  oops").unwrap_err();
        assert_eq!(err.source, "bad.json");
        assert!(err.message.contains("line 3"), "{}", err.message);
        assert!(err.to_string().starts_with("bad.json: "));
        assert_eq!(
            parse_report("empty.json", "  ").unwrap_err().message,
            "the file is empty"
        );
    }
}
