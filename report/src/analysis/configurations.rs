//! Labels for the configurations of a sweep shown together (`infermeter sweep`): each report is
//! named by the parameters it does not share with the others, `mns=128 tp=2`, as the sweep's
//! command line wrote them, so a legend, a ranking row and `infermeter summary` name the setting
//! that wins rather than the GPU every configuration ran on.

use crate::schema::{Parameters, Report};

/// Each report's differing parameters, when every report is a sweep's configuration and those
/// tell them all apart; `None` otherwise (reports of no sweep, one report, or configurations
/// that only differ in something else, e.g. two sweeps' alike settings on two GPUs).
pub fn configuration_labels(reports: &[Report]) -> Option<Vec<String>> {
    if reports.len() < 2 {
        return None;
    }
    let all: Vec<&Parameters> = reports
        .iter()
        .map(|r| r.metadata.configuration.as_ref().map(|c| &c.parameters))
        .collect::<Option<_>>()?;
    // Every parameter name, in the order the first configurations declare them.
    let mut names: Vec<&str> = Vec::new();
    for (name, _) in all.iter().flat_map(|p| p.iter()) {
        if !names.contains(&name) {
            names.push(name);
        }
    }
    let differs = |name: &str| all.iter().any(|p| p.get(name) != all[0].get(name));
    let differing: Vec<&str> = names.into_iter().filter(|n| differs(n)).collect();
    let labels: Vec<String> = all
        .iter()
        .map(|p| {
            let named = differing
                .iter()
                .filter_map(|n| Some(format!("{n}={}", p.get(n)?)));
            named.collect::<Vec<_>>().join(" ")
        })
        .collect();
    let unique = labels
        .iter()
        .enumerate()
        .all(|(i, l)| !l.is_empty() && !labels[..i].contains(l));
    unique.then_some(labels)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::testing;
    use crate::schema::Configuration;

    fn configuration(pairs: &[(&str, &str)]) -> Report {
        let mut r = testing::report(&["chat"], Vec::new());
        r.metadata.configuration = Some(Configuration {
            sweep: Some("s".into()),
            parameters: pairs.iter().copied().collect(),
        });
        r
    }

    #[test]
    fn configurations_are_named_by_the_parameters_that_differ_in_their_order() {
        let reports = [
            configuration(&[("tp", "1"), ("mns", "64"), ("model", "m")]),
            configuration(&[("tp", "1"), ("mns", "128"), ("model", "m")]),
            configuration(&[("tp", "2"), ("mns", "64"), ("model", "m")]),
        ];
        assert_eq!(
            configuration_labels(&reports).unwrap(),
            ["tp=1 mns=64", "tp=1 mns=128", "tp=2 mns=64"]
        );
        assert_eq!(
            configuration_labels(&reports[..2]).unwrap(),
            ["mns=64", "mns=128"]
        );
    }

    #[test]
    fn otherwise_no_labels() {
        let a = configuration(&[("mns", "64")]);
        assert_eq!(configuration_labels(std::slice::from_ref(&a)), None);
        // The same settings twice (two sweeps' alike configurations) say nothing apart.
        assert_eq!(configuration_labels(&[a.clone(), a.clone()]), None);
        // A report of no sweep among them.
        let plain = testing::report(&["chat"], Vec::new());
        assert_eq!(configuration_labels(&[a, plain]), None);
    }
}
