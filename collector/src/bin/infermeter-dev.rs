//! `infermeter-dev`: the developers' self-benchmarks and calibration (the library's `dev/`).

fn main() -> std::process::ExitCode {
    infermeter::infermeter_dev()
}
