//! A level's load in words: one wording for the page (findings, the timeline's level picker,
//! the measurements table), `infermeter summary` and the collector's progress line, as the
//! reference reports word it ("single user", "32 concurrent", "256 queue depth").

use super::format::format_number;
use crate::aggregate::Applied;
use crate::schema::{Level, LoadMode};

/// "single user", "32 concurrent" (peak); "1 user", "256 queue depth" (burst); "2 req/s"
/// (rate); "16 users"; "0.5 sessions/s" or "12 sessions active" (session arrivals);
/// "4× speed" (trace replay). An open-loop level without its rate says how many it had
/// in flight.
pub fn load(mode: LoadMode, applied: &Applied) -> String {
    let n = applied.concurrency;
    match mode {
        LoadMode::Peak if n == 1 => "single user".into(),
        LoadMode::Peak => format!("{n} concurrent"),
        LoadMode::Burst if n == 1 => "1 user".into(),
        LoadMode::Burst => format!("{n} queue depth"),
        LoadMode::Users if n == 1 => "1 user".into(),
        LoadMode::Users => format!("{n} users"),
        LoadMode::Rate => match applied.request_rate {
            Some(rate) => format!("{} req/s", format_number(rate)),
            None => format!("{n} in flight"),
        },
        LoadMode::Sessions => match applied.session_rate {
            Some(rate) => format!("{} sessions/s", format_number(rate)),
            None => format!("{n} sessions active"),
        },
        LoadMode::Trace => match applied.trace_speed {
            Some(speed) => format!("{}× speed", format_number(speed)),
            None => format!("{n} in flight"),
        },
    }
}

/// [`load`] of a measured level of a series in `mode`.
pub fn level(mode: LoadMode, level: &Level) -> String {
    load(mode, &Applied::of(level))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(concurrency: u32) -> Applied {
        Applied {
            concurrency,
            ..Applied::default()
        }
    }

    #[test]
    fn every_mode_says_what_its_load_counts() {
        let said = |mode, applied: Applied| load(mode, &applied);
        assert_eq!(said(LoadMode::Peak, at(1)), "single user");
        assert_eq!(said(LoadMode::Peak, at(32)), "32 concurrent");
        assert_eq!(said(LoadMode::Burst, at(1)), "1 user");
        assert_eq!(said(LoadMode::Burst, at(64)), "64 queue depth");
        assert_eq!(said(LoadMode::Users, at(1)), "1 user");
        assert_eq!(said(LoadMode::Users, at(16)), "16 users");
        let rate = Applied {
            request_rate: Some(2.5),
            ..at(7)
        };
        assert_eq!(said(LoadMode::Rate, rate), "2.5 req/s");
        assert_eq!(said(LoadMode::Rate, at(7)), "7 in flight");
        let sessions = Applied {
            session_rate: Some(0.5),
            ..at(12)
        };
        assert_eq!(said(LoadMode::Sessions, sessions), "0.5 sessions/s");
        assert_eq!(said(LoadMode::Sessions, at(12)), "12 sessions active");
        let trace = Applied {
            trace_speed: Some(4.0),
            ..at(9)
        };
        assert_eq!(said(LoadMode::Trace, trace), "4× speed");
        // Users and trace levels are never "concurrent" requests.
        assert_eq!(said(LoadMode::Trace, at(9)), "9 in flight");
    }
}
