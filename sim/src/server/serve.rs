//! Binding, starting and stopping the server, and its routes.

use std::net::SocketAddr;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::http::StatusCode;
use axum::middleware;
use axum::routing::{get, post};
use axum::Router;
use serde_json::json;
use tokio::net::{TcpListener, TcpSocket};
use tokio::sync::oneshot;

use crate::engine::Profile;
use crate::faults::FaultPlan;
use crate::metrics::Metrics;
use crate::request_log::RequestLog;
use crate::scheduler;
use crate::server::api::{api_error, auth, detokenize, metrics, models, served_requests, tokenize};
use crate::server::generate::{chat_completions, completions};
use crate::server::state::{ConnFd, Shared};
use crate::{SimConfig, SimError};

/// A running simulator.
pub struct RunningSim {
    pub addr: SocketAddr,
    profile: Profile,
    stop: Option<oneshot::Sender<()>>,
    server: Option<tokio::task::JoinHandle<()>>,
    scheduler: tokio::task::JoinHandle<()>,
}

impl RunningSim {
    /// The model id it serves (as `/v1/models` lists it).
    pub fn model_name(&self) -> &str {
        &self.profile.model_name
    }

    /// `http://ADDR/v1`.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// The deployment being simulated.
    pub fn profile(&self) -> &Profile {
        &self.profile
    }

    /// Stop accepting, give open streams a moment, then stop.
    pub async fn shutdown(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(mut server) = self.server.take() {
            if tokio::time::timeout(Duration::from_secs(2), &mut server)
                .await
                .is_err()
            {
                server.abort();
            }
        }
        self.scheduler.abort();
    }

    /// Run until the server stops (it only stops on [`RunningSim::shutdown`] or a fatal error).
    pub async fn wait(mut self) {
        if let Some(server) = self.server.take() {
            let _ = server.await;
        }
    }
}

impl Drop for RunningSim {
    fn drop(&mut self) {
        if let Some(server) = self.server.take() {
            server.abort();
        }
        self.scheduler.abort();
    }
}

fn bind(addr: SocketAddr) -> Result<TcpListener, SimError> {
    let err = |source: std::io::Error| {
        if source.kind() == std::io::ErrorKind::AddrInUse {
            SimError::PortInUse { addr }
        } else {
            SimError::Bind { addr, source }
        }
    };
    let socket = if addr.is_ipv4() {
        TcpSocket::new_v4()
    } else {
        TcpSocket::new_v6()
    }
    .map_err(err)?;
    socket.set_reuseaddr(true).map_err(err)?;
    socket.bind(addr).map_err(err)?;
    // A deep backlog: benchmarks open thousands of connections at once.
    socket.listen(4096).map_err(err)
}

/// Bind, spawn the server and its scheduler on the current runtime, and return at once.
pub async fn start(config: SimConfig) -> Result<RunningSim, SimError> {
    let profile = config.profile()?;
    let faults = FaultPlan::parse(config.faults.as_deref(), config.seed)?;
    let listener = bind(config.listen)?;
    let addr = listener.local_addr().map_err(|source| SimError::Bind {
        addr: config.listen,
        source,
    })?;
    let metrics = Arc::new(Mutex::new(Metrics::default()));
    let engine = crate::engine::Engine::new(profile.clone());
    let max_sequence_tokens = engine.max_sequence_tokens();
    let (cmds, scheduler) = scheduler::spawn(profile.clone(), metrics.clone(), config.time_scale);
    let shared = Arc::new(Shared {
        served_name: profile.model_name.clone(),
        profile: profile.clone(),
        api_key: config.api_key.filter(|k| !k.is_empty()),
        emit_timestamps: config.emit_timestamps,
        reasoning_tokens: config.reasoning_tokens,
        time_scale: config.time_scale,
        log: Arc::new(RequestLog::default()),
        faults,
        seed: config.seed,
        max_sequence_tokens,
        next_id: AtomicU64::new(0),
        arrivals: AtomicU64::new(0),
        metrics,
        cmds,
    });
    let app = router(shared);
    let (stop_tx, stop_rx) = oneshot::channel::<()>();
    let server = tokio::spawn(async move {
        let serve = axum::serve(
            listener,
            app.into_make_service_with_connect_info::<ConnFd>(),
        )
        .with_graceful_shutdown(async {
            let _ = stop_rx.await;
        });
        if let Err(e) = serve.await {
            tracing::error!("infermeter sim server stopped: {e}");
        }
    });
    Ok(RunningSim {
        addr,
        profile,
        stop: Some(stop_tx),
        server: Some(server),
        scheduler,
    })
}

/// Start, announce on stderr, serve until Ctrl-C or SIGTERM.
pub async fn run(config: SimConfig) -> Result<(), SimError> {
    let sim = start(config).await?;
    let p = sim.profile();
    eprintln!(
        "infermeter sim: serving {} on {}x {} at {}",
        p.model_name,
        p.gpus,
        p.gpu_name,
        sim.base_url()
    );
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .map_err(SimError::Signal)?;
    tokio::select! {
        r = tokio::signal::ctrl_c() => r.map_err(SimError::Signal)?,
        _ = term.recv() => {}
    }
    sim.shutdown().await;
    Ok(())
}

fn router(shared: Arc<Shared>) -> Router {
    let protected = Router::new()
        .route("/v1/models", get(models))
        .route("/v1/completions", post(completions))
        .route("/v1/chat/completions", post(chat_completions))
        .route("/tokenize", post(tokenize))
        .route("/detokenize", post(detokenize))
        .route("/infermeter/requests", get(served_requests))
        .route_layer(middleware::from_fn_with_state(shared.clone(), auth));
    Router::new()
        .route("/health", get(|| async { StatusCode::OK }))
        .route("/metrics", get(metrics))
        .route(
            "/version",
            get(|| async { axum::Json(json!({"version": env!("CARGO_PKG_VERSION")})) }),
        )
        .merge(protected)
        .fallback(|| async {
            api_error(
                StatusCode::NOT_FOUND,
                "Not Found: no such route".into(),
                None,
            )
        })
        .with_state(shared)
}
