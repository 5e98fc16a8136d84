//! Query parameters shared by the listings (docs/wire/listing.md#paging).

use stowage_blobstore::ListingMarker;

use crate::error::ApiError;
use crate::target::Query;

/// The most items in a page, and the default.
const MAX_RESULTS: usize = 5000;

/// `maxresults`: absent or above 5000 means 5000.
pub(crate) fn max_results(q: &Query) -> Result<usize, ApiError> {
    let Some(v) = q.get("maxresults") else {
        return Ok(MAX_RESULTS);
    };
    let n: i64 = v
        .trim()
        .parse()
        .map_err(|_| ApiError::InvalidQueryParameterValue {
            name: "maxresults".into(),
            value: v.into(),
        })?;
    if n <= 0 {
        return Err(ApiError::OutOfRangeQueryParameterValue {
            name: "maxresults".into(),
            value: v.into(),
        });
    }
    Ok((n as usize).min(MAX_RESULTS))
}

/// `marker`: a token this server made, else `InvalidQueryParameterValue`.
pub(crate) fn marker(q: &Query) -> Result<Option<ListingMarker>, ApiError> {
    match q.get("marker") {
        None | Some("") => Ok(None),
        Some(m) => {
            ListingMarker::decode(m)
                .map(Some)
                .ok_or_else(|| ApiError::InvalidQueryParameterValue {
                    name: "marker".into(),
                    value: m.into(),
                })
        }
    }
}

/// The `include` options, lowercased; each must be one of `allowed`.
pub(crate) fn include(q: &Query, allowed: &[&str]) -> Result<Vec<String>, ApiError> {
    let mut out = Vec::new();
    for value in q.all("include") {
        for option in value.split(',').map(str::trim).filter(|o| !o.is_empty()) {
            let lower = option.to_ascii_lowercase();
            if !allowed.contains(&lower.as_str()) {
                return Err(ApiError::InvalidQueryParameterValue {
                    name: "include".into(),
                    value: value.into(),
                });
            }
            out.push(lower);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(s: &str) -> Query {
        Query::parse(s).unwrap()
    }

    #[test]
    fn max_results_table() {
        let code = |s: &str| max_results(&q(s)).map_err(|e| e.answer().code);
        assert_eq!(code(""), Ok(5000));
        assert_eq!(code("maxresults=2"), Ok(2));
        assert_eq!(code("maxresults=99999"), Ok(5000));
        assert_eq!(code("maxresults=0"), Err("OutOfRangeQueryParameterValue"));
        assert_eq!(code("maxresults=-3"), Err("OutOfRangeQueryParameterValue"));
        assert_eq!(code("maxresults=abc"), Err("InvalidQueryParameterValue"));
    }

    #[test]
    fn include_accepts_lists_repeats_and_any_case() {
        let got = include(
            &q("include=Metadata,snapshots&include=COPY"),
            &["metadata", "snapshots", "copy"],
        );
        assert_eq!(got.unwrap(), ["metadata", "snapshots", "copy"]);
        let bad = include(&q("include=bogus"), &["metadata"]).unwrap_err();
        assert_eq!(bad.answer().code, "InvalidQueryParameterValue");
    }

    #[test]
    fn foreign_markers_are_refused() {
        assert!(marker(&q("marker=README.md")).is_err());
        assert_eq!(marker(&q("marker=")).unwrap(), None);
    }
}
