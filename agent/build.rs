//! Generates the gRPC control-plane code from proto/agent.proto with the protoc that the
//! protoc-bin-vendored crate ships, so a fresh machine needs no protobuf compiler.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut config = prost_build::Config::new();
    config.protoc_executable(protoc_bin_vendored::protoc_bin_path()?);
    tonic_prost_build::configure().compile_with_config(
        config,
        &["proto/agent.proto"],
        &["proto"],
    )?;
    Ok(())
}
