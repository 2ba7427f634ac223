//! `infermeter`: what users run (the library's `commands/`).

fn main() -> std::process::ExitCode {
    infermeter::infermeter()
}
