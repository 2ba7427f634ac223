//! Prompts cut from running text to an exact token count: a text file's words (or the filler's,
//! for drawn lengths without a file), taken from a starting word on, as many as give the target
//! with the request's prefix, then topped up token by token. Counts grow almost linearly with
//! words, so the cut is found by interpolating between the nearest counts below and above the
//! target (a handful of counts per prompt, not a bisection's dozen: with a server's
//! `/tokenize`, each count is a request).

use crate::http::api::Api;
use crate::prompts::filler::filler_pieces;
use crate::prompts::text::{Counting, PromptBuilder, TokenizerError};

/// Counts tried per prompt before giving up on a target.
const MAX_COUNTS: usize = 48;

/// Running text in pieces (a word with the whitespace before it), read round: a cut past the
/// end goes on from the start.
#[derive(Debug, Clone, PartialEq)]
pub struct TextPieces {
    pieces: Vec<String>,
}

impl TextPieces {
    /// A text file's words, with its spacing and line breaks as written.
    pub fn of_text(text: &str) -> TextPieces {
        let mut pieces = Vec::new();
        let mut current = String::new();
        let mut in_word = false;
        for c in text.chars() {
            if c.is_whitespace() && in_word {
                pieces.push(std::mem::take(&mut current));
                in_word = false;
            }
            in_word |= !c.is_whitespace();
            current.push(c);
        }
        if in_word {
            pieces.push(current);
        }
        TextPieces { pieces }
    }

    /// `n` words of the generated filler prose, seeded.
    pub fn filler(seed: u64, n: usize) -> TextPieces {
        TextPieces {
            pieces: filler_pieces(seed, n.max(1)),
        }
    }

    pub fn len(&self) -> usize {
        self.pieces.len()
    }

    pub fn is_empty(&self) -> bool {
        self.pieces.is_empty()
    }

    /// `k` pieces from piece `start` on, round the end.
    fn text(&self, start: usize, k: usize) -> String {
        let n = self.pieces.len();
        (0..k)
            .map(|i| self.pieces[(start + i) % n].as_str())
            .collect()
    }
}

/// A prompt cut from the text: `prefix` and the pieces, their count under the API, and how
/// many pieces it took.
#[derive(Debug, Clone, PartialEq)]
pub struct Cut {
    pub text: String,
    pub tokens: u32,
    pub exact: bool,
    pub pieces: usize,
}

impl PromptBuilder {
    /// `prefix` and as many of `text`'s pieces from `start` as make `target` tokens sent
    /// through `api`, topped up to the token.
    pub async fn cut(
        &self,
        text: &TextPieces,
        start: usize,
        prefix: &str,
        target: u32,
        api: Api,
    ) -> Result<Cut, TokenizerError> {
        let counting = Counting::Sent(api);
        let measure = |k: usize| {
            let candidate = format!("{prefix}{}", text.text(start, k));
            async move { self.measure(&candidate, counting).await }
        };
        let (prefix_tokens, prefix_exact) = measure(0).await?;
        // The nearest counts at or below the target and above it: (pieces, tokens, exact).
        let mut below = (0, prefix_tokens, prefix_exact);
        let mut above: Option<(usize, u32)> = None;
        if prefix_tokens < target && !text.is_empty() {
            let mut k = ((target - prefix_tokens) as usize * 3 / 4).max(1);
            for _ in 0..MAX_COUNTS {
                let (n, exact) = measure(k).await?;
                if n <= target {
                    below = (k, n, exact);
                } else {
                    above = Some((k, n));
                }
                if n == target {
                    break;
                }
                k = match above {
                    Some((hi, _)) if hi - below.0 <= 1 => break,
                    // Between the two, where a straight line through them meets the target.
                    Some((hi, hi_n)) => {
                        let step = f64::from(target - below.1) * (hi - below.0) as f64
                            / f64::from(hi_n - below.1);
                        (below.0 + step.round() as usize).clamp(below.0 + 1, hi - 1)
                    }
                    // Beyond the last count, at the rate seen so far.
                    None => {
                        let rate = below.0 as f64 / f64::from((below.1 - prefix_tokens).max(1));
                        below.0 + (f64::from(target - below.1) * rate).ceil().max(1.0) as usize
                    }
                };
                if k > 8 * target as usize + 64 {
                    return Err(TokenizerError::Unreachable { target });
                }
            }
        }
        let (pieces, tokens, exact) = below;
        let (body, tokens, exact) = self
            .top_up(
                prefix,
                text.text(start, pieces),
                (tokens, exact),
                target,
                counting,
            )
            .await?;
        Ok(Cut {
            text: format!("{prefix}{body}"),
            tokens,
            exact: exact && tokens == target,
            pieces,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prompts::text::tests::train_tokenizer;
    use crate::prompts::text::{request_prefix, Tokenizer};

    #[test]
    fn text_keeps_its_spacing_and_reads_round() {
        let t = TextPieces::of_text("Call me  Ishmael.\nSome years ago");
        assert_eq!(t.len(), 6);
        assert_eq!(t.text(0, 3), "Call me  Ishmael.");
        assert_eq!(t.text(5, 2), " agoCall");
    }

    /// Cuts of a text are exact for every target, under both APIs, and count few times.
    #[tokio::test]
    async fn cuts_are_token_exact() {
        let dir = tempfile::tempdir().unwrap();
        train_tokenizer(dir.path());
        let builder = PromptBuilder::new(Tokenizer::from_path(dir.path()).unwrap(), 0);
        let text = TextPieces::filler(5, 4000);
        let prefix = request_prefix("0000000000000000");
        let mut start = 0;
        for target in [40, 41, 97, 500, 1333, 2048] {
            let cut = builder
                .cut(&text, start, &prefix, target, Api::Completions)
                .await
                .unwrap();
            assert!(cut.exact, "{target}");
            assert_eq!(cut.tokens, target);
            let counted = builder.tokenizer().count_text(&cut.text).await.unwrap();
            assert_eq!(counted, target);
            assert!(cut.text.starts_with(&prefix));
            start += cut.pieces;
        }
    }
}
