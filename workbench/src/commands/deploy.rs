//! `vernier deploy HOST...`: deploys an agent on each host over SSH as a run would
//! (`agents: [{ssh: HOST}]`), checks that it answers, reports, and stops it. Hosts that
//! cannot be reached are named with the SSH error; the exit code is 1 if any failed.

use std::process::ExitCode;

use clap::Args;

use crate::deploy;
use crate::error::Error;

/// Options of `vernier deploy`.
#[derive(Debug, Args)]
pub struct DeployArgs {
    /// SSH destinations (`user@host`, or an alias of ~/.ssh/config or of the file
    /// VERNIER_SSH_CONFIG names).
    #[arg(required = true)]
    pub hosts: Vec<String>,
}

/// Runs `vernier deploy`.
pub fn run(args: DeployArgs) -> Result<ExitCode, Error> {
    let runtime = crate::session::runtime("vernier-deploy")?;
    let mut failures = 0;
    runtime.block_on(async {
        for host in &args.hosts {
            match deploy::deploy(host).await {
                Ok(d) => {
                    println!(
                        "{host}: agent answered through {} after {:.1}s (vernier {} ~/{})",
                        d.address,
                        d.took.as_secs_f64(),
                        if d.copied { "copied to" } else { "already at" },
                        d.binary
                    );
                    d.stop().await;
                }
                Err(e) => {
                    failures += 1;
                    eprintln!("vernier: {e}");
                }
            }
        }
    });
    Ok(if failures == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
