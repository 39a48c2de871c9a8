//! The check of a run's targets before anything starts: a target nothing listens at is
//! refused at once, naming it. Also how a target's text is resolved, for the agents' links.

use super::policy::TARGET_CHECK;
use crate::error::Error;
use crate::load::resolve;
use crate::scenario::{AgentSpec, Scenario};

/// Refuses a run whose target nothing listens at, before anything starts: otherwise the
/// session calibrates the latency budget first and the agents' workers fail one by one,
/// each with its own message. Checked with a TCP connection from this host, for the targets
/// of local agents over TCP: UDP has no connection to refuse, and remote agents reach
/// their targets over their own networks. A bad input (exit 2), naming the address.
pub fn check_targets(scenario: &Scenario) -> Result<(), Error> {
    if scenario.transport != vernier_agent::sys::Transport::Tcp {
        return Ok(());
    }
    let mut checked: Vec<&str> = Vec::new();
    for (i, agent) in scenario.agents.iter().enumerate() {
        let target = scenario.targets[i % scenario.targets.len()].as_str();
        if !matches!(agent, AgentSpec::Local { .. }) || checked.contains(&target) {
            continue;
        }
        checked.push(target);
        let addr = resolve(target).map_err(|e| Error::Usage(e.to_string()))?;
        if let Err(e) = std::net::TcpStream::connect_timeout(&addr, TARGET_CHECK) {
            let what = match e.kind() {
                std::io::ErrorKind::ConnectionRefused => {
                    "nothing is listening there (connection refused)".to_owned()
                }
                std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock => format!(
                    "nothing accepted a connection within {} s",
                    TARGET_CHECK.as_secs_f64()
                ),
                _ => format!("cannot connect: {e}"),
            };
            let resolved = match addr.to_string() == target {
                true => String::new(),
                false => format!(" ({addr})"),
            };
            return Err(Error::Usage(format!(
                "target {target}{resolved}: {what}; start the server, or check the address"
            )));
        }
    }
    Ok(())
}
