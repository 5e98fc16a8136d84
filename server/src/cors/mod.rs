//! Cross-origin resource sharing: the account's CORS rules (the `Cors`
//! element of Set Blob Service Properties) decide preflight `OPTIONS`
//! requests and the `Access-Control-*` headers of every other answer.
//!
//! Pure functions only: rules, the request's origin, method and headers go
//! in, a decision or a list of headers comes out. What Stowage does and
//! where it follows the reference page, "Cross-Origin Resource Sharing
//! (CORS) support for Azure Storage", is in `docs/wire/cors.md`.

pub(crate) mod rules;

pub(crate) use rules::CorsRule;

/// A preflight request's CORS headers.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Preflight<'a> {
    /// `Origin`.
    pub origin: &'a str,
    /// `Access-Control-Request-Method`.
    pub method: &'a str,
    /// `Access-Control-Request-Headers`, when sent.
    pub headers: Option<&'a str>,
}

/// The headers of a successful preflight answer, or `None` when no rule
/// allows it (`403 CorsPreflightFailure`).
///
/// The first rule that allows the origin and the method is the one that
/// decides: when it does not allow every requested header the preflight
/// fails, even if a later rule would have allowed them (the reference's
/// evaluation example, third request).
pub(crate) fn preflight(
    rules: &[CorsRule],
    p: &Preflight<'_>,
) -> Option<Vec<(&'static str, String)>> {
    let rule = rules
        .iter()
        .find(|r| r.allows_origin(p.origin) && r.allows_method(p.method))?;
    let requested: Vec<&str> = p.headers.map(header_list).unwrap_or_default();
    if !requested.iter().all(|h| rule.allows_header(h)) {
        return None;
    }
    let mut out = vec![
        ("access-control-allow-origin", p.origin.to_owned()),
        ("access-control-allow-methods", p.method.to_owned()),
    ];
    if !requested.is_empty() {
        out.push(("access-control-allow-headers", requested.join(",")));
    }
    out.push(("access-control-max-age", rule.max_age.to_string()));
    out.push(("access-control-allow-credentials", "true".to_owned()));
    Some(out)
}

/// An actual (not preflight) request, as far as CORS looks at it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Actual<'a> {
    /// `Origin`, when sent.
    pub origin: Option<&'a str>,
    /// The request's method.
    pub method: &'a str,
}

/// The CORS headers to add to the answer of an actual request, whatever its
/// status: `response_headers` are the names of the headers the answer
/// already has (what `ExposedHeaders` prefixes are matched against).
///
/// Follows the reference's table for GET and HEAD: with no rules, nothing;
/// a matching rule that allows every origin gives `Access-Control-Allow-Origin: *`
/// and the exposed headers, without `Vary`; a rule naming the origin gives
/// the origin back, the exposed headers, `Access-Control-Allow-Credentials`
/// and `Vary: Origin`; rules that match nothing give `Vary: Origin` alone.
/// Other methods never get `Vary`, as their answers are not cached.
pub(crate) fn actual(
    rules: &[CorsRule],
    req: &Actual<'_>,
    response_headers: &[&str],
) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    if rules.is_empty() {
        return out;
    }
    let cacheable = matches!(req.method, "GET" | "HEAD");
    // Without an Origin only a rule open to every origin can match.
    let matched = rules.iter().find(|r| {
        r.allows_method(req.method)
            && match req.origin {
                Some(o) => r.allows_origin(o),
                None => r.allows_any_origin(),
            }
    });
    let Some(rule) = matched else {
        if cacheable {
            out.push(("vary", "Origin".to_owned()));
        }
        return out;
    };
    let exact = match req.origin {
        Some(o) if !rule.allows_any_origin() => Some(o),
        _ => None,
    };
    out.push((
        "access-control-allow-origin",
        exact.unwrap_or("*").to_owned(),
    ));
    let exposed = rule.exposed(response_headers);
    if !exposed.is_empty() {
        out.push(("access-control-expose-headers", exposed.join(",")));
    }
    if exact.is_some() {
        out.push(("access-control-allow-credentials", "true".to_owned()));
        if cacheable {
            out.push(("vary", "Origin".to_owned()));
        }
    }
    out
}

/// The names of a comma-separated header list, trimmed, empty ones dropped.
fn header_list(list: &str) -> Vec<&str> {
    list.split(',')
        .map(str::trim)
        .filter(|h| !h.is_empty())
        .collect()
}

#[cfg(test)]
mod tests;
