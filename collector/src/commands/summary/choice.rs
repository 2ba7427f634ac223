//! `infermeter summary`'s "Which configuration?": the prices assumed, each scenario's ranking
//! (the viewer's "Cheapest meeting the SLO" table, cell for cell) and its Pareto frontier.

use infermeter_report::analysis::configuration::{ConfigurationFindings, Ranked, APART, COLUMNS};

/// The lines that state `f`.
pub fn lines(f: &ConfigurationFindings) -> Vec<String> {
    let mut lines = vec![format!("Which configuration? {}", f.conditions_text())];
    if let Some(why) = &f.absent {
        lines.push(format!("  not available: {why}"));
        return lines;
    }
    for price in &f.prices {
        lines.push(format!("  Price {}", price.text()));
    }
    for ranking in &f.rankings {
        lines.push(String::new());
        lines.push(format!(
            "{} ({}): cheapest meeting the SLO",
            ranking.scenario_name,
            ranking.mode.label()
        ));
        let ranked = ranking.ranked();
        if !ranked.is_empty() {
            lines.extend(rows_table(&ranked));
        }
        let apart = ranking.apart();
        if !apart.is_empty() {
            lines.push(format!("  {APART}:"));
            lines.extend(rows_table(&apart));
        }
        for statement in &ranking.verdict {
            lines.push(format!("  {statement}"));
        }
        if let Some(frontier) = f
            .frontiers
            .iter()
            .find(|fr| fr.scenario == ranking.scenario)
        {
            lines.push(format!("  Frontier: {}", f.frontier_text(frontier)));
        }
    }
    lines
}

/// `rows` under the column headings, as a table.
fn rows_table(rows: &[&Ranked]) -> Vec<String> {
    let rows: Vec<Vec<String>> = std::iter::once(COLUMNS.map(String::from).to_vec())
        .chain(rows.iter().map(|r| r.cells().to_vec()))
        .collect();
    table(&rows)
}

/// `rows` as columns two spaces apart, each as wide as its widest cell (counted in characters:
/// "≥" and "—" are one each), indented by two.
fn table(rows: &[Vec<String>]) -> Vec<String> {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|cell| cell.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    rows.iter()
        .map(|row| {
            let cells: Vec<String> = row
                .iter()
                .zip(&widths)
                .map(|(cell, &w)| format!("{cell}{}", " ".repeat(w - cell.chars().count())))
                .collect();
            format!("  {}", cells.join("  ").trim_end())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_align_by_characters() {
        let rows = vec![
            vec!["Rank".to_string(), "Users".to_string(), "x".to_string()],
            vec!["1".to_string(), "≥ 32".to_string(), "y".to_string()],
        ];
        assert_eq!(table(&rows), ["  Rank  Users  x", "  1     ≥ 32   y"]);
    }
}
