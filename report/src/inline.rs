//! Reports inlined in one HTML file by `infermeter export`, and how the viewer finds them: the
//! N-th report (from 1) is the text of `<script type="application/json" id="infermeter-report-N">`,
//! and the viewer names it `inline:N` where it would name a report's URL (in the address too, so
//! a chart's embed link opens in the same file).

const ELEMENT_ID_PREFIX: &str = "infermeter-report-";
const URL_PREFIX: &str = "inline:";

/// The id of the element holding the `position`-th report (from 1).
pub fn element_id(position: usize) -> String {
    format!("{ELEMENT_ID_PREFIX}{position}")
}

/// What the viewer calls the `position`-th inlined report (from 1).
pub fn url(position: usize) -> String {
    format!("{URL_PREFIX}{position}")
}

/// The element id an `inline:N` URL stands for; `None` for any other URL.
pub fn element_id_of(url: &str) -> Option<String> {
    let position: usize = url.strip_prefix(URL_PREFIX)?.parse().ok()?;
    (position >= 1).then(|| element_id(position))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_urls_name_their_elements_and_nothing_else() {
        assert_eq!(url(2), "inline:2");
        assert_eq!(element_id_of(&url(2)), Some(element_id(2)));
        assert_eq!(element_id(2), "infermeter-report-2");
        for other in [
            "data/reports/a.json",
            "inline:",
            "inline:0",
            "inline:x",
            "inline:-1",
        ] {
            assert_eq!(element_id_of(other), None, "{other}");
        }
    }
}
