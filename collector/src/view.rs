//! `infermeter view REPORT.json...`: serves the built viewer with the given reports on loopback
//! and prints the URL that opens them.
//!
//! The viewer (`dist/`, built by trunk) is served as static files. The reports are validated
//! with `infermeter_report::load_report` first (an invalid one is refused with the validation
//! message, before anything listens) and served at `/data/reports/<n>-<file name>`, with a
//! generated `/data/index.json` that replaces the one in `dist/`, so the landing page lists
//! exactly these reports. The printed URL opens the first one and compares the rest.
//!
//! Caching: trunk names the wasm and its JS loader by a hash of cargo's wasm, and the CSS by a
//! hash of its content, so browsers may keep those for good; everything else is revalidated on
//! each load (a 304 when unchanged). A returning browser then reuses its compiled ECharts (V8's
//! code cache): its first chart comes ~1.6x sooner on a two-core machine (`bench.mjs`).

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use axum::body::Bytes;
use axum::extract::{Path as UrlPath, Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use infermeter_report::Report;
use serde_json::json;
use tower_http::services::ServeDir;

const NOT_BUILT: &str = "viewer not built: run `trunk build --release` (see README)";

/// Options of `infermeter view`.
#[derive(clap::Args, Debug, Clone)]
pub struct ViewArgs {
    /// Report files to show; the first is opened, the others are compared with it.
    #[arg(required = true, value_name = "REPORT.json")]
    pub reports: Vec<PathBuf>,
    /// Address to serve on (port 0: any free port).
    #[arg(long, default_value = "127.0.0.1:0")]
    pub listen: SocketAddr,
    /// The built viewer (trunk's `dist/`). Default: `<repo>/dist` next to the executable or the
    /// current directory.
    #[arg(long, env = "INFERMETER_DIST", value_name = "DIR")]
    pub dist: Option<PathBuf>,
    /// Open the URL in the default browser.
    #[arg(long)]
    pub open: bool,
}

/// A viewer being served. Dropping it stops the server.
pub struct RunningView {
    pub addr: SocketAddr,
    /// Opens the first report and compares the others.
    pub url: String,
    server: tokio::task::JoinHandle<std::io::Result<()>>,
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
    println!("Viewer: {}", view.url);
    println!("Press Ctrl-C to stop.");
    if open {
        open_browser(&view.url);
    }
    tokio::signal::ctrl_c().await?;
    Ok(())
}

/// Validates the reports, binds and serves in the background.
pub async fn start(args: ViewArgs) -> anyhow::Result<RunningView> {
    let dist = find_dist(args.dist.as_deref())?;
    let mut reports = HashMap::new();
    let mut entries = Vec::new();
    for (i, path) in args.reports.iter().enumerate() {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read report {}", path.display()))?;
        let report = infermeter_report::load_report(&text)
            .with_context(|| format!("{} is not a valid report", path.display()))?;
        let name = served_name(i + 1, path);
        entries.push(index_entry(&name, &report));
        reports.insert(name, Bytes::from(text));
    }
    let index = serde_json::to_vec_pretty(&json!({ "reports": entries }))?;
    let first = format!("data/reports/{}", served_name(1, &args.reports[0]));
    let compare: String = args
        .reports
        .iter()
        .enumerate()
        .skip(1)
        .map(|(i, p)| format!("&compare=data/reports/{}", served_name(i + 1, p)))
        .collect();

    let app = Router::new()
        .route(
            "/data/index.json",
            get(move || async move { ([(header::CONTENT_TYPE, "application/json")], index) }),
        )
        .route("/data/reports/{name}", get(serve_report))
        .with_state(std::sync::Arc::new(reports))
        // build-viewer.sh writes a .gz beside each file: served as is to browsers that take gzip.
        .fallback_service(ServeDir::new(&dist).precompressed_gzip())
        .layer(axum::middleware::from_fn(cache_policy));
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .with_context(|| format!("cannot listen on {}", args.listen))?;
    let addr = listener.local_addr()?;
    let server = tokio::spawn(async move { axum::serve(listener, app).await });
    Ok(RunningView {
        addr,
        url: format!("http://{addr}/?report={first}{compare}"),
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

/// `<n>-<file name>` with anything but `[A-Za-z0-9._-]` replaced, so the name needs no escaping
/// in a URL and two reports with the same file name stay apart.
fn served_name(n: usize, path: &Path) -> String {
    let file = path
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_else(|| "report.json".into());
    let safe: String = file
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("{n}-{safe}")
}

fn index_entry(name: &str, report: &Report) -> serde_json::Value {
    let meta = &report.metadata;
    json!({
        "path": format!("reports/{name}"),
        "title": report.display_title(),
        "model": meta.model.id,
        "gpu": meta.hardware.gpu_label(),
        "engine": meta.engine.name,
        "synthetic": meta.synthetic,
    })
}

/// The explicit directory, else the first `dist/` holding an `index.html` above the executable
/// or the current directory.
fn find_dist(explicit: Option<&Path>) -> anyhow::Result<PathBuf> {
    if let Some(dir) = explicit {
        if dir.join("index.html").is_file() {
            return Ok(dir.to_path_buf());
        }
        bail!("{NOT_BUILT}: {} has no index.html", dir.display());
    }
    let exe_dir = std::env::current_exe()
        .ok()
        .and_then(|e| e.parent().map(Path::to_path_buf));
    let cwd = std::env::current_dir().ok();
    exe_dir
        .iter()
        .chain(cwd.iter())
        .flat_map(|start| start.ancestors())
        .map(|dir| dir.join("dist"))
        .find(|dist| dist.join("index.html").is_file())
        .with_context(|| {
            format!("{NOT_BUILT}; or point --dist / INFERMETER_DIST at the built viewer")
        })
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
    use infermeter_report::{EngineInfo, HardwareInfo, Metadata, ModelInfo, SCHEMA_VERSION};

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
            view.url,
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
        assert!(err.contains("trunk build --release"), "{err}");
    }
}
