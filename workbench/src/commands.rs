//! One module per subcommand; each takes its parsed arguments and returns an exit code.
//! The command line that chooses among them, and the dispatch, live above them, in cli.rs.

pub(crate) mod agent;
pub(crate) mod analyze;
pub(crate) mod args;
pub(crate) mod bench_agent;
pub(crate) mod calibrate;
pub(crate) mod compare;
pub(crate) mod completions;
pub(crate) mod demo;
pub(crate) mod deploy;
pub(crate) mod man;
pub(crate) mod model;
pub(crate) mod replay;
pub(crate) mod report;
pub(crate) mod run;
pub(crate) mod serve;
pub(crate) mod stdout;
pub(crate) mod validate;
