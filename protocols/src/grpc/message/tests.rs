#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::time::Instant;

use prost::Message as _;
use prost_reflect::{DescriptorPool, DynamicMessage, MapKey, Value};
use tempfile::TempDir;

use super::*;

const BENCH: &str = r#"syntax = "proto3";
package bench;
message Req { string name = 1; int64 id = 2; bytes blob = 3; Inner inner = 4; repeated string tags = 5; }
message Inner { string k = 1; }
message Rep { string message = 1; }
service Echo { rpc Call (Req) returns (Rep); rpc Stream (Req) returns (stream Rep); }
"#;

/// Every kind of field a placeholder can be in, with an import from an include path and a
/// well-known type.
const KINDS: &str = r#"syntax = "proto3";
package kinds;
import "common/inner.proto";
import "google/protobuf/wrappers.proto";
import "google/protobuf/struct.proto";
enum Color { RED = 0; BLUE = 1; }
message All {
  int32 i32 = 1; uint32 u32 = 2; sint32 s32 = 3; fixed32 f32 = 4; sfixed32 sf32 = 5;
  int64 i64 = 6; uint64 u64 = 7; sint64 s64 = 8; fixed64 f64 = 9; sfixed64 sf64 = 10;
  float fl = 11; double db = 12; bool flag = 13; Color color = 14;
  repeated int32 packed = 15; repeated sint64 unpacked = 16 [packed = false];
  map<string, string> labels = 17; map<int32, common.Inner> by_id = 18;
  google.protobuf.StringValue wrapped = 19; google.protobuf.Int64Value wrapped_id = 20;
  oneof choice { string text = 21; bytes raw = 22; }
  repeated common.Inner inners = 23; google.protobuf.Struct meta = 24;
  common.Inner deep = 25;
}
service Kinds { rpc Do (All) returns (All); rpc Up (stream All) returns (All); rpc Both (stream All) returns (stream All); }
"#;

const INNER: &str = r#"syntax = "proto3";
package common;
message Inner { string k = 1; Inner next = 2; bytes b = 3; }
"#;

/// A tempdir with bench.proto, and kinds.proto whose import is in `include/common`.
fn protos() -> TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bench.proto"), BENCH).unwrap();
    std::fs::write(dir.path().join("kinds.proto"), KINDS).unwrap();
    std::fs::create_dir_all(dir.path().join("include/common")).unwrap();
    std::fs::write(dir.path().join("include/common/inner.proto"), INNER).unwrap();
    dir
}

/// The encoded `FileDescriptorSet` of the `.proto` file at `path`, its imports included (the
/// workbench compiles them so; the tests here only need the bytes).
fn compile_proto(path: &Path, includes: &[PathBuf]) -> Result<Vec<u8>, protox::Error> {
    let own = path.parent().unwrap_or(Path::new(""));
    let paths = includes.iter().map(PathBuf::as_path).chain([own]);
    let mut compiler = protox::Compiler::new(paths)?;
    compiler.include_imports(true).open_file(path)?;
    Ok(compiler.encode_file_descriptor_set())
}

fn bench() -> (TempDir, Vec<u8>) {
    let dir = protos();
    let descriptors = compile_proto(&dir.path().join("bench.proto"), &[]).unwrap();
    (dir, descriptors)
}

fn kinds() -> (TempDir, Vec<u8>) {
    let dir = protos();
    let include = dir.path().join("include");
    let descriptors = compile_proto(&dir.path().join("kinds.proto"), &[include]).unwrap();
    (dir, descriptors)
}

/// The request `method` of `descriptors` writes, decoded.
fn encoded(
    descriptors: &[u8],
    method: &str,
    request: &str,
    key: &[u8],
    seq: u64,
) -> DynamicMessage {
    let method = Method::new(descriptors, method, request).unwrap();
    let mut out = vec![0xAA]; // appended to, not overwritten
    method.encode(key, seq, 7, &mut out).unwrap();
    assert_eq!(out.first(), Some(&0xAA));
    let pool = DescriptorPool::decode(descriptors).unwrap();
    let name = method.path().trim_start_matches('/').replace('/', ".");
    let (service, rpc) = name.rsplit_once('.').unwrap();
    let input = pool
        .get_service_by_name(service)
        .unwrap()
        .methods()
        .find(|m| m.name() == rpc)
        .unwrap()
        .input();
    DynamicMessage::decode(input, &out[1..]).unwrap()
}

fn field(message: &DynamicMessage, name: &str) -> Value {
    message.get_field_by_name(name).unwrap().into_owned()
}

fn text(value: &str) -> Value {
    Value::String(value.to_owned())
}

fn error(descriptors: &[u8], method: &str, request: &str) -> String {
    Method::new(descriptors, method, request)
        .unwrap_err()
        .to_string()
}

#[test]
fn finds_the_method_as_written_three_ways() {
    let (_dir, descriptors) = bench();
    for name in ["bench.Echo/Call", "/bench.Echo/Call", "bench.Echo.Call"] {
        let method = Method::new(&descriptors, name, "{}").unwrap();
        assert_eq!(method.path(), "/bench.Echo/Call", "{name}");
        assert!(!method.uses_key());
    }
}

#[test]
fn fills_top_level_placeholders() {
    let (_dir, descriptors) = bench();
    let request = r#"{"name": "user-{key}#{seq}", "id": "{seq}", "blob": "{key}"}"#;
    let message = encoded(&descriptors, "bench.Echo/Call", request, b"k1", 42);
    assert_eq!(field(&message, "name"), text("user-k1#42"));
    assert_eq!(field(&message, "id"), Value::I64(42));
    assert_eq!(field(&message, "blob"), Value::Bytes(b"k1".to_vec().into()));
    assert!(
        Method::new(&descriptors, "bench.Echo/Call", request)
            .unwrap()
            .uses_key()
    );
    // Sequence numbers of every width, and a key long enough for a two-byte length.
    for seq in [0, 9, 10, u64::from(u32::MAX), u64::MAX] {
        let key = vec![b'x'; 300];
        let message = encoded(&descriptors, "bench.Echo/Call", request, &key, seq);
        assert_eq!(
            field(&message, "name"),
            text(&format!("user-{}#{seq}", "x".repeat(300)))
        );
        assert_eq!(field(&message, "id"), Value::I64(seq as i64));
    }
}

#[test]
fn fills_nested_and_repeated_placeholders() {
    let (_dir, descriptors) = bench();
    let request = r#"{"inner": {"k": "{key}-{seq}"}, "tags": ["a", "{seq}", "b{{c}}", "{key}"],
                      "name": "{{literal}}"}"#;
    for key in [&b"k"[..], &[b'y'; 200]] {
        let message = encoded(&descriptors, "bench.Echo/Call", request, key, 7);
        let key = String::from_utf8(key.to_vec()).unwrap();
        let inner = field(&message, "inner");
        assert_eq!(
            field(inner.as_message().unwrap(), "k"),
            text(&format!("{key}-7"))
        );
        let tags = vec![text("a"), text("7"), text("b{c}"), text(&key)];
        assert_eq!(field(&message, "tags"), Value::List(tags));
        assert_eq!(field(&message, "name"), text("{literal}"));
    }
}

#[test]
fn a_key_that_is_not_utf8_is_lossy_text_and_raw_bytes() {
    let (_dir, descriptors) = bench();
    let request = r#"{"name": "{key}", "blob": "<{key}>"}"#;
    let message = encoded(&descriptors, "bench.Echo/Call", request, b"a\xffb", 1);
    assert_eq!(field(&message, "name"), text("a\u{FFFD}b"));
    assert_eq!(
        field(&message, "blob"),
        Value::Bytes(b"<a\xffb>".to_vec().into())
    );
}

#[test]
fn random_placeholders_follow_the_entropy() {
    let (_dir, descriptors) = bench();
    let method = Method::new(
        &descriptors,
        "bench.Echo/Call",
        r#"{"blob": "{random:16}", "name": "r{random:9}"}"#,
    )
    .unwrap();
    let draw = |entropy| {
        let mut out = Vec::new();
        method.encode(b"", 0, entropy, &mut out).unwrap();
        out
    };
    assert_eq!(draw(1), draw(1));
    assert_ne!(draw(1), draw(2));
    let pool = DescriptorPool::decode(descriptors.as_slice()).unwrap();
    let req = pool.get_message_by_name("bench.Req").unwrap();
    let message = DynamicMessage::decode(req, draw(3).as_slice()).unwrap();
    assert_eq!(field(&message, "blob").as_bytes().unwrap().len(), 16);
    let name = field(&message, "name");
    let name = name.as_str().unwrap();
    assert_eq!(name.len(), 10);
    assert!(
        name[1..]
            .bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()),
        "{name}"
    );
}

#[test]
fn a_template_without_placeholders_is_the_direct_encoding() {
    let (_dir, descriptors) = bench();
    let request =
        r#"{"name": "x", "id": "5", "blob": "AAE=", "inner": {"k": "v"}, "tags": ["p", "q"]}"#;
    let method = Method::new(&descriptors, "bench.Echo/Call", request).unwrap();
    let pool = DescriptorPool::decode(descriptors.as_slice()).unwrap();
    let req = pool.get_message_by_name("bench.Req").unwrap();
    let direct =
        DynamicMessage::deserialize(req, &mut serde_json::Deserializer::from_str(request)).unwrap();
    let mut out = Vec::new();
    method.encode(b"key", 3, 4, &mut out).unwrap();
    assert_eq!(out, direct.encode_to_vec());
    assert!(matches!(
        method.template.parts.as_slice(),
        [template::Part::Fixed(_)]
    ));
    // The empty request is the empty message.
    let empty = Method::new(&descriptors, "bench.Echo/Call", " ").unwrap();
    let mut out = Vec::new();
    empty.encode(b"key", 3, 4, &mut out).unwrap();
    assert!(out.is_empty());
}

#[test]
fn seq_fills_every_number_type() {
    let (_dir, descriptors) = kinds();
    let names = [
        "i32", "u32", "s32", "f32", "sf32", "i64", "u64", "s64", "f64", "sf64", "fl", "db",
    ];
    let request = names
        .map(|name| format!(r#""{name}": "{{seq}}""#))
        .join(", ");
    let request =
        format!("{{{request}, \"packed\": [1, \"{{seq}}\", -3], \"unpacked\": [\"{{seq}}\", -2]}}");
    let message = encoded(&descriptors, "kinds.Kinds/Do", &request, b"", 300);
    let expected = [
        Value::I32(300),
        Value::U32(300),
        Value::I32(300),
        Value::U32(300),
        Value::I32(300),
        Value::I64(300),
        Value::U64(300),
        Value::I64(300),
        Value::U64(300),
        Value::I64(300),
        Value::F32(300.0),
        Value::F64(300.0),
    ];
    for (name, value) in names.iter().zip(expected) {
        assert_eq!(field(&message, name), value, "{name}");
    }
    assert_eq!(
        field(&message, "packed"),
        Value::List(vec![Value::I32(1), Value::I32(300), Value::I32(-3)])
    );
    assert_eq!(
        field(&message, "unpacked"),
        Value::List(vec![Value::I64(300), Value::I64(-2)])
    );
    // 32-bit fields wrap as a cast does.
    let message = encoded(
        &descriptors,
        "kinds.Kinds/Do",
        &request,
        b"",
        (1 << 32) + (1 << 31),
    );
    assert_eq!(field(&message, "i32"), Value::I32(i32::MIN));
    assert_eq!(field(&message, "u32"), Value::U32(1 << 31));
}

#[test]
fn fills_maps_wrappers_oneofs_and_deep_messages() {
    let (_dir, descriptors) = kinds();
    let request = r#"{
        "labels": {"user": "{key}", "fixed": "v", "seq": "{seq}"},
        "byId": {"5": {"k": "{key}", "next": {"b": "{key}"}}, "-1": {"k": "plain"}},
        "wrapped": "w-{key}", "wrappedId": "{seq}", "raw": "{key}",
        "inners": [{"k": "a"}, {"next": {"next": {"k": "{seq}"}}}],
        "deep": {"next": {"next": {"k": "{key}{key}"}}}, "meta": {"a": "{{not a placeholder"}
    }"#;
    let message = encoded(&descriptors, "kinds.Kinds/Do", request, b"kk", 9);
    let labels = field(&message, "labels");
    let labels = labels.as_map().unwrap();
    assert_eq!(labels[&MapKey::String("user".into())], text("kk"));
    assert_eq!(labels[&MapKey::String("fixed".into())], text("v"));
    assert_eq!(labels[&MapKey::String("seq".into())], text("9"));
    let by_id = field(&message, "by_id");
    let five = by_id.as_map().unwrap()[&MapKey::I32(5)]
        .as_message()
        .unwrap()
        .clone();
    assert_eq!(field(&five, "k"), text("kk"));
    assert_eq!(
        field(field(&five, "next").as_message().unwrap(), "b"),
        Value::Bytes(b"kk".to_vec().into())
    );
    let minus_one = by_id.as_map().unwrap()[&MapKey::I32(-1)]
        .as_message()
        .unwrap()
        .clone();
    assert_eq!(field(&minus_one, "k"), text("plain"));
    assert_eq!(
        field(field(&message, "wrapped").as_message().unwrap(), "value"),
        text("w-kk")
    );
    assert_eq!(
        field(field(&message, "wrapped_id").as_message().unwrap(), "value"),
        Value::I64(9)
    );
    assert_eq!(field(&message, "raw"), Value::Bytes(b"kk".to_vec().into()));
    let inners = field(&message, "inners");
    let second = inners.as_list().unwrap()[1].as_message().unwrap().clone();
    let next = field(&second, "next");
    assert_eq!(
        field(
            field(next.as_message().unwrap(), "next")
                .as_message()
                .unwrap(),
            "k"
        ),
        text("9")
    );
    let deep = field(&message, "deep");
    let next = field(deep.as_message().unwrap(), "next");
    assert_eq!(
        field(
            field(next.as_message().unwrap(), "next")
                .as_message()
                .unwrap(),
            "k"
        ),
        text("kkkk")
    );
    // A free-form Struct's strings are taken as written.
    let meta = serde_json::to_value(field(&message, "meta").as_message().unwrap()).unwrap();
    assert_eq!(meta, serde_json::json!({"a": "{{not a placeholder"}));
}

#[test]
fn descriptors_that_do_not_decode_are_refused() {
    let message = error(b"\x0a\x05abc", "bench.Echo/Call", "{}");
    assert!(
        message.starts_with("descriptors: not an encoded FileDescriptorSet"),
        "{message}"
    );
}

#[test]
fn methods_that_cannot_be_called_are_named_with_what_there_is() {
    let (_dir, descriptors) = bench();
    let message = error(&descriptors, "bench.Nope/Call", "{}");
    assert_eq!(
        message,
        "no service bench.Nope in the descriptors: they have bench.Echo"
    );
    let message = error(&descriptors, "bench.Echo/Nope", "{}");
    assert_eq!(
        message,
        "service bench.Echo has no method Nope: it has Call, Stream"
    );
    let message = error(&descriptors, "bench.Echo/Stream", "{}");
    assert_eq!(
        message,
        "bench.Echo/Stream is a server streaming method: only unary methods are measured"
    );
    for name in ["Call", "/Call", "bench.Echo/", "a/b/c"] {
        let message = error(&descriptors, name, "{}");
        assert!(
            message.contains("expected package.Service/Method"),
            "{name}: {message}"
        );
    }
    let (_dir, kinds) = kinds();
    assert!(error(&kinds, "kinds.Kinds/Up", "{}").contains("a client streaming method"));
    assert!(error(&kinds, "kinds.Kinds/Both", "{}").contains("a bidirectional streaming method"));
}

#[test]
fn requests_that_do_not_match_name_the_message_type() {
    let (_dir, descriptors) = bench();
    let message = error(&descriptors, "bench.Echo/Call", r#"{"name": "#);
    assert!(
        message.starts_with("the request for bench.Req is not JSON: "),
        "{message}"
    );
    let message = error(&descriptors, "bench.Echo/Call", r#"{"nope": "{key}"}"#);
    assert!(
        message.starts_with("the request does not match message bench.Req: ")
            && message.contains("nope"),
        "{message}"
    );
    let message = error(&descriptors, "bench.Echo/Call", r#"{"name": 5}"#);
    assert!(
        message.starts_with("the request does not match message bench.Req: "),
        "{message}"
    );
    let message = error(&descriptors, "bench.Echo/Call", r#"{"id": "abc"}"#);
    assert!(
        message.starts_with("the request does not match message bench.Req: "),
        "{message}"
    );
}

#[test]
fn placeholders_that_cannot_be_filled_in_say_why() {
    let (_dir, descriptors) = bench();
    let message = error(
        &descriptors,
        "bench.Echo/Call",
        r#"{"inner": {"k": "user-{kee}"}}"#,
    );
    assert_eq!(
        message,
        r#"request field inner.k: unknown placeholder {kee} at byte 5 of "user-{kee}": expected {key}, {seq} or {random:N} ({{ and }} for literal braces)"#
    );
    let message = error(
        &descriptors,
        "bench.Echo/Call",
        r#"{"tags": ["ok", "a{key"]}"#,
    );
    assert!(
        message.starts_with("request field tags[1]: unclosed { at byte 1"),
        "{message}"
    );
    let message = error(&descriptors, "bench.Echo/Call", r#"{"name": "a}b"}"#);
    assert!(message.contains("unmatched } at byte 1"), "{message}");
    for bad in ["{random}", "{random:0}", "{random:x}", "{random:99999999}"] {
        let message = error(
            &descriptors,
            "bench.Echo/Call",
            &format!(r#"{{"blob": "{bad}"}}"#),
        );
        assert!(
            message.starts_with("request field blob: ") && message.contains("{random:16}"),
            "{message}"
        );
    }
    let message = error(&descriptors, "bench.Echo/Call", r#"{"id": "{key}"}"#);
    assert_eq!(
        message,
        r#"request field id is int64: it cannot hold {key}; a number field holds only {seq}, as its whole value "{seq}""#
    );
    let message = error(&descriptors, "bench.Echo/Call", r#"{"id": "1{seq}"}"#);
    assert!(
        message.starts_with("request field id is int64: it cannot hold {seq}"),
        "{message}"
    );

    let (_dir, kinds) = kinds();
    let message = error(&kinds, "kinds.Kinds/Do", r#"{"flag": "{seq}"}"#);
    assert!(
        message.starts_with("request field flag is bool: it cannot hold {seq}; placeholders go in"),
        "{message}"
    );
    let message = error(&kinds, "kinds.Kinds/Do", r#"{"color": "{key}"}"#);
    assert!(
        message.starts_with("request field color is enum kinds.Color"),
        "{message}"
    );
    let message = error(&kinds, "kinds.Kinds/Do", r#"{"labels": {"{key}": "v"}}"#);
    assert!(
        message.starts_with(r#"request field labels["{key}"]: a map key cannot hold"#),
        "{message}"
    );
    let message = error(&kinds, "kinds.Kinds/Do", r#"{"meta": {"a": ["{seq}"]}}"#);
    assert!(
        message.starts_with(
            "request field meta.a[0]: placeholders are not filled in inside google.protobuf.Struct"
        ),
        "{message}"
    );
    let message = error(&kinds, "kinds.Kinds/Do", r#"{"deep": "{key}"}"#);
    assert!(
        message.starts_with("request field deep is message common.Inner"),
        "{message}"
    );
}

#[test]
fn encode_cost_per_request() {
    let (_dir, descriptors) = bench();
    let request =
        r#"{"name": "user-{key}", "id": 12345, "inner": {"k": "fixed"}, "tags": ["a", "b"]}"#;
    let method = Method::new(&descriptors, "bench.Echo/Call", request).unwrap();
    let keys: Vec<Vec<u8>> = (0..64)
        .map(|i| format!("key-{i:012}").into_bytes())
        .collect();
    let mut out = Vec::with_capacity(256);
    let rounds = 2_000_000u64;
    let start = Instant::now();
    for seq in 0..rounds {
        out.clear();
        let key = &keys[(seq % 64) as usize];
        method.encode(key, seq, seq, &mut out).unwrap();
        std::hint::black_box(&out);
    }
    let ns = start.elapsed().as_nanos() as f64 / rounds as f64;
    println!("grpc::message encode, one {{key}} in a 5-field message: {ns:.1} ns per request");
}

#[test]
fn proto2_groups_are_written_as_they_are_and_refuse_placeholders() {
    let dir = tempfile::tempdir().unwrap();
    let proto = dir.path().join("legacy.proto");
    let source = "syntax = \"proto2\";\npackage legacy;\n\
                  message Old { optional group G = 1 { optional string s = 2; } optional string name = 3; }\n\
                  service S { rpc Do (Old) returns (Old); }\n";
    std::fs::write(&proto, source).unwrap();
    let descriptors = compile_proto(&proto, &[]).unwrap();
    let message = encoded(
        &descriptors,
        "legacy.S/Do",
        r#"{"g": {"s": "x"}, "name": "{key}"}"#,
        b"k",
        1,
    );
    assert_eq!(field(&message, "name"), text("k"));
    assert_eq!(
        field(field(&message, "g").as_message().unwrap(), "s"),
        text("x")
    );
    let message = error(&descriptors, "legacy.S/Do", r#"{"g": {"s": "{key}"}}"#);
    assert!(
        message
            .starts_with("request field g.s: placeholders are not filled in inside a proto2 group"),
        "{message}"
    );
}
