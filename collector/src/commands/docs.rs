//! `infermeter completions SHELL` and `infermeter man`: shell completions and manual pages,
//! generated from the clap definitions in `cli.rs`, so they never drift from the options the
//! binary really takes.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::CommandFactory;

use crate::cli::Opts;

#[derive(Debug, Clone, clap::Args)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Clone, clap::Args)]
pub struct ManArgs {
    /// Write infermeter.1 and a page per subcommand (infermeter-run.1, …) into DIR instead.
    #[arg(long, value_name = "DIR")]
    pub out_dir: Option<PathBuf>,
}

/// Writes the completion script for `shell` to `out` (`infermeter completions bash > …`).
pub fn write_completions(shell: clap_complete::Shell, out: &mut dyn Write) -> std::io::Result<()> {
    // Generated into memory first: clap_complete panics when its writer fails (a closed pipe).
    let mut script = Vec::new();
    let mut command = Opts::command();
    let name = command.get_name().to_string();
    clap_complete::generate(shell, &mut command, name, &mut script);
    out.write_all(&script)
}

/// Writes the manual page `infermeter(1)`, which lists the subcommands, to `out`.
pub fn write_man_page(out: &mut dyn Write) -> std::io::Result<()> {
    clap_mangen::Man::new(Opts::command()).render(out)
}

/// Writes `infermeter.1` and one page per subcommand (`infermeter-run.1`, …) into `dir`.
pub fn write_man_pages(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    clap_mangen::generate_to(Opts::command(), dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every subcommand's name as the user types it (`bench-timing`, not `BenchTiming`), but
    /// the hidden ones that only other commands start (`bench-client-floor`).
    fn subcommands() -> Vec<String> {
        let names: Vec<String> = Opts::command()
            .get_subcommands()
            .filter(|c| !c.is_hide_set())
            .map(|c| c.get_name().to_string())
            .collect();
        assert!(names.len() >= 9, "{names:?}");
        names
    }

    #[test]
    fn completions_for_each_shell_name_every_subcommand() {
        for shell in [
            clap_complete::Shell::Bash,
            clap_complete::Shell::Zsh,
            clap_complete::Shell::Fish,
        ] {
            let mut script = Vec::new();
            write_completions(shell, &mut script).unwrap();
            let script = String::from_utf8(script).unwrap();
            for name in subcommands() {
                assert!(script.contains(&name), "{shell}: no {name}");
            }
            // An option of a subcommand is completed too.
            assert!(script.contains("base-url"), "{shell}: no --base-url");
        }
    }

    #[test]
    fn man_page_lists_every_subcommand() {
        let mut page = Vec::new();
        write_man_page(&mut page).unwrap();
        // roff writes a hyphen as `\-`.
        let page = String::from_utf8(page).unwrap().replace("\\-", "-");
        assert!(page.contains(".TH infermeter 1"), "title line");
        for name in subcommands() {
            assert!(page.contains(&name), "no {name}");
        }
    }

    #[test]
    fn man_pages_go_one_per_subcommand_into_a_folder() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("man1");
        write_man_pages(&out).unwrap();
        for name in subcommands() {
            let page = std::fs::read_to_string(out.join(format!("infermeter-{name}.1")))
                .unwrap_or_else(|e| panic!("infermeter-{name}.1: {e}"));
            assert!(page.contains(".SH NAME"), "{name}");
        }
        let main = std::fs::read_to_string(out.join("infermeter.1")).unwrap();
        assert!(
            main.contains("bench\\-timing"),
            "the main page lists the subcommands"
        );
    }
}
