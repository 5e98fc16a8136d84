//! Set Blob Expiry (docs/wire/expiry.md): `x-ms-expiry-option` and
//! `x-ms-expiry-time` give the time a blob is deleted at.

use std::time::Duration;

use actix_web::HttpResponse;
use stowage_blobstore::{ExpiryOption, SetBlobExpiryInput};

use crate::error::ApiError;
use crate::request::RequestContext;
use crate::response;

const OPTION: &str = "x-ms-expiry-option";
const TIME: &str = "x-ms-expiry-time";

pub(crate) async fn set_blob_expiry(ctx: &RequestContext) -> Result<HttpResponse, ApiError> {
    // Only a base blob has an expiry time.
    ctx.forbid_snapshot()?;
    let h = ctx.headers();
    let option = h
        .get(OPTION)?
        .ok_or(ApiError::MissingRequiredHeader(OPTION))?;
    let input = SetBlobExpiryInput {
        account: ctx.account().to_owned(),
        container: ctx.container()?,
        blob: ctx.blob()?,
        option: expiry_option(option, h.get(TIME)?)?,
        lease_id: h.lease_id()?,
    };
    let v = ctx.store().set_blob_expiry(input).await?;
    let mut b = HttpResponse::Ok();
    response::version(&mut b, &v);
    Ok(b.finish())
}

fn invalid(name: &str, value: &str) -> ApiError {
    ApiError::InvalidHeaderValue {
        name: name.to_owned(),
        value: value.to_owned(),
    }
}

/// The option a request asks for: the option's name (any case), and the
/// time it needs: milliseconds for the relative options, an RFC 1123 date
/// for `Absolute`, none for `NeverExpire`.
fn expiry_option(option: &str, time: Option<&str>) -> Result<ExpiryOption, ApiError> {
    let millis = |t: &str| {
        t.trim()
            .parse::<u64>()
            .map(Duration::from_millis)
            .map_err(|_| invalid(TIME, t))
    };
    let required = || time.ok_or(ApiError::MissingRequiredHeader(TIME));
    match option.trim().to_ascii_lowercase().as_str() {
        "neverexpire" => match time {
            None => Ok(ExpiryOption::NeverExpire),
            Some(t) => Err(invalid(TIME, t)),
        },
        "relativetocreation" => Ok(ExpiryOption::RelativeToCreation(millis(required()?)?)),
        "relativetonow" => Ok(ExpiryOption::RelativeToNow(millis(required()?)?)),
        "absolute" => {
            let t = required()?;
            httpdate::parse_http_date(t.trim())
                .map(ExpiryOption::Absolute)
                .map_err(|_| invalid(TIME, t))
        }
        _ => Err(invalid(OPTION, option)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::UNIX_EPOCH;

    #[test]
    fn options_and_times_table() {
        let ms = Duration::from_millis;
        let ok = [
            ("NeverExpire", None, ExpiryOption::NeverExpire),
            ("neverexpire", None, ExpiryOption::NeverExpire),
            (
                "RelativeToCreation",
                Some("60000"),
                ExpiryOption::RelativeToCreation(ms(60_000)),
            ),
            (
                "RelativeToNow",
                Some("1500"),
                ExpiryOption::RelativeToNow(ms(1_500)),
            ),
            (
                "Absolute",
                Some("Thu, 01 Jan 1970 00:01:40 GMT"),
                ExpiryOption::Absolute(UNIX_EPOCH + Duration::from_secs(100)),
            ),
        ];
        for (option, time, want) in ok {
            assert_eq!(expiry_option(option, time).unwrap(), want, "{option}");
        }
        let bad = [
            ("Sometime", None, "InvalidHeaderValue", OPTION),
            ("NeverExpire", Some("5"), "InvalidHeaderValue", TIME),
            ("RelativeToNow", None, "MissingRequiredHeader", TIME),
            ("RelativeToNow", Some("-5"), "InvalidHeaderValue", TIME),
            (
                "RelativeToCreation",
                Some("soon"),
                "InvalidHeaderValue",
                TIME,
            ),
            ("Absolute", None, "MissingRequiredHeader", TIME),
            ("Absolute", Some("2024-09-03"), "InvalidHeaderValue", TIME),
        ];
        for (option, time, code, header) in bad {
            let e = expiry_option(option, time).unwrap_err();
            let answer = e.answer();
            assert_eq!(answer.code, code, "{option} {time:?}");
            let text = format!("{e:?}");
            assert!(text.contains(header), "{option} {time:?}: {text}");
        }
    }
}
