//! A protocol declared in a scenario (framing, request templates, reply matching; see
//! [`crate::declared`]), as the registry sees it: its URL scheme is `tcp`, and its spec is a
//! mapping, not a name.

use super::vocab::{
    EncodeError, Entry, MappingForm, Matching, ParseError, Protocol, Reply, Request, Speak,
    WorkloadKind,
};
use crate::declared::{Declaration, DeclareError, Declared};

const NAME: &str = "declared";

pub(super) static ENTRY: Entry = Entry {
    name: NAME,
    scheme: "tcp",
    forms: &["a declared protocol (a mapping)"],
    url_spec: NAME,
    example_port: 9000,
    workload: WorkloadKind::Keys,
    default_path: None,
    url_method: false,
    about: "your own protocol over TCP: framing, request templates and reply matching \
            declared in the scenario",
    build: |_| {
        Err(
            "a declared protocol is written as a mapping, as in protocol: {framing: \
             {length: {bytes: 4}}, requests: [{text: '{len:u32be}{key}'}]}"
                .to_owned(),
        )
    },
    // Any mapping without another protocol's key is a declaration.
    mapping: Some(MappingForm {
        key: None,
        parse: |mapping| {
            let declaration: Declaration =
                serde_json::from_value(serde_json::Value::Object(mapping))
                    .map_err(|e| e.to_string())?;
            Protocol::declare(declaration).map_err(|e| e.to_string())
        },
    }),
};

impl Speak for Declared {
    fn entry(&self) -> &'static Entry {
        &ENTRY
    }

    fn spec(&self) -> String {
        NAME.to_owned()
    }

    #[inline]
    fn encode(
        &self,
        request: &Request<'_>,
        opaque: u32,
        out: &mut Vec<u8>,
    ) -> Result<(), EncodeError> {
        match *request {
            Request::Template {
                index,
                key,
                entropy,
            } => Declared::encode(self, index, key, opaque, entropy, out),
            _ => Err(EncodeError::unsupported(NAME, request)),
        }
    }

    #[inline]
    fn parse(&self, buf: &[u8]) -> Result<Option<(Reply, usize)>, ParseError> {
        Declared::parse(self, buf)
    }

    fn matching(&self) -> Matching {
        match self.id_mask() {
            Some(mask) => Matching::ById { mask },
            None => Matching::InOrder,
        }
    }

    /// The declaration: plain data (strings, numbers), which always serialises.
    fn mapping(&self) -> Option<serde_json::Value> {
        serde_json::to_value(self.declaration()).ok()
    }
}

impl Protocol {
    /// A protocol declared in a scenario, checked.
    pub fn declare(declaration: Declaration) -> Result<Protocol, DeclareError> {
        Ok(Protocol::new(Declared::new(declaration)?))
    }

    /// The declaration, for a declared protocol.
    pub fn declared(&self) -> Option<&Declared> {
        self.speak().downcast_ref::<Declared>()
    }

    /// Whether this is a protocol declared in a scenario rather than a built-in one.
    pub fn is_declared(&self) -> bool {
        self.declared().is_some()
    }
}
