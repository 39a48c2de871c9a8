use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = vernier_workbench::Cli::parse();
    match vernier_workbench::run(cli) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("vernier: {err}");
            err.exit_code()
        }
    }
}
