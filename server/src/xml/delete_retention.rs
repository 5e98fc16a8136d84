//! The `DeleteRetentionPolicy` of the Blob service properties
//! (docs/wire/versions.md#switching-them-on): the one setting of the
//! document besides CORS that Stowage acts on.

use quick_xml::Reader;
use quick_xml::events::Event;
use stowage_blobstore::DeleteRetention;

use crate::error::ApiError;

/// The longest retention the service accepts, in days.
const MAX_DAYS: u32 = 365;

/// The soft delete policy a stored document states: `None` when it has no
/// `DeleteRetentionPolicy` or the policy is not enabled.
///
/// # Errors
/// `InvalidXmlNodeValue` for an enabled policy without `Days` in 1..=365,
/// a value that is not a number or a boolean; `InvalidXmlDocument` when the
/// document is not well-formed.
pub(crate) fn delete_retention(doc: &str) -> Result<Option<DeleteRetention>, ApiError> {
    let doc = doc.strip_prefix('\u{FEFF}').unwrap_or(doc);
    let mut reader = Reader::from_str(doc);
    let mut path: Vec<String> = Vec::new();
    let (mut enabled, mut days, mut permanent) = (None, None, None);
    loop {
        match reader
            .read_event()
            .map_err(|_| ApiError::InvalidXmlDocument)?
        {
            Event::Start(e) => path.push(String::from_utf8_lossy(e.name().as_ref()).into_owned()),
            Event::End(_) => {
                path.pop();
            }
            Event::Text(t) if path.len() == 3 && path[1] == "DeleteRetentionPolicy" => {
                let text = t
                    .decode()
                    .map_err(|_| ApiError::InvalidXmlDocument)?
                    .trim()
                    .to_owned();
                match path[2].as_str() {
                    "Enabled" => enabled = Some(boolean(&text)?),
                    "Days" => {
                        days = Some(
                            text.parse::<u32>()
                                .map_err(|_| ApiError::InvalidXmlNodeValue)?,
                        )
                    }
                    "AllowPermanentDelete" => permanent = Some(boolean(&text)?),
                    _ => {}
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    match (enabled, days) {
        (Some(true), Some(d)) if (1..=MAX_DAYS).contains(&d) => Ok(Some(DeleteRetention {
            days: d,
            allow_permanent_delete: permanent.unwrap_or(false),
        })),
        (Some(true), _) => Err(ApiError::InvalidXmlNodeValue),
        _ => Ok(None),
    }
}

fn boolean(text: &str) -> Result<bool, ApiError> {
    match text.to_ascii_lowercase().as_str() {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(ApiError::InvalidXmlNodeValue),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(policy: &str) -> String {
        format!(
            "<?xml version=\"1.0\" encoding=\"utf-8\"?><StorageServiceProperties>\
             <Cors /><DeleteRetentionPolicy>{policy}</DeleteRetentionPolicy>\
             </StorageServiceProperties>"
        )
    }

    #[test]
    fn policies_table() {
        let on = |days, allow| {
            Ok(Some(DeleteRetention {
                days,
                allow_permanent_delete: allow,
            }))
        };
        let cases: Vec<(String, Result<Option<DeleteRetention>, &str>)> = vec![
            (doc("<Enabled>false</Enabled>"), Ok(None)),
            (doc("<Enabled>true</Enabled><Days>7</Days>"), on(7, false)),
            (
                doc(
                    "<Enabled>true</Enabled><Days>365</Days><AllowPermanentDelete>true</AllowPermanentDelete>",
                ),
                on(365, true),
            ),
            (doc("<Enabled>true</Enabled><Days>1</Days>"), on(1, false)),
            (
                doc("<Enabled>true</Enabled><Days>0</Days>"),
                Err("InvalidXmlNodeValue"),
            ),
            (
                doc("<Enabled>true</Enabled><Days>366</Days>"),
                Err("InvalidXmlNodeValue"),
            ),
            (doc("<Enabled>true</Enabled>"), Err("InvalidXmlNodeValue")),
            (doc("<Enabled>yes</Enabled>"), Err("InvalidXmlNodeValue")),
            (
                doc("<Enabled>true</Enabled><Days>x</Days>"),
                Err("InvalidXmlNodeValue"),
            ),
            (
                "<StorageServiceProperties><Cors /></StorageServiceProperties>".to_owned(),
                Ok(None),
            ),
        ];
        for (input, expected) in cases {
            let got = delete_retention(&input).map_err(|e| match e {
                ApiError::InvalidXmlNodeValue => "InvalidXmlNodeValue",
                _ => "other",
            });
            assert_eq!(got, expected, "{input}");
        }
    }
}
