#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use tempfile::TempDir;
use vernier_protocols::grpc::Method;

use super::*;

/// A method whose request has maps and a 64-bit number, importing a message from an
/// include path.
const KINDS: &str = r#"syntax = "proto3";
package kinds;
import "common/inner.proto";
message All { int64 i64 = 6; map<string, string> labels = 17; map<int32, common.Inner> by_id = 18; }
service Kinds { rpc Do (All) returns (All); }
"#;

const INNER: &str = r#"syntax = "proto3";
package common;
message Inner { string k = 1; }
"#;

/// A tempdir with kinds.proto, whose import is in `include/common`.
fn protos() -> TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("kinds.proto"), KINDS).unwrap();
    std::fs::create_dir_all(dir.path().join("include/common")).unwrap();
    std::fs::write(dir.path().join("include/common/inner.proto"), INNER).unwrap();
    dir
}

fn kinds() -> (TempDir, Vec<u8>) {
    let dir = protos();
    let include = dir.path().join("include");
    let descriptors = compile_proto(&dir.path().join("kinds.proto"), &[include]).unwrap();
    (dir, descriptors)
}

#[test]
fn a_compiled_set_written_and_read_back_makes_the_same_method() {
    let (dir, descriptors) = kinds();
    let file = dir.path().join("kinds.pb");
    std::fs::write(&file, &descriptors).unwrap();
    let read = read_descriptor_set(&file).unwrap();
    assert_eq!(read, descriptors);
    let request = r#"{"labels": {"b": "{key}", "a": "x", "c": "y"}, "byId": {"2": {"k": "p"}, "1": {"k": "q"}}, "i64": "{seq}"}"#;
    let compiled = Method::new(&descriptors, "kinds.Kinds/Do", request).unwrap();
    assert_eq!(
        Method::new(&read, "kinds.Kinds/Do", request).unwrap(),
        compiled
    );
}

#[test]
fn proto_errors_say_where() {
    let dir = protos();
    let bad = dir.path().join("bad.proto");
    std::fs::write(
        &bad,
        "syntax = \"proto3\";\nmessage A {\n  int32 x = 1\n}\n",
    )
    .unwrap();
    let message = compile_proto(&bad, &[]).unwrap_err().to_string();
    assert!(
        message.starts_with(&format!(
            "cannot compile {}: bad.proto:4:1: ",
            bad.display()
        )),
        "{message}"
    );
    assert!(message.contains("expected ';'"), "{message}");

    std::fs::write(
        &bad,
        "syntax = \"proto3\";\nmessage A {\n  Missing x = 1;\n}\n",
    )
    .unwrap();
    let message = compile_proto(&bad, &[]).unwrap_err().to_string();
    assert!(
        message.contains("bad.proto:3:3: ") && message.contains("Missing"),
        "{message}"
    );

    // kinds.proto without the include path its import needs.
    let message = compile_proto(&dir.path().join("kinds.proto"), &[])
        .unwrap_err()
        .to_string();
    assert!(
        message.contains("kinds.proto:3:1: ") && message.contains("common/inner.proto"),
        "{message}"
    );

    let missing = dir.path().join("missing.proto");
    let error = compile_proto(&missing, &[]).unwrap_err();
    assert!(matches!(error, ProtoError::Read { .. }));
    assert!(
        error
            .to_string()
            .starts_with(&format!("cannot read {}: ", missing.display()))
    );
    let error = read_descriptor_set(Path::new("/nonexistent/x.pb")).unwrap_err();
    assert!(matches!(error, ProtoError::Read { .. }), "{error}");
}

#[test]
fn descriptors_that_do_not_decode_are_refused() {
    let dir = protos();
    let file: PathBuf = dir.path().join("garbage.pb");
    std::fs::write(&file, b"\x0a\xff\xff\xff").unwrap();
    let message = read_descriptor_set(&file).unwrap_err().to_string();
    assert!(
        message.starts_with(&format!(
            "{}: not an encoded FileDescriptorSet",
            file.display()
        )),
        "{message}"
    );
}
