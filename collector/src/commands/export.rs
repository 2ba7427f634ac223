//! `infermeter export REPORT.json... -o FILE.html`: one self-contained HTML file, the viewer
//! and the reports in it, that opens from disk (`file://`) in a browser with no server and no
//! network, e.g. attached to an email or a ticket.
//!
//! What goes in: the viewer's CSS as a `<style>`; ECharts and the wasm as their gzip copies
//! (`build-viewer.sh` writes them), base64 in inert `<script type="application/gzip">` elements
//! that `export_boot.js` decompresses in the browser (a third of the raw size); the
//! wasm-bindgen loader and its JS snippets as `data:` URLs (a page opened from disk may not load
//! modules from other files); the wasm modules split off the main one (loaded when first
//! needed: the sections below the first screen) as gzip elements too, which `export_boot.js`
//! turns into `blob:` URLs for the JS that loads them; the reports as they were read, in
//! `<script type="application/json">` elements the viewer reads instead of fetching
//! (`infermeter_report::inline`).

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine;

use crate::output::report_files::{read_reports, ReportFile, ReportFileError};
use crate::output::viewer_files::{ViewerError, ViewerFiles};

/// Options of `infermeter export`.
#[derive(clap::Args, Debug, Clone)]
pub struct ExportArgs {
    /// Reports to put in the file, or folders holding an index.json (a sweep's: the reports it
    /// lists); the first is opened, the others are compared with it.
    #[arg(required = true, value_name = "REPORT.json|DIR")]
    pub reports: Vec<PathBuf>,
    /// The HTML file to write (replaced if it exists). Default: the first report's path with
    /// `.html` in place of `.json` (a folder's: DIR.html beside it).
    #[arg(short, long, value_name = "FILE.html")]
    pub out: Option<PathBuf>,
    /// A built viewer's folder to take the viewer from (default: as `infermeter view` finds it).
    #[arg(long, env = "INFERMETER_DIST", value_name = "DIR")]
    pub dist: Option<PathBuf>,
}

/// Why no file was written.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error(transparent)]
    Viewer(#[from] ViewerError),
    #[error(transparent)]
    Report(#[from] ReportFileError),
    #[error(
        "{viewer} has no {what}: it is not a complete build of the viewer; rebuild it with \
         `bash scripts/build-viewer.sh`, which also writes the .gz copies"
    )]
    Incomplete { viewer: String, what: String },
    #[error(
        "{} is one of the reports: the export would overwrite it; name another file with -o",
        path.display()
    )]
    WouldOverwriteReport { path: PathBuf },
    #[error("cannot write {}: {source}", path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// What was written.
#[derive(Debug)]
pub struct Exported {
    pub path: PathBuf,
    pub bytes: usize,
    pub report_bytes: usize,
    pub reports: usize,
}

impl std::fmt::Display for Exported {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kb = |bytes: usize| bytes as f64 / 1000.0;
        write!(
            f,
            "Wrote {}: {:.1} KB (the viewer {:.1} KB, {} report{} {:.1} KB). It opens in a \
             browser from the file alone: no server, no network.",
            self.path.display(),
            kb(self.bytes),
            kb(self.bytes - self.report_bytes),
            self.reports,
            if self.reports == 1 { "" } else { "s" },
            kb(self.report_bytes),
        )
    }
}

/// Writes the file.
pub fn export(args: &ExportArgs) -> Result<Exported, ExportError> {
    let reports = read_reports(&args.reports)?;
    let path = args
        .out
        .clone()
        .unwrap_or_else(|| args.reports[0].with_extension("html"));
    if args.reports.iter().any(|r| same_file(r, &path)) {
        return Err(ExportError::WouldOverwriteReport { path });
    }
    let viewer = ViewerFiles::locate(args.dist.as_deref())?;
    let page = ViewerAssets::read(&viewer)?.page(&reports);
    crate::output::write_atomic(&path, page.as_bytes()).map_err(|source| ExportError::Write {
        path: path.clone(),
        source,
    })?;
    Ok(Exported {
        path,
        bytes: page.len(),
        report_bytes: reports.iter().map(|r| inline_json(&r.text).len()).sum(),
        reports: reports.len(),
    })
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

/// The viewer's files, ready to inline.
struct ViewerAssets {
    css: String,
    /// The wasm-bindgen loader, its snippet imports pointing at `data:` URLs, as a `data:` URL.
    loader_url: String,
    wasm_gzip: Cow<'static, [u8]>,
    echarts_gzip: Cow<'static, [u8]>,
    /// The wasm modules split off the main one (`split-<hash>.wasm`), gzip, by file name.
    split_gzip: Vec<(String, Bytes)>,
}

/// A viewer file's bytes, embedded in the binary or read from a folder.
type Bytes = Cow<'static, [u8]>;

impl ViewerAssets {
    fn read(viewer: &ViewerFiles) -> Result<ViewerAssets, ExportError> {
        let paths = viewer.paths()?;
        let incomplete = |what: &str| ExportError::Incomplete {
            viewer: viewer.to_string(),
            what: what.to_string(),
        };
        let top_level = |suffix: &str| -> Vec<&String> {
            paths
                .iter()
                .filter(|p| !p.contains('/') && p.ends_with(suffix))
                .collect()
        };
        let wasms = top_level("_bg.wasm");
        let [wasm] = wasms.as_slice() else {
            return Err(incomplete("single wasm file (*_bg.wasm)"));
        };
        let require = |path: &str| -> Result<Cow<'static, [u8]>, ExportError> {
            if paths.iter().any(|p| p == path) {
                Ok(viewer.read(path)?)
            } else {
                Err(incomplete(path))
            }
        };
        let loader = format!("{}.js", wasm.trim_end_matches("_bg.wasm"));
        let mut loader_js = String::from_utf8_lossy(&require(&loader)?).into_owned();
        for snippet in paths
            .iter()
            .filter(|p| p.starts_with("snippets/") && p.ends_with(".js"))
        {
            let url = data_url("text/javascript", &require(snippet)?);
            loader_js = point_imports_at(&loader_js, &format!("./{snippet}"), &url);
        }
        let split_gzip;
        (loader_js, split_gzip) = inline_split_modules(loader_js, &loader, &paths, &require)?;
        if let Some(left) = relative_import(&loader_js) {
            return Err(incomplete(&format!(
                "file for the loader's import of {left}"
            )));
        }
        let mut css = String::new();
        for sheet in top_level(".css") {
            css.push_str(&String::from_utf8_lossy(&require(sheet)?));
        }
        Ok(ViewerAssets {
            // `</` cannot end the style element this way; `<\/` reads the same in CSS.
            css: css.replace("</", "<\\/"),
            loader_url: data_url("text/javascript", loader_js.as_bytes()),
            wasm_gzip: require(&format!("{wasm}.gz"))?,
            echarts_gzip: require("vendor/echarts.min.js.gz")?,
            split_gzip,
        })
    }

    /// The whole page, with `reports` inlined.
    fn page(&self, reports: &[ReportFile]) -> String {
        let title = match reports {
            [one] => one.report.display_title(),
            [first, rest @ ..] => {
                format!("{} and {} more", first.report.display_title(), rest.len())
            }
            [] => String::new(),
        };
        let mut page = String::with_capacity(
            self.wasm_gzip.len() * 4 / 3 + self.echarts_gzip.len() * 4 / 3 + 100_000,
        );
        page.push_str(concat!(
            "<!DOCTYPE html>\n<html lang=\"en\" data-theme=\"light\">\n<head>\n",
            "<meta charset=\"utf-8\" />\n",
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\" />\n",
            "<meta name=\"color-scheme\" content=\"light dark\" />\n",
            "<link rel=\"icon\" href=\"data:,\" />\n<title>",
        ));
        page.push_str(&escape_html(&title));
        page.push_str(": infermeter report</title>\n<style>");
        page.push_str(&self.css);
        page.push_str("</style>\n");
        for (i, file) in reports.iter().enumerate() {
            page.push_str(&format!(
                "<script type=\"application/json\" id=\"{}\">",
                infermeter_report::inline::element_id(i + 1)
            ));
            page.push_str(&inline_json(&file.text));
            page.push_str("</script>\n");
        }
        for (id, bytes) in [
            ("infermeter-echarts", &self.echarts_gzip),
            ("infermeter-wasm", &self.wasm_gzip),
        ] {
            page.push_str(&format!("<script type=\"application/gzip\" id=\"{id}\">"));
            page.push_str(&BASE64.encode(bytes.as_ref()));
            page.push_str("</script>\n");
        }
        for (i, (name, bytes)) in self.split_gzip.iter().enumerate() {
            page.push_str(&format!(
                "<script type=\"application/gzip\" id=\"infermeter-split-{i}\" data-split=\"{name}\">"
            ));
            page.push_str(&BASE64.encode(bytes.as_ref()));
            page.push_str("</script>\n");
        }
        page.push_str("<script type=\"module\">\n");
        page.push_str(&include_str!("export_boot.js").replace("__LOADER_URL__", &self.loader_url));
        page.push_str(concat!(
            "</script>\n</head>\n<body>\n",
            "<p id=\"boot\" class=\"boot\" role=\"status\" data-testid=\"boot\">",
            "Loading the report viewer…</p>\n",
            "<noscript>This report viewer needs JavaScript and WebAssembly.</noscript>\n",
            "</body>\n</html>\n",
        ));
        page
    }
}

/// The loader's import of the JS that loads the wasm modules split off the main one
/// (scripts/assemble-viewer.mjs names it `split-<hash>.js`, the modules `split-<hash>.wasm`)
/// pointed at a `data:` URL of that JS, rewritten for a page without a server: each module's
/// address is the `blob:` URL `export_boot.js` makes from the page's gzip copy, and `initSync`
/// comes through a global (a `data:` module cannot import the loader that imports it; it is
/// called only when a split module loads, after the loader has run). Returns the loader and the
/// modules' gzip copies by file name.
fn inline_split_modules(
    mut loader_js: String,
    loader: &str,
    paths: &[String],
    require: &dyn Fn(&str) -> Result<Bytes, ExportError>,
) -> Result<(String, Vec<(String, Bytes)>), ExportError> {
    let split = |suffix: &str| -> Vec<&String> {
        paths
            .iter()
            .filter(|p| !p.contains('/') && p.starts_with("split-") && p.ends_with(suffix))
            .collect()
    };
    let mut modules = Vec::new();
    for link in split(".js") {
        let mut link_js = String::from_utf8_lossy(&require(link)?).into_owned();
        for module in split(".wasm") {
            link_js = link_js.replace(
                &format!("\"./{module}\""),
                &format!("globalThis.infermeterSplitUrls[\"{module}\"]"),
            );
            modules.push((module.clone(), require(&format!("{module}.gz"))?));
        }
        let shim = "export const initSync=(...a)=>globalThis.infermeterInitSync(...a);";
        link_js = point_imports_at(
            &link_js,
            &format!("./{loader}"),
            &data_url("text/javascript", shim.as_bytes()),
        );
        if let Some(left) =
            relative_import(&link_js).or(link_js.contains("\"./").then_some(link.as_str()))
        {
            return Err(ExportError::Incomplete {
                viewer: format!("{link} (the loader of the split-off wasm modules)"),
                what: format!("file for its reference to {left}"),
            });
        }
        let url = data_url("text/javascript", link_js.as_bytes());
        loader_js = point_imports_at(&loader_js, &format!("./{link}"), &url);
    }
    Ok((loader_js, modules))
}

/// Report JSON that cannot end its `<script>` element or start a comment in it: `<` occurs in
/// JSON only inside strings, where `\u003c` is the same character. Nothing else changes.
fn inline_json(text: &str) -> String {
    text.trim_start_matches('\u{feff}').replace('<', "\\u003c")
}

fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

fn data_url(media_type: &str, bytes: &[u8]) -> String {
    format!("data:{media_type};base64,{}", BASE64.encode(bytes))
}

/// `js` with each static import of `specifier` (`from"…"`, `from '…'`) importing `url` instead.
/// Only imports: the same path also names the wasm's import modules, which must stay.
fn point_imports_at(js: &str, specifier: &str, url: &str) -> String {
    let mut js = js.to_string();
    for from in ["from", "from "] {
        for quote in ['"', '\''] {
            js = js.replace(
                &format!("{from}{quote}{specifier}{quote}"),
                &format!("{from}{quote}{url}{quote}"),
            );
        }
    }
    js
}

/// A relative import left in `js`, which a page opened from disk could not load.
fn relative_import(js: &str) -> Option<&str> {
    ["from\"", "from '", "from'", "from \""]
        .iter()
        .find_map(|start| {
            let quote = start.chars().last()?;
            js.match_indices(start).find_map(|(at, _)| {
                let rest = &js[at + start.len()..];
                let specifier = &rest[..rest.find(quote)?];
                (specifier.starts_with("./") || specifier.starts_with("../")).then_some(specifier)
            })
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn report_json_cannot_close_its_element_and_parses_the_same() {
        let text = r#"{"title": "</script><script>alert(1)</script><!--", "n": 1}"#;
        let inlined = inline_json(text);
        assert!(!inlined.contains('<'), "{inlined}");
        let a: serde_json::Value = serde_json::from_str(text).unwrap();
        let b: serde_json::Value = serde_json::from_str(&inlined).unwrap();
        assert_eq!(a, b);
        assert_eq!(inline_json("\u{feff}{}"), "{}");
    }

    #[test]
    fn only_the_loaders_imports_are_pointed_at_data_urls() {
        let loader = concat!(
            r#"import{a as e}from"./snippets/x/y.js";import*as _ from './snippets/x/y.js';"#,
            r#"const imports={"./snippets/x/y.js":_};"#
        );
        let js = point_imports_at(
            loader,
            "./snippets/x/y.js",
            "data:text/javascript;base64,AA",
        );
        assert_eq!(
            js,
            concat!(
                r#"import{a as e}from"data:text/javascript;base64,AA";"#,
                r#"import*as _ from 'data:text/javascript;base64,AA';"#,
                r#"const imports={"./snippets/x/y.js":_};"#
            )
        );
        assert_eq!(relative_import(&js), None);
        assert_eq!(
            relative_import(r#"import x from"./other.js";"#),
            Some("./other.js")
        );
        assert_eq!(
            relative_import(r#"import x from 'https://cdn/x.js';"#),
            None
        );
    }

    #[test]
    fn a_hostile_report_stays_text_in_the_page() {
        let hostile = r#"<img src=x onerror=alert(1)></script><script>alert(2)</script><!--"#;
        let mut report: infermeter_report::Report = serde_json::from_str(
            &std::fs::read_to_string(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../data/reports/sample-synthetic.json"
            ))
            .unwrap(),
        )
        .unwrap();
        report.metadata.title = Some(hostile.into());
        let text = serde_json::to_string(&report).unwrap();
        let assets = ViewerAssets {
            css: String::new(),
            loader_url: "data:text/javascript;base64,AA".into(),
            wasm_gzip: Cow::Borrowed(b"wasm"),
            echarts_gzip: Cow::Borrowed(b"echarts"),
            split_gzip: vec![("split-0.wasm".into(), Cow::Borrowed(b"split"))],
        };
        let file = ReportFile {
            name: "1-a.json".into(),
            text,
            report,
        };
        let page = assets.page(std::slice::from_ref(&file));
        assert!(!page.contains("<img"), "{page}");
        assert!(!page.contains("<!--"), "{page}");
        // Each element the export opens is closed by its own tag, none by the report's.
        assert_eq!(page.matches("<script").count(), 5);
        assert_eq!(page.matches("</script>").count(), 5);
        assert!(
            page.contains("<title>&lt;img src=x onerror=alert(1)&gt;"),
            "{page}"
        );
        let marker = "id=\"infermeter-report-1\">";
        let start = page.find(marker).unwrap() + marker.len();
        let inlined = &page[start..start + page[start..].find("</script>").unwrap()];
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(inlined).unwrap(),
            serde_json::from_str::<serde_json::Value>(&file.text).unwrap()
        );
    }

    #[test]
    fn html_escaping_leaves_no_markup() {
        assert_eq!(
            escape_html(r#"<img src=x onerror="alert('1')"> & co"#),
            "&lt;img src=x onerror=&quot;alert(&#39;1&#39;)&quot;&gt; &amp; co"
        );
    }
}
