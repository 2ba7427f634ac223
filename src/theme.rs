//! Light and dark themes and the colour-blind-safe series palette (Okabe–Ito), shared by the
//! page style and every chart so a series has the same colour everywhere.

/// Page and chart theme.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum Theme {
    #[default]
    Light,
    Dark,
}

impl Theme {
    pub fn key(self) -> &'static str {
        match self {
            Theme::Light => "light",
            Theme::Dark => "dark",
        }
    }

    pub fn parse(s: &str) -> Option<Theme> {
        match s {
            "light" => Some(Theme::Light),
            "dark" => Some(Theme::Dark),
            _ => None,
        }
    }

    pub fn toggled(self) -> Theme {
        match self {
            Theme::Light => Theme::Dark,
            Theme::Dark => Theme::Light,
        }
    }

    /// Colours for chart chrome (text, axes, grid lines) matching `style/main.css`.
    pub fn colors(self) -> ThemeColors {
        match self {
            Theme::Light => ThemeColors {
                background: "#ffffff",
                text: "#1d2330",
                muted: "#5b6475",
                grid_line: "#e3e6ec",
                axis_line: "#9aa3b2",
                tooltip_background: "#ffffff",
            },
            Theme::Dark => ThemeColors {
                background: "#171b24",
                text: "#e6e9ef",
                muted: "#a3acbd",
                grid_line: "#2c3342",
                axis_line: "#5b6475",
                tooltip_background: "#222836",
            },
        }
    }
}

/// Chart chrome colours of one theme, as CSS colour strings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ThemeColors {
    pub background: &'static str,
    pub text: &'static str,
    pub muted: &'static str,
    pub grid_line: &'static str,
    pub axis_line: &'static str,
    pub tooltip_background: &'static str,
}

/// Okabe–Ito, ordered so the first colours contrast most on the theme's background; yellow is
/// last on light backgrounds (too pale there) and black is replaced by grey on dark ones.
/// Vermillion, the threshold lines' colour, comes late: with four scenarios, the fourth line
/// was drawn in it beside a dashed threshold.
const OKABE_ITO_LIGHT: [&str; 8] = [
    "#0072B2", "#E69F00", "#009E73", "#CC79A7", "#000000", "#56B4E9", "#D55E00", "#F0E442",
];
const OKABE_ITO_DARK: [&str; 8] = [
    "#56B4E9", "#E69F00", "#009E73", "#F0E442", "#CC79A7", "#D55E00", "#0072B2", "#BBBBBB",
];

/// Series colours for `theme`; ECharts cycles through them (`color` option).
pub fn palette(theme: Theme) -> &'static [&'static str] {
    match theme {
        Theme::Light => &OKABE_ITO_LIGHT,
        Theme::Dark => &OKABE_ITO_DARK,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_palettes_hold_the_same_eight_hues_but_black() {
        let mut light: Vec<_> = palette(Theme::Light).to_vec();
        let mut dark: Vec<_> = palette(Theme::Dark).to_vec();
        light.retain(|c| *c != "#000000");
        dark.retain(|c| *c != "#BBBBBB");
        light.sort();
        dark.sort();
        assert_eq!(light, dark);
    }

    #[test]
    fn theme_keys_round_trip() {
        for t in [Theme::Light, Theme::Dark] {
            assert_eq!(Theme::parse(t.key()), Some(t));
            assert_eq!(t.toggled().toggled(), t);
        }
        assert_eq!(Theme::parse("neon"), None);
    }
}
