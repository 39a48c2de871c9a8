//! The flags that declare a `tcp://` URL's protocol (`--framing`, `--request`,
//! `--reply-ok`), each turned into the YAML of the field it sets, so that a one-liner's
//! protocol is the same mapping a file writes, read and checked by the same code. A value
//! these forms do not recognise is passed on as written, for the declaration's own check
//! to refuse with its expected forms.

use serde_yaml::{Mapping, Value};

/// `--framing length:4`, `length:2:little`, `delimiter:\r\n`, `fixed:64`: `protocol.framing`.
pub fn framing(text: &str) -> Value {
    let mut framing = Mapping::new();
    let (kind, rest) = text.split_once(':').unwrap_or((text, ""));
    match kind {
        "length" => {
            let mut length = Mapping::new();
            let (bytes, order) = rest.split_once(':').unwrap_or((rest, ""));
            let Ok(bytes) = bytes.parse::<u64>() else {
                return Value::from(text);
            };
            length.insert("bytes".into(), bytes.into());
            match order {
                "" => {}
                "big" | "little" => {
                    length.insert("order".into(), order.into());
                }
                _ => return Value::from(text),
            }
            framing.insert("length".into(), Value::Mapping(length));
        }
        "delimiter" if !rest.is_empty() => {
            framing.insert("delimiter".into(), rest.into());
        }
        "fixed" => match rest.parse::<u64>() {
            Ok(size) => {
                framing.insert("fixed".into(), size.into());
            }
            Err(_) => return Value::from(text),
        },
        _ => return Value::from(text),
    }
    Value::Mapping(framing)
}

/// `--request TEMPLATE`: `protocol.requests`, the one request, written as text.
pub fn requests(text: &str) -> Value {
    let mut request = Mapping::new();
    request.insert("text".into(), text.into());
    Value::Sequence(vec![Value::Mapping(request)])
}

/// `--reply-ok OFFSET:TEXT`: `protocol.reply.ok`.
pub fn reply_ok(text: &str) -> Value {
    let Some((offset, equals)) = text
        .split_once(':')
        .and_then(|(o, e)| Some((o.parse::<u64>().ok()?, e)))
    else {
        return Value::from(text);
    };
    let mut ok = Mapping::new();
    ok.insert("offset".into(), offset.into());
    ok.insert("equals".into(), equals.into());
    Value::Mapping(ok)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn yaml(value: &Value) -> String {
        serde_json::to_string(value).unwrap()
    }

    #[test]
    fn each_form_is_the_mapping_a_file_writes() {
        assert_eq!(yaml(&framing("length:4")), r#"{"length":{"bytes":4}}"#);
        assert_eq!(
            yaml(&framing("length:2:little")),
            r#"{"length":{"bytes":2,"order":"little"}}"#
        );
        assert_eq!(
            yaml(&framing(r"delimiter:\r\n")),
            r#"{"delimiter":"\\r\\n"}"#
        );
        assert_eq!(yaml(&framing("fixed:64")), r#"{"fixed":64}"#);
        assert_eq!(
            yaml(&requests("{len:u32be}{key}")),
            r#"[{"text":"{len:u32be}{key}"}]"#
        );
        assert_eq!(
            yaml(&reply_ok(r"8:\x00")),
            r#"{"offset":8,"equals":"\\x00"}"#
        );
    }

    #[test]
    fn unknown_forms_pass_through_as_written() {
        for text in [
            "length",
            "length:x",
            "length:4:middle",
            "delimiter:",
            "fixed:",
            "lines",
        ] {
            assert_eq!(framing(text), Value::from(text), "{text}");
        }
        assert_eq!(reply_ok("eight:x"), Value::from("eight:x"));
    }
}
