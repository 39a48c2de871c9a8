//! `without_stalls.short` as records hold it: the tail without stalls' own reasons in the
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
enum Own {
    Wide { width_us: Figure, target_us: Figure },
    TooFew { have: usize, needed: usize },
    Unsettled { width_us: Figure, target_us: Figure },
    Touched { share: Figure, most: Figure },
    NoProbe,
    Thinned { sampling: Figure },
}

/// One of the tail without stalls' own, or any reason.
#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum Form {
    Own(Own),
    Why(Box<Why>),
}

impl From<&Why> for Form {
    fn from(why: &Why) -> Form {
        Form::Own(match why {
            Why::Confidence(Confidence::UntouchedWide(c)) => Own::Wide {
                width_us: c.ci_width_us,
                target_us: c.target_us,
            },
            Why::Confidence(Confidence::Unsettled(c)) => Own::Unsettled {
                width_us: c.ci_width_us,
                target_us: c.target_us,
            },
            Why::TooFewSamples(TooFewSamples::Untouched(f)) => Own::TooFew {
                have: f.untouched,
                needed: f.needed,
            },
            Why::Touched(t) => Own::Touched {
                share: t.share,
                most: t.most,
            },
            Why::NoProbe(_) => Own::NoProbe,
            Why::Thinned(t) => Own::Thinned {
                sampling: t.sampling,
            },
            other => return Form::Why(Box::new(other.clone())),
        })
    }
}

impl From<Form> for Why {
    fn from(form: Form) -> Why {
        let own = match form {
            Form::Own(own) => own,
            Form::Why(why) => return *why,
        };
        match own {
            Own::Wide {
                width_us,
                target_us,
            } => Why::Confidence(Confidence::UntouchedWide(UntouchedCi {
                ci_width_us: width_us,
                target_us,
            })),
            Own::Unsettled {
                width_us,
                target_us,
            } => Why::Confidence(Confidence::Unsettled(UntouchedCi {
                ci_width_us: width_us,
                target_us,
            })),
            Own::TooFew { have, needed } => {
                Why::TooFewSamples(TooFewSamples::Untouched(UntouchedFew {
                    untouched: have,
                    needed,
                }))
            }
            Own::Touched { share, most } => Why::Touched(Touched { share, most }),
            Own::NoProbe => Why::NoProbe(Nothing {}),
            Own::Thinned { sampling } => Why::Thinned(Thinned { sampling }),
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
            let own: WithoutStalls =
                serde_json::from_str(&recorded(short)).unwrap_or_else(|e| panic!("{short}: {e}"));
            let written = serde_json::to_value(&own).unwrap();
            let expected: serde_json::Value = serde_json::from_str(short).unwrap();
            assert_eq!(written["short"], expected);
            let why = own.short.clone().unwrap_or_else(|| panic!("{short}"));
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
