//! The `multipart/mixed` bodies of Blob Batch: sub-requests in, sub-responses
//! out. Pure.

/// The most sub-requests in one batch (the service's limit).
pub(crate) const MAX_SUBREQUESTS: usize = 256;

/// One sub-request of a batch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SubRequest {
    /// The part's `Content-ID`, echoed in its answer.
    pub content_id: Option<String>,
    pub method: String,
    /// The request target as written (path and query, still encoded).
    pub target: String,
    /// Headers, names lowercased, in order.
    pub headers: Vec<(String, String)>,
}

/// The boundary of a `multipart/mixed; boundary=…` content type.
pub(crate) fn boundary(content_type: &str) -> Option<&str> {
    let (kind, params) = content_type.split_once(';')?;
    if !kind.trim().eq_ignore_ascii_case("multipart/mixed") {
        return None;
    }
    // Exactly one boundary parameter: two are as unusable as none.
    let mut boundaries = params.split(';').filter_map(|p| {
        let (name, value) = p.split_once('=')?;
        name.trim()
            .eq_ignore_ascii_case("boundary")
            .then(|| value.trim().trim_matches('"'))
    });
    let first = boundaries.next()?;
    (boundaries.next().is_none() && !first.is_empty()).then_some(first)
}

/// Why a batch body is refused as a whole.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BatchBodyError {
    /// Not a well-formed batch: no closing delimiter, no part, or a part
    /// that is not an HTTP request.
    Malformed,
    /// More than [`MAX_SUBREQUESTS`] parts.
    TooMany,
}

/// Splits a batch body into its sub-requests.
///
/// # Errors
///
/// The [`BatchBodyError`] of a body that is not a batch to run.
pub(crate) fn parse_batch(body: &[u8], boundary: &str) -> Result<Vec<SubRequest>, BatchBodyError> {
    use BatchBodyError::Malformed;
    let delimiter = format!("--{boundary}");
    let text = std::str::from_utf8(body).map_err(|_| Malformed)?;
    let mut parts = text.split(delimiter.as_str());
    // Anything before the first delimiter is preamble.
    parts.next().ok_or(Malformed)?;
    let mut out = Vec::new();
    let mut closed = false;
    for part in parts {
        if part.starts_with("--") {
            closed = true;
            break;
        }
        let part = part.strip_prefix("\r\n").ok_or(Malformed)?;
        out.push(parse_part(part).ok_or(Malformed)?);
    }
    if !closed || out.is_empty() {
        return Err(Malformed);
    }
    if out.len() > MAX_SUBREQUESTS {
        return Err(BatchBodyError::TooMany);
    }
    Ok(out)
}

/// A part: MIME headers, a blank line, then an HTTP request head.
fn parse_part(part: &str) -> Option<SubRequest> {
    let (mime, http) = part.split_once("\r\n\r\n")?;
    let mut content_id = None;
    let mut is_http = false;
    for line in mime.split("\r\n") {
        let (name, value) = line.split_once(':')?;
        match name.trim().to_ascii_lowercase().as_str() {
            "content-id" => content_id = Some(value.trim().to_owned()),
            "content-type" => is_http = value.trim().eq_ignore_ascii_case("application/http"),
            _ => {}
        }
    }
    if !is_http {
        return None;
    }
    let mut lines = http.split("\r\n");
    let mut request_line = lines.next()?.split(' ');
    let method = request_line.next()?.to_owned();
    let target = request_line.next()?;
    if !request_line.next()?.starts_with("HTTP/1.") || target.is_empty() || target.contains("://") {
        return None;
    }
    // The .NET SDK writes the path without its leading `/`
    // (`DELETE devstoreaccount1/c/a HTTP/1.1`); the service serves it.
    let target = match target.strip_prefix('/') {
        Some(_) => target.to_owned(),
        None => format!("/{target}"),
    };
    let mut headers = Vec::new();
    for line in lines.take_while(|l| !l.is_empty()) {
        let (name, value) = line.split_once(':')?;
        headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
    }
    Some(SubRequest {
        content_id,
        method,
        target,
        headers,
    })
}

/// One sub-response: status line, headers and an optional body.
#[derive(Debug)]
pub(crate) struct SubResponse {
    pub content_id: Option<String>,
    pub status: u16,
    pub reason: String,
    pub headers: Vec<(&'static str, String)>,
    pub body: Option<String>,
}

/// The batch response body for `boundary`.
pub(crate) fn render_batch(boundary: &str, responses: &[SubResponse]) -> String {
    let mut out = String::new();
    for r in responses {
        out.push_str(&format!(
            "--{boundary}\r\nContent-Type: application/http\r\n"
        ));
        if let Some(id) = &r.content_id {
            out.push_str(&format!("Content-ID: {id}\r\n"));
        }
        out.push_str(&format!("\r\nHTTP/1.1 {} {}\r\n", r.status, r.reason));
        for (name, value) in &r.headers {
            out.push_str(&format!("{name}: {value}\r\n"));
        }
        match &r.body {
            Some(body) => {
                out.push_str(&format!(
                    "Content-Type: application/xml\r\nContent-Length: {}\r\n\r\n{body}\r\n",
                    body.len()
                ));
            }
            None => out.push_str("\r\n"),
        }
    }
    out.push_str(&format!("--{boundary}--\r\n"));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shape object_store 0.14 sends (its own unit test's body).
    const OBJECT_STORE_BODY: &str = "--batch_statictestboundary\r\n\
        Content-Type: application/http\r\n\
        Content-Transfer-Encoding: binary\r\n\
        Content-ID: 0\r\n\
        \r\n\
        DELETE /testcontainer/a HTTP/1.1\r\n\
        Content-Length: 0\r\n\
        Date: Tue, 05 Nov 2024 15:01:15 GMT\r\n\
        X-Ms-Version: 2023-11-03\r\n\
        Authorization: SharedKey devstoreaccount1:abc=\r\n\
        \r\n\
        \r\n\
        --batch_statictestboundary\r\n\
        Content-Type: application/http\r\n\
        Content-Transfer-Encoding: binary\r\n\
        Content-ID: 1\r\n\
        \r\n\
        DELETE /devstoreaccount1/testcontainer/b%20c HTTP/1.1\r\n\
        Content-Length: 0\r\n\
        \r\n\
        \r\n\
        --batch_statictestboundary--\r\n";

    #[test]
    fn parses_the_object_store_body() {
        let parts = parse_batch(OBJECT_STORE_BODY.as_bytes(), "batch_statictestboundary").unwrap();
        assert_eq!(parts.len(), 2);
        assert_eq!(parts[0].content_id.as_deref(), Some("0"));
        assert_eq!(parts[0].method, "DELETE");
        assert_eq!(parts[0].target, "/testcontainer/a");
        assert_eq!(
            parts[0].headers[2],
            ("x-ms-version".to_owned(), "2023-11-03".to_owned())
        );
        assert_eq!(parts[1].target, "/devstoreaccount1/testcontainer/b%20c");
    }

    #[test]
    fn a_target_without_its_leading_slash_is_read_as_a_path() {
        let body = "--b\r\nContent-Type: application/http\r\nContent-ID: 0\r\n\r\n\
            DELETE devstoreaccount1/c/a%20b HTTP/1.1\r\nContent-Length: 0\r\n\r\n\r\n--b--\r\n";
        let parts = parse_batch(body.as_bytes(), "b").unwrap();
        assert_eq!(parts[0].target, "/devstoreaccount1/c/a%20b");
    }

    #[test]
    fn malformed_batches_are_refused() {
        let cases = [
            "",
            "no delimiter at all",
            "--b\r\nContent-Type: text/plain\r\n\r\nDELETE /c/a HTTP/1.1\r\n\r\n--b--\r\n",
            "--b\r\nContent-Type: application/http\r\n\r\nDELETE /c/a HTTP/1.1\r\n\r\n",
            "--b\r\nContent-Type: application/http\r\n\r\nnot a request line\r\n\r\n--b--\r\n",
            "--b\r\nContent-Type: application/http\r\n\r\nDELETE http://h/c/a HTTP/1.1\r\n\r\n--b--\r\n",
            "--b--\r\n",
        ];
        for body in cases {
            assert_eq!(
                parse_batch(body.as_bytes(), "b"),
                Err(BatchBodyError::Malformed),
                "{body:?}"
            );
        }
        let too_many = format!(
            "{}--b--\r\n",
            "--b\r\nContent-Type: application/http\r\n\r\nDELETE /c/a HTTP/1.1\r\n\r\n\r\n"
                .repeat(257)
        );
        assert_eq!(
            parse_batch(too_many.as_bytes(), "b"),
            Err(BatchBodyError::TooMany)
        );
        let most = format!(
            "{}--b--\r\n",
            "--b\r\nContent-Type: application/http\r\n\r\nDELETE /c/a HTTP/1.1\r\n\r\n\r\n"
                .repeat(256)
        );
        assert_eq!(parse_batch(most.as_bytes(), "b").map(|p| p.len()), Ok(256));
    }

    #[test]
    fn boundary_table() {
        assert_eq!(
            boundary("multipart/mixed; boundary=batch_x"),
            Some("batch_x")
        );
        assert_eq!(boundary("Multipart/Mixed;boundary=\"q\""), Some("q"));
        assert_eq!(boundary("application/xml"), None);
        assert_eq!(boundary("multipart/mixed"), None);
        assert_eq!(boundary("multipart/mixed; boundary="), None);
        assert_eq!(boundary("multipart/mixed; boundary=a; boundary=b"), None);
    }

    #[test]
    fn responses_parse_back_as_http() {
        let body = render_batch(
            "batchresponse_1",
            &[
                SubResponse {
                    content_id: Some("0".into()),
                    status: 202,
                    reason: "Accepted".into(),
                    headers: vec![("x-ms-delete-type-permanent", "true".into())],
                    body: None,
                },
                SubResponse {
                    content_id: Some("1".into()),
                    status: 404,
                    reason: "The specified blob does not exist.".into(),
                    headers: vec![("x-ms-error-code", "BlobNotFound".into())],
                    body: Some("<Error />".into()),
                },
            ],
        );
        let parts: Vec<&str> = body.split("--batchresponse_1").collect();
        assert_eq!(parts.len(), 4);
        for (part, code) in parts[1..3].iter().zip([202, 404]) {
            let http = part.split_once("\r\n\r\n").unwrap().1;
            let mut headers = [httparse::EMPTY_HEADER; 16];
            let mut resp = httparse::Response::new(&mut headers);
            assert!(resp.parse(http.as_bytes()).unwrap().is_complete());
            assert_eq!(resp.code, Some(code));
        }
        assert!(body.ends_with("--batchresponse_1--\r\n"));
    }
}
