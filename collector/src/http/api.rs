//! What a measured request is sent to and over: the OpenAI API it speaks, and whether its
//! connection is reused. Each names its own values (`ALL`, `label`), from which the command
//! line's choices are made.

/// The API of the measured requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Api {
    /// `/v1/chat/completions` (the chat template counts toward input tokens).
    Chat,
    /// `/v1/completions` (raw prompt).
    Completions,
}

impl Api {
    pub const ALL: [Api; 2] = [Api::Chat, Api::Completions];

    pub fn label(self) -> &'static str {
        match self {
            Api::Chat => "chat",
            Api::Completions => "completions",
        }
    }

    /// What the choice means, for `--help`.
    pub fn help(self) -> Option<&'static str> {
        Some(match self {
            Api::Chat => "/v1/chat/completions (the chat template counts toward input tokens)",
            Api::Completions => "/v1/completions (raw prompt)",
        })
    }

    /// The endpoint's path under the API base.
    pub fn path(self) -> &'static str {
        match self {
            Api::Chat => "chat/completions",
            Api::Completions => "completions",
        }
    }
}

/// How the measured requests reuse connections (AIPerf's `--connection-reuse-strategy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConnectionReuse {
    /// Keep connections alive and reuse them across requests, as most clients do.
    Pooled,
    /// A new connection for every request, closed after its response.
    Never,
}

impl ConnectionReuse {
    pub const ALL: [ConnectionReuse; 2] = [ConnectionReuse::Pooled, ConnectionReuse::Never];

    /// The name written to the report (`measurement.connection_reuse`).
    pub fn label(self) -> &'static str {
        match self {
            ConnectionReuse::Pooled => "pooled",
            ConnectionReuse::Never => "never",
        }
    }

    /// What the choice means, for `--help`.
    pub fn help(self) -> Option<&'static str> {
        Some(match self {
            ConnectionReuse::Pooled => {
                "Keep connections alive and reuse them across requests, as most clients do"
            }
            ConnectionReuse::Never => {
                "A new connection for every request, closed after its response"
            }
        })
    }
}
