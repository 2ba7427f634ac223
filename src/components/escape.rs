//! HTML escaping for any string from a report that ends up inside HTML markup the page does not
//! build through Leptos: ECharts tooltip/label formatter templates and rich text. Leptos views
//! already escape text nodes and attributes, so use this only for strings handed to ECharts
//! templates. Plain series, axis and legend names are drawn on canvas or escaped by ECharts'
//! default tooltip and must NOT be escaped twice.

/// Replaces the five HTML-significant characters with entities.
pub fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Escapes text for an ECharts formatter template, where `{a}`, `{b}`, `{c}` and `{@dim}` are
/// placeholders: escapes HTML and turns braces into entities so report text cannot inject one.
pub fn escape_template(text: &str) -> String {
    escape_html(text)
        .replace('{', "&#123;")
        .replace('}', "&#125;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_becomes_inert_text() {
        assert_eq!(
            escape_html("<img src=x onerror=alert(1)> & 'q' \"d\""),
            "&lt;img src=x onerror=alert(1)&gt; &amp; &#39;q&#39; &quot;d&quot;"
        );
        assert_eq!(escape_html("plain ü"), "plain ü");
    }

    #[test]
    fn template_placeholders_are_neutralised() {
        assert_eq!(escape_template("{b}<"), "&#123;b&#125;&lt;");
    }
}
