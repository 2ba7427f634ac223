//! Talking to the server: the connections and their kernel timestamps (`transport`, `arrival`),
//! the streaming HTTP/1.1 client (`client`), one streamed request (`driver`) and its events
//! (`sse`), where the API is and what serves it (`base_url`, `endpoint`, `adapters`), and its
//! `/metrics` (`scrape`).

pub mod adapters;
pub mod api;
pub mod api_key;
pub mod arrival;
pub mod base_url;
pub mod body;
pub mod client;
pub mod driver;
pub mod endpoint;
pub mod scrape;
pub mod server;
pub mod sse;
#[cfg(test)]
pub mod test_server;
pub mod transport;
