//! What a request sends as its prompt: a completion's text or a chat's messages. The prompts
//! layer builds them; the driver sends them.

use serde::Serialize;

/// One chat message, as sent in `messages`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ChatMessage {
    pub role: String,
    pub content: String,
}

impl ChatMessage {
    pub fn user(content: impl Into<String>) -> ChatMessage {
        ChatMessage::with_role("user", content)
    }

    pub fn with_role(role: &str, content: impl Into<String>) -> ChatMessage {
        ChatMessage {
            role: role.into(),
            content: content.into(),
        }
    }
}

/// What to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PromptBody {
    /// `/v1/completions` `prompt`.
    Text(String),
    /// `/v1/chat/completions` `messages`.
    Messages(Vec<ChatMessage>),
}

/// A chat's message texts one after another, as a completion prompt sends them.
pub fn joined(messages: &[ChatMessage]) -> String {
    let texts: Vec<&str> = messages.iter().map(|m| m.content.as_str()).collect();
    texts.join("\n\n")
}
