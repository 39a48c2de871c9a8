//! The descriptors of a gRPC method, read where the scenario is: a `.proto` file compiled
//! (protox, in pure Rust, with its imports) or a descriptor set read as `protoc
//! --include_imports -o` writes it. The protocols crate gets their bytes, never a path.

use std::path::{Path, PathBuf};

use vernier_protocols::grpc::{GrpcError, check_descriptors};

/// What can go wrong reading a method's descriptors. The message names the file and,
/// for a `.proto` file that does not compile, where in it.
#[derive(Debug, thiserror::Error)]
pub enum ProtoError {
    /// A file that cannot be read (a missing `.proto` file or descriptor set).
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A `.proto` file that does not compile (does not parse, imports a missing file,
    /// names an undefined type...).
    #[error("cannot compile {}: {location}: {message}", path.display())]
    Proto {
        /// The file compiled.
        path: PathBuf,
        /// Where the mistake is, `file:line:column` (1-based), as the file is named in its
        /// include path (it may be an imported one), or only the file when protox gives no
        /// position.
        location: String,
        /// protox's message.
        message: String,
    },
    /// A descriptor set that does not decode, or lacks an import.
    #[error(transparent)]
    Descriptors(#[from] GrpcError),
}

/// Compiles the `.proto` file at `path` into an encoded `FileDescriptorSet`, its imports
/// included so that it is self-contained. Imports are looked up in `includes`, in order,
/// then in the file's own directory; the well-known types (`google/protobuf/*.proto`) are
/// built in.
pub fn compile_proto(path: &Path, includes: &[PathBuf]) -> Result<Vec<u8>, ProtoError> {
    std::fs::metadata(path).map_err(|source| ProtoError::Read {
        path: path.to_owned(),
        source,
    })?;
    let own = path.parent().unwrap_or(Path::new(""));
    let paths = includes.iter().map(PathBuf::as_path).chain([own]);
    let mut compiler = protox::Compiler::new(paths).map_err(|e| proto_error(path, &e))?;
    compiler
        .include_imports(true)
        .open_file(path)
        .map_err(|e| proto_error(path, &e))?;
    Ok(compiler.encode_file_descriptor_set())
}

/// Reads an encoded `FileDescriptorSet` (as `protoc --include_imports -o x.pb` writes), checked
/// that it decodes and that every file's imports are in it.
pub fn read_descriptor_set(path: &Path) -> Result<Vec<u8>, ProtoError> {
    let bytes = std::fs::read(path).map_err(|source| ProtoError::Read {
        path: path.to_owned(),
        source,
    })?;
    check_descriptors(&bytes, &path.display().to_string())?;
    Ok(bytes)
}

/// protox's error, with where it is.
fn proto_error(path: &Path, error: &protox::Error) -> ProtoError {
    use miette::Diagnostic as _;
    let position = error.labels().and_then(|mut labels| {
        let label = labels.next()?;
        let span = error.source_code()?.read_span(label.inner(), 0, 0).ok()?;
        Some((span.line() + 1, span.column() + 1))
    });
    let file = error
        .file()
        .map_or_else(|| path.display().to_string(), str::to_owned);
    ProtoError::Proto {
        path: path.to_owned(),
        location: match position {
            Some((line, column)) => format!("{file}:{line}:{column}"),
            None => file,
        },
        message: error.to_string(),
    }
}

#[cfg(test)]
mod tests;
