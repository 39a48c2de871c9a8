//! The orthogonal choices a socket is made with: where its timestamps come from, and its
//! transport (the type in `transport.rs`), each parsed from its command-line spelling.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::error::SysError;
use super::ethtool::{interface_timestamping, interfaces};
use super::transport::Transport;

/// Where a socket's timestamps come from.
///
/// Spelled `hw`, `kernel` or `user` on the command line, with the hardware interface
/// given separately (`--interface`): `"hw".parse()` yields `Hardware` with an empty
/// interface, to be filled in with [`TimestampMode::with_interface`]. `hw:IFACE` is
/// accepted too, and is how [`Display`](fmt::Display) writes a hardware mode, so the
/// text round-trips.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum TimestampMode {
    /// The NIC of `interface` stamps packets with its PTP hardware clock.
    Hardware {
        /// The interface whose NIC takes the timestamps.
        interface: String,
    },
    /// The kernel stamps packets in software, in `CLOCK_REALTIME`.
    Kernel,
    /// The caller reads a clock around its own `send` and `recv`.
    User,
}

impl TimestampMode {
    /// This mode, with `interface` as the hardware interface if it is
    /// [`Hardware`](TimestampMode::Hardware); other modes are returned unchanged.
    #[must_use]
    pub fn with_interface(self, interface: impl Into<String>) -> Self {
        match self {
            TimestampMode::Hardware { .. } => TimestampMode::Hardware {
                interface: interface.into(),
            },
            other => other,
        }
    }

    /// The best timestamps this host offers for traffic through `interface`: hardware if
    /// its NIC can stamp every packet both ways, kernel otherwise (kernel software
    /// timestamps work on every interface, loopback and veth included). With no
    /// interface, or one that does not exist, the answer is kernel; asking for that
    /// interface in hardware mode explains why.
    pub fn best_for(interface: Option<&str>) -> TimestampMode {
        match interface.map(|i| (i, interface_timestamping(i))) {
            Some((i, Ok(caps))) if caps.hardware_missing().is_none() => TimestampMode::Hardware {
                interface: i.to_owned(),
            },
            _ => TimestampMode::Kernel,
        }
    }

    /// `hw`, `kernel` or `user`: the mode's name without its interface.
    pub fn name(&self) -> &'static str {
        match self {
            TimestampMode::Hardware { .. } => "hw",
            TimestampMode::Kernel => "kernel",
            TimestampMode::User => "user",
        }
    }

    /// The interfaces on this host, for the error of a hardware mode without one.
    pub(crate) fn no_interface_error() -> SysError {
        SysError::NoInterfaceGiven {
            available: interfaces(),
        }
    }
}

impl FromStr for TimestampMode {
    type Err = SysError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "hw" | "hardware" => Ok(TimestampMode::Hardware {
                interface: String::new(),
            }),
            "kernel" => Ok(TimestampMode::Kernel),
            "user" => Ok(TimestampMode::User),
            _ => match s.split_once(':') {
                Some(("hw" | "hardware", interface)) if !interface.is_empty() => {
                    Ok(TimestampMode::Hardware {
                        interface: interface.to_owned(),
                    })
                }
                _ => Err(SysError::Parse {
                    what: "timestamp mode",
                    value: s.to_owned(),
                    expected: "hw, hw:IFACE, kernel, user",
                }),
            },
        }
    }
}

impl fmt::Display for TimestampMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TimestampMode::Hardware { interface } if !interface.is_empty() => {
                write!(f, "hw:{interface}")
            }
            other => f.write_str(other.name()),
        }
    }
}

/// Serialized as its [`Display`](fmt::Display) text (`"kernel"`, `"hw:eth0"`), as records
/// report the source in use.
impl Serialize for TimestampMode {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// Read from the text it is serialized as.
impl<'de> Deserialize<'de> for TimestampMode {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

impl FromStr for Transport {
    type Err = SysError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "tcp" => Ok(Transport::Tcp),
            "udp" => Ok(Transport::Udp),
            _ => Err(SysError::Parse {
                what: "transport",
                value: s.to_owned(),
                expected: "tcp, udp",
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_parse_and_round_trip() {
        for text in ["kernel", "user", "hw", "hw:eth0"] {
            let mode: TimestampMode = text.parse().unwrap();
            assert_eq!(mode.to_string(), text);
        }
        assert_eq!(
            "hw".parse::<TimestampMode>()
                .unwrap()
                .with_interface("eth1"),
            TimestampMode::Hardware {
                interface: "eth1".into()
            }
        );
        assert_eq!(
            TimestampMode::Kernel.with_interface("eth1"),
            TimestampMode::Kernel
        );
        let err = "nic".parse::<TimestampMode>().unwrap_err().to_string();
        assert_eq!(
            err,
            "timestamp mode \"nic\" is not one of hw, hw:IFACE, kernel, user"
        );
        assert!("hw:".parse::<TimestampMode>().is_err());
    }

    #[test]
    fn transports_parse_and_round_trip() {
        assert_eq!("tcp".parse::<Transport>().unwrap(), Transport::Tcp);
        assert_eq!(Transport::Udp.to_string(), "udp");
        assert!("sctp".parse::<Transport>().is_err());
    }

    #[test]
    fn best_for_loopback_is_kernel() {
        // No NIC here stamps in hardware; the loopback certainly does not.
        assert_eq!(TimestampMode::best_for(Some("lo")), TimestampMode::Kernel);
        assert_eq!(TimestampMode::best_for(None), TimestampMode::Kernel);
    }
}
