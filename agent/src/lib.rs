//! vernier-agent: the data plane that generates open-loop load and timestamps every
//! request (pinned worker threads, SO_TIMESTAMPING), and the gRPC control service the
//! workbench drives it through. The engine arrives with its own issue; this crate holds
//! its place in the workspace's dependency order (`agent` uses `protocols`).
