//! `without_stalls.short` as records hold it: the reasons only the tail without stalls gives, in the
//! shape that field has always had (`kind`: `wide`, `too_few`, `unsettled`, `touched`,
//! `no_probe`, `thinned`, with their figures beside it), any other reason as a reason's
//! `check` and `figures`. Read back into [`Why`].

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::super::figure::Figure;
use super::super::reason::{
    Confidence, Nothing, Thinned, TooFewSamples, Touched, UntouchedCi, UntouchedFew, Why,
};

/// The tail without stalls' reasons, tagged by `kind`.
#[derive(Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Short {
    Wide { width_us: Figure, target_us: Figure },
    TooFew { have: usize, needed: usize },
    Unsettled { width_us: Figure, target_us: Figure },
    Touched { share: Figure, most: Figure },
    NoProbe,
    Thinned { sampling: Figure },
}

/// One of the reasons only the tail without stalls gives, or any reason.
#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum Form {
    Short(Short),
    Why(Box<Why>),
}

impl From<&Why> for Form {
    fn from(why: &Why) -> Form {
        Form::Short(match why {
            Why::Confidence(Confidence::UntouchedWide(c)) => Short::Wide {
                width_us: c.ci_width_us,
                target_us: c.target_us,
            },
            Why::Confidence(Confidence::Unsettled(c)) => Short::Unsettled {
                width_us: c.ci_width_us,
                target_us: c.target_us,
            },
            Why::TooFewSamples(TooFewSamples::Untouched(f)) => Short::TooFew {
                have: f.untouched,
                needed: f.needed,
            },
            Why::Touched(t) => Short::Touched {
                share: t.share,
                most: t.most,
            },
            Why::NoProbe(_) => Short::NoProbe,
            Why::Thinned(t) => Short::Thinned {
                sampling: t.sampling,
            },
            other => return Form::Why(Box::new(other.clone())),
        })
    }
}

impl From<Form> for Why {
    fn from(form: Form) -> Why {
        let short = match form {
            Form::Short(short) => short,
            Form::Why(why) => return *why,
        };
        match short {
            Short::Wide {
                width_us,
                target_us,
            } => Why::Confidence(Confidence::UntouchedWide(UntouchedCi {
                ci_width_us: width_us,
                target_us,
            })),
            Short::Unsettled {
                width_us,
                target_us,
            } => Why::Confidence(Confidence::Unsettled(UntouchedCi {
                ci_width_us: width_us,
                target_us,
            })),
            Short::TooFew { have, needed } => {
                Why::TooFewSamples(TooFewSamples::Untouched(UntouchedFew {
                    untouched: have,
                    needed,
                }))
            }
            Short::Touched { share, most } => Why::Touched(Touched { share, most }),
            Short::NoProbe => Why::NoProbe(Nothing {}),
            Short::Thinned { sampling } => Why::Thinned(Thinned { sampling }),
        }
    }
}

pub(super) fn serialize<S: Serializer>(short: &Option<Why>, s: S) -> Result<S::Ok, S::Error> {
    short.as_ref().map(Form::from).serialize(s)
}

pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Why>, D::Error> {
    Ok(Option::<Form>::deserialize(d)?.map(Why::from))
}

#[cfg(test)]
mod tests {
    use super::super::super::reason::Reason;
    use super::super::WithoutStalls;
    use super::{Confidence, TooFewSamples, Why};

    /// A tail without stalls as a record of the time before its reasons were reasons.
    fn recorded(short: &str) -> String {
        format!(
            r#"{{"verdict": "n/a", "short": {short}, "percentiles": [], "ci_width_us": null,
                "touched_share": 0.3, "touched_by_agent": [0.3], "samples": 900,
                "stalls": 12, "probed": "client_and_target"}}"#
        )
    }

    /// Every short a record holds reads back, writes back the same, and says what it
    /// always said.
    #[test]
    fn every_short_of_a_record_reads_back_and_writes_the_same() {
        let cases = [
            (
                r#"{"kind":"wide","width_us":12.5,"target_us":10.0}"#,
                "its CI is 12.5 µs wide, 10.0 asked",
            ),
            (
                r#"{"kind":"too_few","have":900,"needed":4000}"#,
                "900 untouched samples are too few for a CI (about 4000 would do)",
            ),
            (
                r#"{"kind":"unsettled","width_us":9.5,"target_us":10.0}"#,
                "its CI was 9.5 µs wide (10.0 asked) at the last look, but the stopping rule's confirming look did not come before the point ended",
            ),
            (
                r#"{"kind":"touched","share":0.3,"most":0.25}"#,
                "stalls touched 30.0% of the requests, more than the 25% the method is checked at: the untouched ones are too small a part to stand for the server",
            ),
            (
                r#"{"kind":"no_probe"}"#,
                "no probe recorded stalls, so no request can be called untouched",
            ),
            (
                r#"{"kind":"thinned","sampling":0.1}"#,
                "only 10.0% of the requests were kept, so whether one was still in flight at a stall's end is unknown",
            ),
        ];
        for (short, said) in cases {
            let tail: WithoutStalls =
                serde_json::from_str(&recorded(short)).unwrap_or_else(|e| panic!("{short}: {e}"));
            let written = serde_json::to_value(&tail).unwrap();
            let expected: serde_json::Value = serde_json::from_str(short).unwrap();
            assert_eq!(written["short"], expected);
            let why = tail.short.clone().unwrap_or_else(|| panic!("{short}"));
            assert_eq!(Reason::new(why).detail(), said);
        }
        let cases = cases.map(|(short, _)| short);
        let wide: WithoutStalls = serde_json::from_str(&recorded(cases[0])).unwrap();
        assert!(matches!(
            wide.short,
            Some(Why::Confidence(Confidence::UntouchedWide(ref c))) if c.ci_width_us == 12.5
        ));
        let few: WithoutStalls = serde_json::from_str(&recorded(cases[1])).unwrap();
        assert!(matches!(
            few.short,
            Some(Why::TooFewSamples(TooFewSamples::Untouched(ref f))) if f.needed == 4000
        ));
        let unsettled: WithoutStalls = serde_json::from_str(&recorded(cases[2])).unwrap();
        assert!(matches!(
            unsettled.short,
            Some(Why::Confidence(Confidence::Unsettled(_)))
        ));
    }
}
