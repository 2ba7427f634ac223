//! Arrival-shape traces in CSV: when requests came and how long they were, with no block ids
//! and no sessions. `trace.rs` reads a file whose first line is not a JSON object with this
//! reader and replays its rows as lines that share nothing.
//!
//! The format is told by the header row (the file's first non-blank line), whatever the file's
//! extension; columns are found by name, in any order, and other columns are ignored:
//! - **Azure** LLM inference traces (Azure/AzurePublicDataset, `AzureLLMInferenceTrace_*.csv`,
//!   2023 and 2024): `TIMESTAMP` a date and time (`2023-11-16 18:17:03.9799600`: fractional
//!   seconds optional, up to nine digits, a `T` between date and time and a `+00:00` or `Z`
//!   offset accepted), `ContextTokens` (input), `GeneratedTokens` (output).
//! - **BurstGPT** (HPMLL/BurstGPT, `BurstGPT_*.csv`): `Timestamp` seconds from the trace's
//!   start, `Request tokens` (input), `Response tokens` (output); `Model`, `Total tokens`,
//!   `Log Type` (and the later files' `Session ID`, `Elapsed time`) are not used: the model
//!   measured stands in for the trace's ChatGPT or GPT-4, and a log type is no timing.
//!
//! A row with 0 input or 0 output tokens is left out and counted (`Trace::skipped`, said in the
//! scenario's description): BurstGPT writes a failed request as `Response tokens` 0 (its
//! `_without_fails` files are the same rows less those), and a request of no prompt or no
//! reply cannot be replayed as one. Everything else that is not a request is refused with its
//! row: a missing column, a cell that is not a number or a time, a negative count, a count
//! too large, a time that goes back, a row cut short. Rows are numbered as the file's lines
//! (the header is line 1).

/// Why a CSV trace cannot be replayed: the file holds no request, or a line (from 1) is wrong.
#[derive(Debug, Clone, PartialEq)]
pub enum CsvError {
    Empty,
    Line(usize, String),
}

/// One request of a CSV trace: its file line, when (ms after the first row) and its lengths.
#[derive(Debug, Clone, PartialEq)]
pub struct CsvRow {
    pub line: usize,
    pub at_ms: f64,
    pub input_tokens: u32,
    pub output_tokens: u32,
}

/// A CSV trace's requests in order, its format's name and the rows left out.
#[derive(Debug, Clone, PartialEq)]
pub struct CsvTrace {
    /// "azure" or "burstgpt": the report's `TraceSource::format`.
    pub format: &'static str,
    pub rows: Vec<CsvRow>,
    /// Rows of no input or no output tokens (failed requests), not replayed.
    pub skipped: u64,
}

/// A CSV format: its name, the columns of time, input and output, and how a time is read.
struct Format {
    name: &'static str,
    time: &'static str,
    input: &'static str,
    output: &'static str,
    /// Milliseconds of a time cell, on its own scale (only differences are used).
    ms: fn(&str) -> Result<f64, String>,
}

const FORMATS: [Format; 2] = [
    Format {
        name: "azure",
        time: "TIMESTAMP",
        input: "ContextTokens",
        output: "GeneratedTokens",
        ms: datetime_ms,
    },
    Format {
        name: "burstgpt",
        time: "Timestamp",
        input: "Request tokens",
        output: "Response tokens",
        ms: seconds_ms,
    },
];

/// Reads a CSV trace's text.
pub fn read(text: &str) -> Result<CsvTrace, CsvError> {
    let bad = CsvError::Line;
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty());
    let (h, header) = lines.next().ok_or(CsvError::Empty)?;
    let names = cells(header.trim_start_matches('\u{feff}'));
    let column = |name: &str| names.iter().position(|n| n == name);
    let Some((format, at)) = FORMATS
        .iter()
        .find_map(|f| Some((f, [column(f.time)?, column(f.input)?, column(f.output)?])))
    else {
        return Err(bad(h + 1, unknown_header(&names)));
    };
    // The line a file cut mid-row ends on.
    let cut = (!text.ends_with('\n')).then(|| text.lines().count());
    let (mut rows, mut skipped, mut prev) = (Vec::new(), 0u64, None::<f64>);
    for (n, line) in lines {
        let row = cells(line);
        if row.len() < names.len() && cut == Some(n + 1) {
            return Err(bad(n + 1, format!("has {} of the header's {} columns and the file ends there: the file looks cut short (download it again)", row.len(), names.len())));
        }
        let (ms, input, output) =
            request(format, at, &row, names.len()).map_err(|e| bad(n + 1, e))?;
        if let Some(p) = prev.filter(|p| ms < *p) {
            return Err(bad(
                n + 1,
                format!(
                    "{} comes {:.3} s before the previous row's; sort the trace by time",
                    format.time,
                    (p - ms) / 1000.0
                ),
            ));
        }
        prev = Some(ms);
        if input == 0 || output == 0 {
            skipped += 1;
            continue;
        }
        rows.push(CsvRow {
            line: n + 1,
            at_ms: ms,
            input_tokens: input,
            output_tokens: output,
        });
    }
    // Times count from the first replayed row: a skipped first row does not delay the rest.
    let zero = rows.first().map(|r| r.at_ms).ok_or(CsvError::Empty)?;
    for r in &mut rows {
        r.at_ms -= zero;
    }
    Ok(CsvTrace {
        format: format.name,
        rows,
        skipped,
    })
}

/// A row's time (ms on its format's scale) and input and output tokens, from the cells at
/// `at` (time, input, output); what is wrong otherwise.
fn request(
    format: &Format,
    at: [usize; 3],
    row: &[String],
    columns: usize,
) -> Result<(f64, u32, u32), String> {
    let cell = |i: usize, name: &str| {
        row.get(i).map(String::as_str).ok_or_else(|| {
            format!(
                "has no {name} column (the row has {} cells, the header {columns})",
                row.len()
            )
        })
    };
    let ms = (format.ms)(cell(at[0], format.time)?).map_err(|e| format!("{}: {e}", format.time))?;
    let input = count(cell(at[1], format.input)?).map_err(|e| format!("{}: {e}", format.input))?;
    let output =
        count(cell(at[2], format.output)?).map_err(|e| format!("{}: {e}", format.output))?;
    Ok((ms, input, output))
}

/// Why a header names no format we read, and which headers we do.
fn unknown_header(names: &[String]) -> String {
    let known: Vec<String> = FORMATS
        .iter()
        .map(|f| format!("{} ({}, {}, {})", f.name, f.time, f.input, f.output))
        .collect();
    format!(
        "unknown header \"{}\": a trace is JSONL (Mooncake or generic lines) or a CSV with the columns of {}",
        names.join(","),
        known.join(" or ")
    )
}

/// A CSV row's cells: commas split them, double quotes may enclose one (a quote inside written
/// twice), spaces around a cell are trimmed.
fn cells(line: &str) -> Vec<String> {
    let line = line.strip_suffix('\r').unwrap_or(line);
    let mut out = Vec::new();
    let (mut cell, mut quoted) = (String::new(), false);
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                cell.push('"');
                chars.next();
            }
            '"' => quoted = !quoted,
            ',' if !quoted => out.push(std::mem::take(&mut cell).trim().to_string()),
            c => cell.push(c),
        }
    }
    out.push(cell.trim().to_string());
    out
}

/// A token count: a whole number, not negative (a `.0` is accepted: some exports write one).
fn count(cell: &str) -> Result<u32, String> {
    let value: f64 = cell
        .parse()
        .map_err(|_| format!("\"{cell}\" is not a number of tokens"))?;
    if !value.is_finite() || value.fract() != 0.0 {
        return Err(format!("\"{cell}\" is not a whole number of tokens"));
    }
    if value < 0.0 {
        return Err(format!("{cell} tokens is negative"));
    }
    if value > f64::from(u32::MAX) {
        return Err(format!("{cell} tokens is more than a request can hold"));
    }
    Ok(value as u32)
}

/// BurstGPT's seconds, as milliseconds.
fn seconds_ms(cell: &str) -> Result<f64, String> {
    match cell.parse::<f64>() {
        Ok(s) if s.is_finite() => Ok(s * 1000.0),
        _ => Err(format!("\"{cell}\" is not a number of seconds")),
    }
}

/// Azure's date and time, as milliseconds since 1970 (UTC when an offset is given, else as
/// written: only differences matter).
fn datetime_ms(cell: &str) -> Result<f64, String> {
    let text = cell.replacen('T', " ", 1);
    let stamp = chrono::DateTime::parse_from_str(&text, "%Y-%m-%d %H:%M:%S%.f%#z")
        .map(|t| t.naive_utc())
        .or_else(|_| chrono::NaiveDateTime::parse_from_str(&text, "%Y-%m-%d %H:%M:%S%.f"))
        .or_else(|_| {
            let utc = text.strip_suffix('Z').ok_or(())?;
            chrono::NaiveDateTime::parse_from_str(utc, "%Y-%m-%d %H:%M:%S%.f").map_err(|_| ())
        })
        .map_err(|_| {
            format!("\"{cell}\" is not a date and time like 2023-11-16 18:17:03.9799600")
        })?;
    let utc = stamp.and_utc();
    Ok(utc.timestamp() as f64 * 1000.0 + f64::from(utc.timestamp_subsec_nanos()) / 1e6)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_text(text: &str) -> Result<CsvTrace, String> {
        read(text).map_err(|e| match e {
            CsvError::Empty => "holds no request".to_string(),
            CsvError::Line(line, message) => format!("line {line}: {message}"),
        })
    }

    #[test]
    fn azure_rows_keep_their_times_and_lengths() {
        let a = read_text(
            "TIMESTAMP,ContextTokens,GeneratedTokens\n\
             2023-11-16 18:17:03.9799600,4808,10\n\
             2023-11-16 18:17:04.0319600,3180,8\n\
             2023-11-16 18:17:05,110,27\n\
             2024-05-10T00:00:00.5+00:00,34,0\n",
        );
        let a = a.unwrap();
        assert_eq!(a.format, "azure");
        assert_eq!(a.skipped, 1);
        let at: Vec<f64> = a
            .rows
            .iter()
            .map(|r| (r.at_ms * 1000.0).round() / 1000.0)
            .collect();
        assert_eq!(at, vec![0.0, 52.0, 1020.04]);
        assert_eq!(
            (
                a.rows[1].line,
                a.rows[1].input_tokens,
                a.rows[1].output_tokens
            ),
            (3, 3180, 8)
        );
    }

    #[test]
    fn burstgpt_leaves_failed_rows_out_and_ignores_its_other_columns() {
        let a = read_text(
            "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\r\n\
             5,ChatGPT,472,18,490,Conversation log\r\n\
             45,GPT-4,1087,0,1087,API log\r\n\
             118.5,GPT-4,417,276,693,\"Conversation log\"\r\n",
        )
        .unwrap();
        assert_eq!(a.format, "burstgpt");
        assert_eq!(a.skipped, 1);
        assert_eq!(a.rows.len(), 2);
        assert_eq!(a.rows[1].at_ms, 113_500.0);
        assert_eq!(a.rows[1].line, 4);
        // Columns by name, in any order.
        let b = read_text("Response tokens,Timestamp,Request tokens\n3,0,9\n").unwrap();
        assert_eq!((b.rows[0].input_tokens, b.rows[0].output_tokens), (9, 3));
    }

    #[test]
    fn a_skipped_first_row_does_not_delay_the_rest() {
        let a = read_text("Timestamp,Request tokens,Response tokens\n1,10,0\n3,10,5\n").unwrap();
        assert_eq!(a.rows[0].at_ms, 0.0);
    }

    /// Each malformed case is refused naming the line and what is wrong (`Trace::read` adds
    /// the file).
    #[test]
    fn malformed_rows_are_refused_with_their_line() {
        let cases = [
            (
                "Time,In,Out\n1,2,3\n",
                "line 1",
                "unknown header \"Time,In,Out\"",
            ),
            (
                "TIMESTAMP,ContextTokens\n2023-11-16 18:17:03,5\n",
                "line 1",
                "unknown header",
            ),
            (
                "Timestamp,Request tokens,Response tokens\n1,ten,3\n",
                "line 2",
                "\"ten\" is not a number",
            ),
            (
                "Timestamp,Request tokens,Response tokens\n1,10,3\n2,-4,3\n",
                "line 3",
                "-4 tokens is negative",
            ),
            (
                "Timestamp,Request tokens,Response tokens\n1,1.5,3\n",
                "line 2",
                "not a whole number",
            ),
            (
                "Timestamp,Request tokens,Response tokens\nsoon,1,3\n",
                "line 2",
                "not a number of seconds",
            ),
            (
                "TIMESTAMP,ContextTokens,GeneratedTokens\n16/11/2023,4,3\n",
                "line 2",
                "not a date and time",
            ),
            (
                "Timestamp,Request tokens,Response tokens\n5,1,3\n4,1,3\n",
                "line 3",
                "sort the trace",
            ),
            (
                "Timestamp,Request tokens,Response tokens\n5,1,3\n6,1",
                "line 3",
                "cut short",
            ),
            (
                "Timestamp,Request tokens,Response tokens\n5,1\n6,1,3\n",
                "line 2",
                "has no Response tokens column",
            ),
            (
                "Timestamp,Request tokens,Response tokens\n5,0,3\n",
                "",
                "holds no request",
            ),
        ];
        for (text, at, what) in cases {
            let err = read_text(text).unwrap_err();
            assert!(err.contains(at) && err.contains(what), "{text:?}: {err}");
        }
    }
}
