//! Multi-turn sessions: what a user sends, turn after turn. A conversation starts with the
//! system prompt every user shares and the user's first message; each later turn adds the
//! answer exactly as it streamed (the engine's prefix cache can only match what it computed)
//! and a new message. Message texts are built once per scenario, token-exact with the run's
//! tokenizer, and stamped with ids of constant token count, as single prompts are.
//!
//! Caching defeated: the conversation's first message carries an id unique to each request at
//! its very start, so no request shares a prefix with any other; everything else is the same.

use infermeter_report::{CacheUse, Scenario, SessionShape, SessionTurn, ThinkTime};

use crate::http::body::ChatMessage;
use crate::http::driver::Driver;
use crate::prompts::plan::{ContentTemplate, PromptPlan, RequestIds};
use crate::prompts::text::TokenizerError;
use crate::prompts::Prepared;
use crate::suite::Suite;

/// Why a session scenario's messages cannot be built.
#[derive(Debug, thiserror::Error)]
#[error("cannot build the messages of session scenario \"{scenario}\"")]
pub struct SessionError {
    scenario: String,
    source: TokenizerError,
}

/// Most sessions a level can number (five digits of the id).
const MAX_SESSIONS: u64 = 100_000;

/// The messages of every session scenario of a suite, by scenario index.
pub struct SessionPlan {
    ids: RequestIds,
    scenarios: Vec<Option<SessionTexts>>,
}

/// One scenario's message texts.
struct SessionTexts {
    shape: SessionShape,
    output_tokens: u32,
    system: Option<ContentTemplate>,
    first: ContentTemplate,
    later: ContentTemplate,
}

impl SessionPlan {
    /// Builds the texts of every `[[session]]` scenario of `suite` with the run's prompts.
    pub async fn new(prompts: &PromptPlan, suite: &Suite) -> Result<Self, SessionError> {
        let mut scenarios = Vec::with_capacity(suite.scenarios.len());
        for s in &suite.scenarios {
            scenarios.push(match &s.session {
                Some(shape) => Some(SessionTexts::build(prompts, s, shape).await.map_err(
                    |source| SessionError {
                        scenario: s.id.clone(),
                        source,
                    },
                )?),
                None => None,
            });
        }
        Ok(SessionPlan {
            ids: prompts.ids(),
            scenarios,
        })
    }

    /// A new conversation of scenario `scenario`: session `session` of the level run numbered
    /// `serial` in this process (so no two levels or trials share a user's messages).
    pub fn start(
        &self,
        scenario: usize,
        serial: u64,
        session: u64,
        cache: CacheUse,
    ) -> Conversation<'_> {
        let texts = self.scenarios[scenario]
            .as_ref()
            .expect("a session level's scenario has a session");
        Conversation {
            plan: self,
            texts,
            scenario,
            serial,
            session: session % MAX_SESSIONS,
            cache,
            turns: Vec::new(),
            sent: 0,
            answer_tokens: 0,
        }
    }

    /// The think-time distribution of scenario `scenario`.
    pub fn think_time(&self, scenario: usize) -> ThinkTime {
        self.scenarios[scenario]
            .as_ref()
            .map_or(ThinkTime::Fixed { seconds: 0.0 }, |t| t.shape.think_time)
    }
}

impl SessionTexts {
    async fn build(
        prompts: &PromptPlan,
        scenario: &Scenario,
        shape: &SessionShape,
    ) -> Result<SessionTexts, TokenizerError> {
        let system = match shape.system_prompt_tokens {
            0 => None,
            n => Some(prompts.content_template(n).await?),
        };
        Ok(SessionTexts {
            shape: shape.clone(),
            output_tokens: scenario.output_tokens,
            system,
            first: prompts.content_template(shape.first_turn_tokens).await?,
            later: prompts.content_template(shape.turn_tokens).await?,
        })
    }
}

/// One session's conversation as it goes.
pub struct Conversation<'a> {
    plan: &'a SessionPlan,
    texts: &'a SessionTexts,
    scenario: usize,
    serial: u64,
    session: u64,
    cache: CacheUse,
    /// The answers and the user's later messages so far (the first message opens each request).
    turns: Vec<ChatMessage>,
    /// Requests sent.
    sent: u32,
    /// Output tokens of the answers so far (for the client's estimate of the prompt).
    answer_tokens: u32,
}

impl Conversation<'_> {
    /// The turn the next request is (1-based).
    pub fn next_turn_number(&self) -> u32 {
        self.sent + 1
    }

    /// True once every turn was sent.
    pub fn is_over(&self) -> bool {
        self.next_turn_number() > self.texts.shape.turns
    }

    /// The next turn's request: the whole conversation so far and the user's new message.
    pub fn next_request(&mut self, driver: &Driver) -> Prepared {
        let turn = self.next_turn_number();
        self.sent = turn;
        if turn > 1 {
            let id = self.id(turn);
            self.turns
                .push(ChatMessage::user(self.texts.later.stamp(&id)));
        }
        let mut messages = self.opening(turn);
        messages.extend(self.turns.iter().cloned());
        let body = driver.messages_body(
            &messages,
            self.texts.output_tokens,
            self.cache == CacheUse::Allowed,
        );
        let user_tokens = self.texts.first.tokens + (turn - 1) * self.texts.later.tokens;
        let system_tokens = self.texts.system.as_ref().map_or(0, |s| s.tokens);
        Prepared {
            body,
            input_tokens: Some(system_tokens + user_tokens + self.answer_tokens),
            session: Some(SessionTurn {
                id: self.session,
                turn,
            }),
            asked: None,
        }
    }

    /// The answer to the last turn, as it streamed: the next turn carries it.
    pub fn answered(&mut self, answer: String) {
        self.turns.push(ChatMessage::with_role("assistant", answer));
        self.answer_tokens += self.texts.output_tokens;
    }

    /// The system prompt and the first message for `turn`'s request. With caching defeated
    /// the first of them starts with an id unique to this request.
    fn opening(&self, turn: u32) -> Vec<ChatMessage> {
        let per_request = self.id(turn);
        let first_id = |template: &ContentTemplate, shared: String| match self.cache {
            CacheUse::Defeated => template.stamp(&per_request),
            CacheUse::Allowed => template.stamp(&shared),
        };
        let mut messages = Vec::with_capacity(2);
        let user_id = self.id(0);
        match &self.texts.system {
            Some(system) => {
                // Every user and level of the run shares the system prompt.
                let shared = self.plan.ids.id(self.scenario, 0);
                messages.push(ChatMessage::with_role("system", first_id(system, shared)));
                messages.push(ChatMessage::user(self.texts.first.stamp(&user_id)));
            }
            None => messages.push(ChatMessage::user(first_id(&self.texts.first, user_id))),
        }
        messages
    }

    /// The id of this session's `turn` (0: the session's own): unique to the level run, the
    /// session and the turn.
    fn id(&self, turn: u32) -> String {
        let rest = ((self.serial % 1000) * MAX_SESSIONS + self.session) * 100 + u64::from(turn);
        self.plan.ids.id(self.scenario, rest)
    }
}
