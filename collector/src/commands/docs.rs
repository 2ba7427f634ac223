//! `infermeter completions SHELL` and `infermeter man`: shell completions and manual pages,
//! generated from the clap definitions the command line hands in (`commands.rs`'s `Opts`), so
//! they never drift from the options the binary really takes. (Their tests are in
//! `commands.rs`, beside those definitions.)

use std::io::Write;
use std::path::{Path, PathBuf};

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
pub fn write_completions(
    mut command: clap::Command,
    shell: clap_complete::Shell,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    // Generated into memory first: clap_complete panics when its writer fails (a closed pipe).
    let mut script = Vec::new();
    let name = command.get_name().to_string();
    clap_complete::generate(shell, &mut command, name, &mut script);
    out.write_all(&script)
}

/// Writes the manual page `infermeter(1)`, which lists the subcommands, to `out`.
pub fn write_man_page(command: clap::Command, out: &mut dyn Write) -> std::io::Result<()> {
    clap_mangen::Man::new(command).render(out)
}

/// Writes `infermeter.1` and one page per subcommand (`infermeter-run.1`, …) into `dir`.
pub fn write_man_pages(command: clap::Command, dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    clap_mangen::generate_to(command, dir)
}
