//! Unit tests' loopback servers: an axum app on a free port of 127.0.0.1.

/// Serves `app` until the test's runtime ends; returns its root URL, `http://ADDR`.
pub async fn serve(app: axum::Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let root = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    root
}
