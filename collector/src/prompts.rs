//! What the requests say: prompt texts of exact token lengths and the tokenizers that count
//! them (`text`), one request body per scenario stamped with unique ids (`plan`), prompt files
//! (`source`) and the prompts a scenario draws from one or cuts to drawn lengths (`pool`,
//! `cut`), multi-turn conversations (`conversation`), replayed traces (`trace`) and agentic jobs
//! (`jobs`: trees of agents that fork and join), read from cc-traces (`cc_traces`).

pub mod cc_traces;
pub mod conversation;
pub mod cut;
pub mod filler;
pub mod jobs;
pub mod plan;
pub mod pool;
pub mod source;
pub mod text;
pub mod trace;

use infermeter_report::{AskedLengths, SessionTurn};

/// A request ready to send.
#[derive(Debug, Clone)]
pub struct Prepared {
    pub body: Vec<u8>,
    /// Prompt length counted on the client, used when the server reports no usage.
    pub input_tokens: Option<u32>,
    /// Its session and turn, for a conversation's turn (or a trace line with sessions).
    pub session: Option<SessionTurn>,
    /// What it asks, for a prompt of a file or of a drawn length (its record says so).
    pub asked: Option<AskedLengths>,
}

impl Prepared {
    /// A request of no session.
    pub fn single(body: Vec<u8>, input_tokens: Option<u32>) -> Prepared {
        Prepared {
            body,
            input_tokens,
            session: None,
            asked: None,
        }
    }
}
