//! Reports as indented JSON that stays readable with per-request columns in it: objects and
//! arrays of objects one entry per line as `serde_json`'s pretty printer writes them, but an
//! array of numbers on one line. Pretty-printed, a level's ten thousand request times would take
//! ten thousand lines and three times the bytes.

use std::io::{self, Write};

use serde::Serialize;
use serde_json::ser::Formatter;

/// `value` as indented JSON (two spaces), arrays of numbers on one line.
pub fn to_pretty_json<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<Vec<u8>> {
    let mut out = Vec::with_capacity(128 * 1024);
    let mut serializer = serde_json::Serializer::with_formatter(&mut out, Indented::default());
    value.serialize(&mut serializer)?;
    Ok(out)
}

/// How an open array writes its elements, known at its first element.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ArrayLayout {
    /// No element yet.
    Undecided,
    /// Numbers: `[1,2,3]`.
    Inline,
    /// Anything else: one element per line.
    Lines,
}

/// A pretty printer that decides an array's layout at its first element. The separator before
/// an element waits until the element starts, since only then is its kind known.
#[derive(Debug, Default)]
struct Indented {
    depth: usize,
    arrays: Vec<ArrayLayout>,
    /// An array element's separator not written yet: whether it is the array's first.
    pending: Option<bool>,
    /// Whether the innermost open object or array has an entry (its closing bracket then goes
    /// on a line of its own).
    has_value: bool,
}

impl Indented {
    fn newline<W: ?Sized + Write>(&self, w: &mut W) -> io::Result<()> {
        w.write_all(b"\n")?;
        for _ in 0..self.depth {
            w.write_all(b"  ")?;
        }
        Ok(())
    }

    /// Called as a value starts: writes a waiting array separator in the array's layout.
    fn value_starts<W: ?Sized + Write>(&mut self, w: &mut W, number: bool) -> io::Result<()> {
        let Some(first) = self.pending.take() else {
            return Ok(());
        };
        let layout = self
            .arrays
            .last_mut()
            .expect("an element is inside an array");
        if *layout == ArrayLayout::Undecided {
            *layout = if number {
                ArrayLayout::Inline
            } else {
                ArrayLayout::Lines
            };
        }
        if !first {
            w.write_all(b",")?;
        }
        if *layout == ArrayLayout::Lines {
            self.newline(w)?;
        }
        Ok(())
    }
}

/// The scalar writers: each starts a value (a number or not), then writes as the compact
/// formatter does.
macro_rules! numbers {
    ($($name:ident: $ty:ty),*) => {$(
        fn $name<W: ?Sized + Write>(&mut self, w: &mut W, value: $ty) -> io::Result<()> {
            self.value_starts(w, true)?;
            serde_json::ser::CompactFormatter.$name(w, value)
        }
    )*};
}

impl Formatter for Indented {
    numbers!(
        write_i8: i8, write_i16: i16, write_i32: i32, write_i64: i64, write_i128: i128,
        write_u8: u8, write_u16: u16, write_u32: u32, write_u64: u64, write_u128: u128,
        write_f32: f32, write_f64: f64
    );

    fn write_number_str<W: ?Sized + Write>(&mut self, w: &mut W, value: &str) -> io::Result<()> {
        self.value_starts(w, true)?;
        w.write_all(value.as_bytes())
    }

    fn write_null<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.value_starts(w, false)?;
        w.write_all(b"null")
    }

    fn write_bool<W: ?Sized + Write>(&mut self, w: &mut W, value: bool) -> io::Result<()> {
        self.value_starts(w, false)?;
        w.write_all(if value { b"true" } else { b"false" })
    }

    fn begin_string<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.value_starts(w, false)?;
        w.write_all(b"\"")
    }

    fn write_raw_fragment<W: ?Sized + Write>(&mut self, w: &mut W, raw: &str) -> io::Result<()> {
        self.value_starts(w, false)?;
        w.write_all(raw.as_bytes())
    }

    fn begin_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.value_starts(w, false)?;
        self.depth += 1;
        self.arrays.push(ArrayLayout::Undecided);
        self.has_value = false;
        w.write_all(b"[")
    }

    fn begin_array_value<W: ?Sized + Write>(&mut self, _: &mut W, first: bool) -> io::Result<()> {
        self.pending = Some(first);
        Ok(())
    }

    fn end_array_value<W: ?Sized + Write>(&mut self, _: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }

    fn end_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.depth -= 1;
        if self.arrays.pop() == Some(ArrayLayout::Lines) {
            self.newline(w)?;
        }
        self.has_value = true;
        w.write_all(b"]")
    }

    fn begin_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.value_starts(w, false)?;
        self.depth += 1;
        self.has_value = false;
        w.write_all(b"{")
    }

    fn begin_object_key<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        if !first {
            w.write_all(b",")?;
        }
        self.newline(w)
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(b": ")
    }

    fn end_object_value<W: ?Sized + Write>(&mut self, _: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }

    fn end_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.depth -= 1;
        if self.has_value {
            self.newline(w)?;
        }
        self.has_value = true;
        w.write_all(b"}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn numbers_inline_everything_else_indented() {
        let value = json!({
            "a": [1, 2.5, -3],
            "b": {"c": "x", "d": [], "e": {}},
            "f": [{"g": [4]}, "h", null],
            "i": true
        });
        let text = String::from_utf8(to_pretty_json(&value).unwrap()).unwrap();
        assert_eq!(
            text,
            "{\n  \"a\": [1,2.5,-3],\n  \"b\": {\n    \"c\": \"x\",\n    \"d\": [],\n    \"e\": {}\n  },\n  \
             \"f\": [\n    {\n      \"g\": [4]\n    },\n    \"h\",\n    null\n  ],\n  \"i\": true\n}"
        );
        let back: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back, value);
    }

    /// Every bundled report reads back the same through this printer.
    #[test]
    fn a_report_round_trips() {
        let text = include_str!("../../data/reports/llama-cpu-tiny-llama.json");
        let report = crate::load_report(text).unwrap();
        let written = to_pretty_json(&report).unwrap();
        let back = crate::load_report(std::str::from_utf8(&written).unwrap()).unwrap();
        assert_eq!(back, report);
        // Without number arrays it is serde_json's own pretty printing.
        let value: serde_json::Value = serde_json::from_str(text).unwrap();
        assert_eq!(
            to_pretty_json(&value).unwrap(),
            serde_json::to_vec_pretty(&value).unwrap()
        );
    }
}
