//! `infermeter view REPORT.json...`: serves the built viewer with the given reports on loopback
//! and prints the URL that opens them.
//!
//! The viewer's files are served as static files, from where `ViewerFiles::locate` finds them:
//! `--dist`, a checkout's `dist/`, or the copy embedded in the binary. The reports are validated
//! with `infermeter_report::load_report` first (an invalid one is refused with the validation
//! message, before anything listens) and served at `/data/reports/<n>-<file name>`, with a
//! generated `/data/index.json`, so the landing page lists exactly these reports. The printed
//! URL opens the first one and compares the rest.
//!
//! Caching: trunk names the wasm and its JS loader by a hash of cargo's wasm, and the CSS by a
//! hash of its content, so browsers may keep those for good; everything else is revalidated on
//! each load (a 304 when unchanged). A returning browser then reuses its compiled ECharts (V8's
//! code cache): its first chart comes ~1.6x sooner on a two-core machine (`bench.mjs`).

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::Context;
use axum::body::Bytes;
use axum::extract::{Path as UrlPath, Request, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode, Uri};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use infermeter_report::index::{IndexEntry, ReportIndex};
use tower_http::services::ServeDir;

use crate::output::report_files::{read_reports, ReportFile};
use crate::output::viewer_files::{embedded_file, ViewerFiles};

/// Options of `infermeter view`.
#[derive(clap::Args, Debug, Clone)]
pub struct ViewArgs {
    /// Report files to show; the first is opened, the others are compared with it.
    #[arg(required = true, value_name = "REPORT.json")]
    pub reports: Vec<PathBuf>,
    /// Address to serve on (port 0: any free port).
    #[arg(long, default_value = "127.0.0.1:0")]
    pub listen: SocketAddr,
    /// A built viewer's folder (`dist/` from scripts/build-viewer.sh) to serve. Default: an
    /// infermeter checkout's `dist/` above the executable or the current directory, else the
    /// viewer embedded in this binary.
    #[arg(long, env = "INFERMETER_DIST", value_name = "DIR")]
    pub dist: Option<PathBuf>,
    /// Open the URL in the default browser.
    #[arg(long)]
    pub open: bool,
}

/// A viewer being served. Dropping it stops the server.
pub struct RunningView {
    pub addr: SocketAddr,
    /// The page's address after the host: opens the first report and compares the others.
    page: String,
    /// Where the viewer's files come from.
    pub viewer: ViewerFiles,
    server: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl RunningView {
    /// The viewer's URL: the first report opened, the others compared with it.
    pub fn url(&self) -> String {
        format!("http://{}/{}", self.addr, self.page)
    }
}

impl Drop for RunningView {
    fn drop(&mut self) {
        self.server.abort();
    }
}

/// Serves until Ctrl-C.
pub async fn run(args: ViewArgs) -> anyhow::Result<()> {
    let open = args.open;
    let view = start(args).await?;
    println!("Serving {}", view.viewer);
    println!("Viewer: {}", view.url());
    println!("Press Ctrl-C to stop.");
    if open {
        open_browser(&view.url());
    }
    tokio::signal::ctrl_c().await?;
    Ok(())
}

/// Validates the reports, binds and serves in the background.
pub async fn start(args: ViewArgs) -> anyhow::Result<RunningView> {
    let viewer = ViewerFiles::locate(args.dist.as_deref())?;
    let files = read_reports(&args.reports)?;
    let index = ReportIndex {
        reports: files.iter().map(index_entry).collect(),
    }
    .to_json();
    let first = format!("data/reports/{}", files[0].name);
    let compare: String = files[1..]
        .iter()
        .map(|f| format!("&compare=data/reports/{}", f.name))
        .collect();
    let reports: HashMap<String, Bytes> = files
        .into_iter()
        .map(|f| (f.name, Bytes::from(f.text)))
        .collect();

    let app = Router::new()
        .route(
            "/data/index.json",
            get(move || async move { ([(header::CONTENT_TYPE, "application/json")], index) }),
        )
        .route("/data/reports/{name}", get(serve_report))
        .with_state(std::sync::Arc::new(reports));
    // build-viewer.sh writes a .gz beside each file: served as is to browsers that take gzip.
    let app = match &viewer {
        ViewerFiles::Folder(dist) => app.fallback_service(ServeDir::new(dist).precompressed_gzip()),
        ViewerFiles::Embedded => app.fallback(|uri: Uri, headers: HeaderMap| async move {
            static_file(&uri, &headers, embedded_file)
        }),
    }
    .layer(axum::middleware::from_fn(cache_policy));
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .with_context(|| format!("cannot listen on {}", args.listen))?;
    let addr = listener.local_addr()?;
    let server = tokio::spawn(async move { axum::serve(listener, app).await });
    Ok(RunningView {
        addr,
        page: format!("?report={first}{compare}"),
        viewer,
        server,
    })
}

const KEEP: HeaderValue = HeaderValue::from_static("public, max-age=31536000, immutable");
const REVALIDATE: HeaderValue = HeaderValue::from_static("no-cache");

/// `Cache-Control` by path: content-hashed app files are kept, anything else (the page, the
/// vendored ECharts, reports, the report index) is revalidated, so a rebuilt viewer or another
/// `infermeter view` run on the same port is never shown stale.
async fn cache_policy(request: Request, next: Next) -> Response {
    let keep = is_content_hashed(request.uri().path());
    let mut response = next.run(request).await;
    let value = if keep && response.status().is_success() {
        KEEP
    } else {
        REVALIDATE
    };
    response.headers_mut().insert(header::CACHE_CONTROL, value);
    response
}

/// Trunk's output names: `<name>-<16 hex digits>` before the file name's first `.` or `_`. Not a
/// folder's: wasm-bindgen's `snippets/<crate>-<hash>/` keeps its name when the JS in it changes.
/// Reports are never treated as such, even when a name happens to match.
fn is_content_hashed(path: &str) -> bool {
    let file = path.rsplit('/').next().unwrap_or_default();
    let stem = file.split(['.', '_']).next().unwrap_or_default();
    !path.starts_with("/data/")
        && stem.rsplit_once('-').is_some_and(|(name, hash)| {
            !name.is_empty()
                && hash.len() == 16
                && hash
                    .bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        })
}

async fn serve_report(
    State(reports): State<std::sync::Arc<HashMap<String, Bytes>>>,
    UrlPath(name): UrlPath<String>,
) -> Response {
    match reports.get(&name) {
        Some(body) => ([(header::CONTENT_TYPE, "application/json")], body.clone()).into_response(),
        None => (StatusCode::NOT_FOUND, "no such report").into_response(),
    }
}

/// The landing page's entry of a report.
fn index_entry(file: &ReportFile) -> IndexEntry {
    let meta = &file.report.metadata;
    IndexEntry {
        path: format!("reports/{}", file.name),
        title: Some(file.report.display_title()),
        description: None,
        model: Some(meta.model.id.clone()),
        gpu: Some(meta.hardware.gpu_label()),
        engine: Some(meta.engine.name.clone()),
        synthetic: meta.synthetic,
    }
}

/// A viewer file from `lookup` (path under `dist/` -> ETag and bytes), as `ServeDir` serves a
/// folder: `/` is `index.html`, the `.gz` copy goes to a browser that takes gzip, and an ETag
/// the browser sends back gets a 304.
fn static_file(
    uri: &Uri,
    headers: &HeaderMap,
    lookup: impl Fn(&str) -> Option<(&'static str, &'static [u8])>,
) -> Response {
    let path = uri.path().trim_start_matches('/');
    let path = if path.is_empty() || path.ends_with('/') {
        format!("{path}index.html")
    } else {
        path.to_string()
    };
    let Some(plain) = lookup(&path) else {
        return (StatusCode::NOT_FOUND, "no such file in the viewer").into_response();
    };
    let gzip = accepts_gzip(headers)
        .then(|| lookup(&format!("{path}.gz")))
        .flatten();
    let (etag, body) = gzip.unwrap_or(plain);
    let mut response = if headers
        .get(header::IF_NONE_MATCH)
        .is_some_and(|tag| tag.as_bytes() == etag.as_bytes())
    {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        ([(header::CONTENT_TYPE, content_type(&path))], body).into_response()
    };
    let response_headers = response.headers_mut();
    response_headers.insert(header::ETAG, HeaderValue::from_static(etag));
    response_headers.insert(header::VARY, HeaderValue::from_static("accept-encoding"));
    if gzip.is_some() {
        response_headers.insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
    }
    response
}

/// Whether `Accept-Encoding` lists gzip (and does not refuse it with `q=0`).
fn accepts_gzip(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::ACCEPT_ENCODING)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|coding| {
            let mut parts = coding.split(';').map(str::trim);
            parts.next() == Some("gzip") && parts.all(|p| p.replace(' ', "") != "q=0")
        })
}

/// The media types of what a built viewer holds (`application/wasm` lets the browser compile
/// the wasm while it downloads).
fn content_type(path: &str) -> &'static str {
    match path.rsplit_once('.').map(|(_, ext)| ext) {
        Some("html") => "text/html; charset=utf-8",
        Some("js") => "text/javascript",
        Some("wasm") => "application/wasm",
        Some("css") => "text/css",
        Some("json") => "application/json",
        _ => "application/octet-stream",
    }
}

fn open_browser(url: &str) {
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else {
        "xdg-open"
    };
    if let Err(e) = std::process::Command::new(opener).arg(url).spawn() {
        tracing::warn!("could not open a browser with {opener} ({e}); open {url} yourself");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use infermeter_report::{
        EngineInfo, HardwareInfo, Metadata, ModelInfo, Report, SCHEMA_VERSION,
    };

    fn report(title: Option<&str>, synthetic: bool) -> Report {
        Report {
            schema_version: SCHEMA_VERSION.into(),
            metadata: Metadata {
                title: title.map(str::to_string),
                synthetic,
                model: ModelInfo {
                    id: "Qwen/Qwen3-Coder-30B-A3B-Instruct".into(),
                    ..Default::default()
                },
                engine: EngineInfo {
                    name: "vLLM".into(),
                    ..Default::default()
                },
                hardware: HardwareInfo {
                    gpu_model: "NVIDIA H100 PCIe".into(),
                    gpu_count: 1,
                    ..Default::default()
                },
                started_at: "2025-03-14T09:26:53Z".into(),
                collector_version: "0.1.0".into(),
                ..Default::default()
            },
            status: Default::default(),
            measurement: Default::default(),
            scenarios: vec![],
            series: vec![],
            records: None,
            warnings: vec![],
            sharding: None,
        }
    }

    struct Fixture {
        dir: tempfile::TempDir,
    }

    impl Fixture {
        fn new() -> Fixture {
            let dir = tempfile::tempdir().unwrap();
            std::fs::create_dir_all(dir.path().join("dist/data")).unwrap();
            std::fs::write(dir.path().join("dist/index.html"), "<html>viewer</html>").unwrap();
            std::fs::write(dir.path().join("dist/data/index.json"), "{\"reports\":[]}").unwrap();
            Fixture { dir }
        }
        fn write(&self, name: &str, text: &str) -> PathBuf {
            let path = self.dir.path().join(name);
            std::fs::write(&path, text).unwrap();
            path
        }
        fn args(&self, reports: Vec<PathBuf>) -> ViewArgs {
            ViewArgs {
                reports,
                listen: "127.0.0.1:0".parse().unwrap(),
                dist: Some(self.dir.path().join("dist")),
                open: false,
            }
        }
    }

    #[tokio::test]
    async fn serves_viewer_index_and_reports_over_loopback() {
        let fx = Fixture::new();
        let a = serde_json::to_string(&report(Some("H100 run"), false)).unwrap();
        let b = serde_json::to_string(&report(None, true)).unwrap();
        let reports = vec![fx.write("a.json", &a), fx.write("my run.json", &b)];
        let view = start(fx.args(reports)).await.unwrap();
        let base = format!("http://{}", view.addr);
        assert_eq!(
            view.url(),
            format!("{base}/?report=data/reports/1-a.json&compare=data/reports/2-my_run.json")
        );
        let get = |path: &str| {
            let url = format!("{base}{path}");
            async move {
                let r = reqwest::get(url).await.unwrap();
                (r.status(), r.text().await.unwrap())
            }
        };
        assert_eq!(get("/").await.1, "<html>viewer</html>");
        assert_eq!(get("/index.html").await.1, "<html>viewer</html>");
        let (status, index) = get("/data/index.json").await;
        assert_eq!(status, StatusCode::OK);
        let index: serde_json::Value = serde_json::from_str(&index).unwrap();
        assert_eq!(index["reports"][0]["path"], "reports/1-a.json");
        assert_eq!(index["reports"][0]["title"], "H100 run");
        assert_eq!(index["reports"][0]["synthetic"], false);
        assert_eq!(index["reports"][1]["path"], "reports/2-my_run.json");
        assert_eq!(
            index["reports"][1]["title"],
            "Qwen/Qwen3-Coder-30B-A3B-Instruct on 1x NVIDIA H100 PCIe"
        );
        assert_eq!(index["reports"][1]["synthetic"], true);
        assert_eq!(get("/data/reports/1-a.json").await.1, a);
        assert_eq!(get("/data/reports/2-my_run.json").await.1, b);
        assert_eq!(
            get("/data/reports/3-none.json").await.0,
            StatusCode::NOT_FOUND
        );
    }

    #[tokio::test]
    async fn serves_the_gzip_copy_to_browsers_that_take_it() {
        let fx = Fixture::new();
        let gzip = b"\x1f\x8b stands in for the compressed wasm".to_vec();
        fx.write("dist/app.wasm", "raw wasm");
        std::fs::write(fx.dir.path().join("dist/app.wasm.gz"), &gzip).unwrap();
        let report = serde_json::to_string(&report(None, true)).unwrap();
        let view = start(fx.args(vec![fx.write("a.json", &report)]))
            .await
            .unwrap();
        let url = format!("http://{}/app.wasm", view.addr);
        let client = reqwest::Client::new();
        let plain = client.get(&url).send().await.unwrap();
        assert_eq!(plain.headers().get(header::CONTENT_ENCODING), None);
        assert_eq!(plain.text().await.unwrap(), "raw wasm");
        let compressed = client
            .get(&url)
            .header(header::ACCEPT_ENCODING, "gzip")
            .send()
            .await
            .unwrap();
        assert_eq!(compressed.headers()[header::CONTENT_ENCODING], "gzip");
        assert_eq!(compressed.bytes().await.unwrap(), gzip);
    }

    #[test]
    fn only_trunks_content_hashed_names_count_as_such() {
        for kept in [
            "/infermeter-viewer-6c9c08ac11b32494.js",
            "/infermeter-viewer-6c9c08ac11b32494_bg.wasm",
            "/main-15b614877f96ca1a.css",
        ] {
            assert!(is_content_hashed(kept), "{kept}");
        }
        for revalidated in [
            "/",
            "/index.html",
            "/vendor/echarts.min.js",
            // The folder's hash names the crate, not the file's content.
            "/snippets/infermeter-viewer-88b118abb93188ee/public/infermeter-echarts.js",
            "/data/index.json",
            "/data/reports/1-run-0123456789abcdef.json",
            "/main-15B614877F96CA1A.css",
            "/main-15b614877f96ca1.css",
            "/-15b614877f96ca1a.css",
        ] {
            assert!(!is_content_hashed(revalidated), "{revalidated}");
        }
    }

    #[tokio::test]
    async fn hashed_files_are_kept_and_the_rest_revalidated() {
        let fx = Fixture::new();
        fx.write("dist/app-0123456789abcdef_bg.wasm", "wasm");
        std::fs::create_dir_all(fx.dir.path().join("dist/vendor")).unwrap();
        fx.write("dist/vendor/echarts.min.js", "echarts");
        std::fs::create_dir_all(fx.dir.path().join("dist/snippets/viewer-0123456789abcdef"))
            .unwrap();
        fx.write("dist/snippets/viewer-0123456789abcdef/glue.js", "glue");
        let report = serde_json::to_string(&report(None, true)).unwrap();
        let view = start(fx.args(vec![fx.write("a.json", &report)]))
            .await
            .unwrap();
        let client = reqwest::Client::new();
        let get = |path: &str| client.get(format!("http://{}{path}", view.addr)).send();
        let cache_control = |r: &reqwest::Response| r.headers()[header::CACHE_CONTROL].clone();

        let wasm = get("/app-0123456789abcdef_bg.wasm").await.unwrap();
        assert_eq!(cache_control(&wasm), KEEP);
        for path in [
            "/",
            "/vendor/echarts.min.js",
            "/snippets/viewer-0123456789abcdef/glue.js",
            "/data/index.json",
            "/data/reports/1-a.json",
        ] {
            let response = get(path).await.unwrap();
            assert_eq!(response.status(), StatusCode::OK, "{path}");
            assert_eq!(cache_control(&response), REVALIDATE, "{path}");
        }
        // A missing hashed name is not kept: the build that has it may come later.
        let missing = get("/app-fedcba9876543210_bg.wasm").await.unwrap();
        assert_eq!(missing.status(), StatusCode::NOT_FOUND);
        assert_eq!(cache_control(&missing), REVALIDATE);

        // Revalidation answers 304 while the file is unchanged.
        let echarts = get("/vendor/echarts.min.js").await.unwrap();
        let modified = echarts.headers()[header::LAST_MODIFIED].clone();
        let again = client
            .get(format!("http://{}/vendor/echarts.min.js", view.addr))
            .header(header::IF_MODIFIED_SINCE, modified)
            .send()
            .await
            .unwrap();
        assert_eq!(again.status(), StatusCode::NOT_MODIFIED);
    }

    /// A viewer of three files, one with a gzip copy, as `embedded_file` finds them.
    fn fixture_viewer(path: &str) -> Option<(&'static str, &'static [u8])> {
        match path {
            "index.html" => Some(("\"page\"", b"<html>viewer</html>".as_slice())),
            "app_bg.wasm" => Some(("\"wasm\"", b"raw wasm".as_slice())),
            "app_bg.wasm.gz" => Some(("\"wasm-gz\"", b"\x1f\x8b gzip".as_slice())),
            _ => None,
        }
    }

    async fn fetch_static(path: &str, headers: &[(header::HeaderName, &str)]) -> Response {
        let uri: Uri = path.parse().unwrap();
        let mut map = HeaderMap::new();
        for (name, value) in headers {
            map.insert(name, value.parse().unwrap());
        }
        static_file(&uri, &map, fixture_viewer)
    }

    async fn body(response: Response) -> Vec<u8> {
        axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .unwrap()
            .to_vec()
    }

    #[tokio::test]
    async fn embedded_files_are_served_as_a_folder_would_be() {
        let page = fetch_static("/", &[]).await;
        assert_eq!(page.status(), StatusCode::OK);
        assert_eq!(
            page.headers()[header::CONTENT_TYPE],
            "text/html; charset=utf-8"
        );
        assert_eq!(body(page).await, b"<html>viewer</html>");

        let plain = fetch_static("/app_bg.wasm", &[(header::ACCEPT_ENCODING, "br")]).await;
        assert_eq!(plain.headers()[header::CONTENT_TYPE], "application/wasm");
        assert_eq!(plain.headers().get(header::CONTENT_ENCODING), None);
        assert_eq!(body(plain).await, b"raw wasm");

        let gzip = [(header::ACCEPT_ENCODING, "br, gzip;q=0.8")];
        let compressed = fetch_static("/app_bg.wasm", &gzip).await;
        assert_eq!(compressed.headers()[header::CONTENT_ENCODING], "gzip");
        assert_eq!(
            compressed.headers()[header::CONTENT_TYPE],
            "application/wasm"
        );
        assert_eq!(compressed.headers()[header::ETAG], "\"wasm-gz\"");
        assert_eq!(body(compressed).await, b"\x1f\x8b gzip");
        let refused = fetch_static("/app_bg.wasm", &[(header::ACCEPT_ENCODING, "gzip;q=0")]).await;
        assert_eq!(refused.headers().get(header::CONTENT_ENCODING), None);

        let again = [
            (header::ACCEPT_ENCODING, "gzip"),
            (header::IF_NONE_MATCH, "\"wasm-gz\""),
        ];
        let unchanged = fetch_static("/app_bg.wasm", &again).await;
        assert_eq!(unchanged.status(), StatusCode::NOT_MODIFIED);
        assert!(body(unchanged).await.is_empty());
        let stale = [(header::IF_NONE_MATCH, "\"wasm-gz\"")];
        assert_eq!(
            fetch_static("/app_bg.wasm", &stale).await.status(),
            StatusCode::OK
        );

        assert_eq!(
            fetch_static("/missing.js", &[]).await.status(),
            StatusCode::NOT_FOUND
        );
    }

    #[tokio::test]
    async fn invalid_report_is_refused_with_the_reason() {
        let fx = Fixture::new();
        let bad = fx.write("bad.json", "{\"schema_version\": \"9.0.0\"}");
        let err = start(fx.args(vec![bad])).await.err().expect("refused");
        let message = format!("{err:#}");
        assert!(
            message.contains("bad.json is not a valid report"),
            "{message}"
        );
        assert!(
            message.contains("newer than this reader supports"),
            "{message}"
        );
    }

    #[tokio::test]
    async fn missing_viewer_build_says_how_to_build_it() {
        let fx = Fixture::new();
        let a = fx.write(
            "a.json",
            &serde_json::to_string(&report(None, false)).unwrap(),
        );
        let mut args = fx.args(vec![a]);
        args.dist = Some(fx.dir.path().join("nowhere"));
        let err = start(args).await.err().expect("refused").to_string();
        assert!(err.contains("nowhere is not a built viewer"), "{err}");
        assert!(err.contains("bash scripts/build-viewer.sh"), "{err}");
    }
}
