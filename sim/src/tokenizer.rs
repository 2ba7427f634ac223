//! A small deterministic tokenizer and the chat template, shared by the engine's token counts,
//! `/tokenize` and `/detokenize`, so all three always agree.
//!
//! Rules (one token per "word-ish unit"):
//! - the special strings `<|im_start|>`, `<|im_end|>`, `<|endoftext|>` are one token each;
//! - every `\n` is one token;
//! - a run of letters/digits (Unicode alphanumeric), with at most one leading space attached, is one
//!   token per 16 characters;
//! - any other non-space character, with at most one leading space attached, is one token;
//! - other whitespace runs (spaces not followed by text, tabs) are one token.
//!
//! Ids: specials use Qwen's ids (151643..151645); every other token's id is a 64-bit FNV-1a hash of its
//! text folded into `[1000, 151000)`. Ids seen by this process (tokenised or generated) are remembered,
//! so `/detokenize` inverts them; unknown ids detokenise to `<unk>`.
//!
//! Generated text: each output token is a word with a leading space (`" alpha"`), which is exactly
//! one token of this tokenizer and about one token for real BPE tokenizers.

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};

pub const ENDOFTEXT: u32 = 151_643;
pub const IM_START: u32 = 151_644;
pub const IM_END: u32 = 151_645;
const SPECIALS: [(&str, u32); 3] = [
    ("<|endoftext|>", ENDOFTEXT),
    ("<|im_start|>", IM_START),
    ("<|im_end|>", IM_END),
];
const MAX_WORD_CHARS: usize = 16;
const MAX_REMEMBERED: usize = 1 << 20;

static REMEMBERED: LazyLock<Mutex<HashMap<u32, String>>> = LazyLock::new(|| {
    let mut m = HashMap::new();
    for (s, id) in SPECIALS {
        m.insert(id, s.to_string());
    }
    for w in WORDS {
        m.insert(hash_id(w), w.to_string());
    }
    Mutex::new(m)
});

/// Words the simulated model "generates" (each is one token: leading space + word).
pub const WORDS: &[&str] = &[
    " the",
    " model",
    " returns",
    " a",
    " value",
    " for",
    " each",
    " request",
    " and",
    " then",
    " checks",
    " whether",
    " it",
    " fits",
    " in",
    " memory",
    " of",
    " this",
    " system",
    " we",
    " can",
    " use",
    " data",
    " from",
    " previous",
    " steps",
    " to",
    " plan",
    " next",
    " batch",
    " token",
    " stream",
    " user",
    " answer",
    " question",
    " result",
    " function",
    " code",
    " file",
    " line",
    " test",
    " case",
    " error",
    " message",
    " server",
    " client",
    " time",
    " cache",
    " layer",
    " weight",
    " matrix",
    " vector",
    " query",
    " key",
    " context",
    " window",
    " length",
    " output",
    " input",
    " prompt",
    " example",
    " simple",
    " fast",
    " small",
    " large",
    " good",
    " better",
    " best",
    " more",
    " less",
    " most",
    " very",
    " also",
    " only",
    " just",
    " still",
    " here",
    " there",
    " where",
    " when",
    " which",
    " what",
    " how",
    " why",
    " because",
    " so",
    " but",
    " or",
    " not",
    " all",
    " some",
    " any",
    " many",
    " few",
    " new",
    " old",
    " first",
    " last",
    " other",
    " same",
    " different",
    " important",
    " possible",
    " likely",
    " clear",
    " note",
    " that",
    " is",
    " are",
    " was",
    " be",
    " has",
    " have",
    " will",
    " would",
    " should",
    " could",
    " may",
    " might",
    " must",
    " run",
    " build",
    " read",
    " write",
    " open",
    " close",
    " start",
    " stop",
    " send",
    " receive",
    " compute",
    " measure",
    " report",
    " explain",
    " show",
    " make",
    " take",
    " give",
    " find",
    " keep",
    " call",
    " try",
    " need",
    " want",
    " know",
    " think",
    " see",
    " look",
    " work",
    " change",
    " move",
    " set",
    " get",
    " add",
    " remove",
    " update",
    " create",
    " delete",
    " list",
    " table",
    " chart",
    " number",
    " count",
    " total",
    " average",
    " rate",
    " speed",
    " latency",
    " throughput",
    " GPU",
    " CPU",
    " network",
    " disk",
    " café",
    " naïve",
    " über",
    " résumé",
];

/// The token id of a piece of text that the tokenizer treats as one token.
pub fn hash_id(piece: &str) -> u32 {
    if let Some((_, id)) = SPECIALS.iter().find(|(s, _)| *s == piece) {
        return *id;
    }
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in piece.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    1000 + (h % 150_000) as u32
}

/// Split text into token pieces (see module docs).
pub fn pieces(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut i = 0;
    let bytes = text.as_bytes();
    while i < text.len() {
        let rest = &text[i..];
        if let Some((s, _)) = SPECIALS.iter().find(|(s, _)| rest.starts_with(s)) {
            out.push(&rest[..s.len()]);
            i += s.len();
            continue;
        }
        let c = rest.chars().next().expect("non-empty");
        if c == '\n' {
            out.push("\n");
            i += 1;
            continue;
        }
        // A single space directly before a non-space character belongs to that token.
        let (start, body) = if c == ' ' {
            match rest[1..].chars().next() {
                Some(n) if !n.is_whitespace() && !rest[1..].starts_with("<|") => (i, i + 1),
                _ => (i, i),
            }
        } else {
            (i, i)
        };
        let bc = text[body..].chars().next().expect("non-empty");
        if body > start || !bc.is_whitespace() {
            let mut end = body + bc.len_utf8();
            if bc.is_alphanumeric() {
                for (n, ch) in (1..).zip(text[end..].chars()) {
                    if !ch.is_alphanumeric() || n == MAX_WORD_CHARS {
                        break;
                    }
                    end += ch.len_utf8();
                }
            }
            out.push(&text[start..end]);
            i = end;
        } else {
            // Whitespace run (not newlines); leave a final space for the following token.
            let mut end = i;
            for ch in text[i..].chars() {
                if !ch.is_whitespace() || ch == '\n' {
                    break;
                }
                end += ch.len_utf8();
            }
            if end < text.len()
                && end - i > 1
                && bytes[end - 1] == b' '
                && !text[end..].starts_with('\n')
                && !text[end..].starts_with("<|")
            {
                end -= 1;
            }
            out.push(&text[i..end]);
            i = end;
        }
    }
    out
}

/// Token ids of `text`; remembers them so `/detokenize` can invert them.
pub fn encode(text: &str) -> Vec<u32> {
    let ps = pieces(text);
    let ids: Vec<u32> = ps.iter().map(|p| hash_id(p)).collect();
    let mut map = REMEMBERED.lock().expect("tokenizer map");
    if map.len() < MAX_REMEMBERED {
        for (p, id) in ps.iter().zip(&ids) {
            map.entry(*id).or_insert_with(|| p.to_string());
        }
    }
    ids
}

/// Text of token ids; ids never seen by this process become `<unk>`.
pub fn decode(ids: &[u32]) -> String {
    let map = REMEMBERED.lock().expect("tokenizer map");
    ids.iter()
        .map(|id| map.get(id).map(String::as_str).unwrap_or("<unk>"))
        .collect()
}

/// One chat message after flattening content parts.
#[derive(Debug, Clone)]
pub struct ChatMessage {
    pub role: String,
    pub content: String,
}

/// ChatML: `<|im_start|>{role}\n{content}<|im_end|>\n` per message, then
/// `<|im_start|>assistant\n` when `add_generation_prompt`.
pub fn apply_chat_template(messages: &[ChatMessage], add_generation_prompt: bool) -> String {
    let mut s = String::new();
    for m in messages {
        s.push_str("<|im_start|>");
        s.push_str(&m.role);
        s.push('\n');
        s.push_str(&m.content);
        s.push_str("<|im_end|>\n");
    }
    if add_generation_prompt {
        s.push_str("<|im_start|>assistant\n");
    }
    s
}

/// The text of output token `index` of a request whose generation seed is `seed`.
pub fn output_token(seed: u64, index: u32) -> &'static str {
    let h = crate::rng::mix(seed ^ u64::from(index).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    // Keep the multi-byte words rare (the last four); they exist so real clients see UTF-8.
    let plain = WORDS.len() - 4;
    if h.is_multiple_of(64) {
        WORDS[plain + (h / 64 % 4) as usize]
    } else {
        WORDS[(h / 64 % plain as u64) as usize]
    }
}

/// A generated word containing a multi-byte UTF-8 character (for the `utf8split` fault).
pub const MULTIBYTE_WORD: &str = " café";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_words_punctuation_and_specials() {
        assert_eq!(pieces("Hello, world!"), vec!["Hello", ",", " world", "!"]);
        assert_eq!(
            pieces("<|im_start|>user\nhi  there<|im_end|>\n"),
            vec![
                "<|im_start|>",
                "user",
                "\n",
                "hi",
                " ",
                " there",
                "<|im_end|>",
                "\n"
            ]
        );
        assert_eq!(pieces(" café au lait"), vec![" café", " au", " lait"]);
        assert_eq!(pieces("abcdefghijklmnopqrstu").len(), 2);
        assert_eq!(pieces("a\t b "), vec!["a", "\t", " b", " "]);
    }

    #[test]
    fn every_generated_word_is_one_token_and_round_trips() {
        let text: String = (0..500).map(|i| output_token(7, i)).collect();
        let ids = encode(&text);
        assert_eq!(ids.len(), 500);
        assert_eq!(decode(&ids), text);
        for w in WORDS {
            assert_eq!(pieces(w).len(), 1, "{w:?}");
        }
    }

    #[test]
    fn chat_template_counts_tokens() {
        let m = [ChatMessage {
            role: "user".into(),
            content: "Hello there".into(),
        }];
        let t = apply_chat_template(&m, true);
        // im_start user \n Hello " there" im_end \n im_start assistant \n
        assert_eq!(encode(&t).len(), 10);
    }
}
