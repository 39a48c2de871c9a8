//! What can go wrong finding a method and reading its request.

use std::fmt;

use prost_reflect::MessageDescriptor;

/// The most bytes (or hex digits) one `{random:N}` writes: 4 MiB, the message size gRPC
/// servers accept by default.
pub const MAX_RANDOM: usize = 4 << 20;

/// What can go wrong finding a method and reading its request. The message names what and
/// where, and what was expected.
#[derive(Debug, thiserror::Error)]
pub enum GrpcError {
    /// Descriptors that do not decode as an encoded `FileDescriptorSet`.
    #[error(
        "{from}: not an encoded FileDescriptorSet (as `protoc --include_imports -o` writes): \
         {problem}"
    )]
    Descriptors {
        /// Where they came from: a file, or `descriptors`.
        from: String,
        /// prost-reflect's message.
        problem: String,
    },
    /// A method not written as `package.Service/Method`.
    #[error("method {method:?}: expected package.Service/Method, as in bench.Echo/Call")]
    MethodName {
        /// The method as written.
        method: String,
    },
    /// A service the descriptors do not have.
    #[error("no service {service} in the descriptors: they have {known}")]
    NoService {
        /// The service asked for.
        service: String,
        /// The services they have, full names.
        known: String,
    },
    /// A method the service does not have.
    #[error("service {service} has no method {method}: it has {known}")]
    NoMethod {
        /// The service.
        service: String,
        /// The method asked for.
        method: String,
        /// The methods it has.
        known: String,
    },
    /// A streaming method.
    #[error("{method} is a {kind} method: only unary methods are measured")]
    Streaming {
        /// The method, `package.Service/Method`.
        method: String,
        /// `client streaming`, `server streaming` or `bidirectional streaming`.
        kind: &'static str,
    },
    /// A request that is not JSON.
    #[error("the request for {message_type} is not JSON: {problem}")]
    Json {
        /// The request message's full name.
        message_type: String,
        /// serde_json's message.
        problem: String,
    },
    /// A request that does not match its message type (an unknown field, a wrong type).
    #[error("the request does not match message {message_type}: {problem}")]
    Mismatch {
        /// The request message's full name.
        message_type: String,
        /// prost-reflect's message.
        problem: String,
    },
    /// A placeholder that cannot be read (unknown, unclosed, a bad size) or is refused
    /// where it is (a map key, a free-form type).
    #[error("request field {field}: {problem}")]
    Placeholder {
        /// The field, as a path in the JSON: `inner.name`, `tags[1]`, `attrs["k"]`.
        field: String,
        /// What is wrong, at which byte of the string, and what was expected.
        problem: String,
    },
    /// A placeholder in a field whose type cannot hold it.
    #[error("request field {field} is {kind}: it cannot hold {placeholder}; {hint}")]
    Unfit {
        /// The field, as a path in the JSON.
        field: String,
        /// The field's type: `int32`, `bool`, `enum bench.Color`, `message ...`.
        kind: String,
        /// The first placeholder it cannot hold.
        placeholder: String,
        /// Where it could go.
        hint: &'static str,
    },
    /// TLS cannot be set up as asked (a CA file that is not PEM, a bad server name).
    #[error("{0}")]
    Tls(String),
}

/// The error of a request that does not match its message type `desc`.
pub(super) fn mismatch(desc: &MessageDescriptor, problem: impl fmt::Display) -> GrpcError {
    GrpcError::Mismatch {
        message_type: desc.full_name().to_owned(),
        problem: problem.to_string(),
    }
}
