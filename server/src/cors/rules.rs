//! One CORS rule of the service properties, and how it matches.

/// A `CorsRule`: lists as written, comma-separated, each entry trimmed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct CorsRule {
    /// `AllowedOrigins`: exact origins, `*` for every origin, or patterns
    /// with `*` for any run of characters (`http://*.contoso.com`).
    pub origins: Vec<String>,
    /// `AllowedMethods`.
    pub methods: Vec<String>,
    /// `AllowedHeaders`: names, or prefixes ending in `*`.
    pub allowed_headers: Vec<String>,
    /// `ExposedHeaders`: names, or prefixes ending in `*`.
    pub exposed_headers: Vec<String>,
    /// `MaxAgeInSeconds`.
    pub max_age: u64,
}

/// Splits a rule's comma-separated list.
pub(crate) fn list(text: &str) -> Vec<String> {
    text.split(',')
        .map(str::trim)
        .filter(|e| !e.is_empty())
        .map(str::to_owned)
        .collect()
}

/// True when `name` is `pattern` or starts with a `pattern` ending in `*`;
/// header names compare without regard to case.
fn header_matches(pattern: &str, name: &str) -> bool {
    match pattern.strip_suffix('*') {
        Some(prefix) => name
            .get(..prefix.len())
            .is_some_and(|head| head.eq_ignore_ascii_case(prefix)),
        None => pattern.eq_ignore_ascii_case(name),
    }
}

/// True when `origin` matches `pattern`, where each `*` stands for any run
/// of characters, dots included (`*.contoso.com` takes `a.b.contoso.com`
/// but not `contoso.com`). Patterns name hosts, which compare without regard
/// to case.
fn origin_pattern_matches(pattern: &str, origin: &str) -> bool {
    let pattern = pattern.as_bytes();
    let origin = origin.as_bytes();
    // Classic glob walk: remember the last `*` and how much of the origin
    // it has taken, and let it take one byte more on a mismatch.
    let (mut p, mut o) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while o < origin.len() {
        if p < pattern.len() && pattern[p] == b'*' {
            star = Some((p, o));
            p += 1;
        } else if p < pattern.len() && pattern[p].eq_ignore_ascii_case(&origin[o]) {
            p += 1;
            o += 1;
        } else if let Some((sp, so)) = star {
            p = sp + 1;
            o = so + 1;
            star = Some((sp, so + 1));
        } else {
            return false;
        }
    }
    pattern[p..].iter().all(|&c| c == b'*')
}

impl CorsRule {
    /// `*` among the allowed origins.
    pub(crate) fn allows_any_origin(&self) -> bool {
        self.origins.iter().any(|o| o == "*")
    }

    /// The origin is listed, exactly and case-sensitively as the reference
    /// asks; every origin is allowed; or a listed pattern with `*` in it
    /// (the reference's own example, `http://*.contoso.com`) matches it.
    pub(crate) fn allows_origin(&self, origin: &str) -> bool {
        self.origins.iter().any(|o| {
            o == "*" || o == origin || (o.contains('*') && origin_pattern_matches(o, origin))
        })
    }

    /// Methods compare without regard to case: the service accepts only its
    /// upper-case method names in a rule, and browsers send those.
    pub(crate) fn allows_method(&self, method: &str) -> bool {
        self.methods.iter().any(|m| m.eq_ignore_ascii_case(method))
    }

    /// A requested header is a listed name or starts with a listed prefix
    /// (`x-ms-meta-*`; `*` alone allows every header).
    pub(crate) fn allows_header(&self, name: &str) -> bool {
        self.allowed_headers.iter().any(|p| header_matches(p, name))
    }

    /// The value of `Access-Control-Expose-Headers` for an answer carrying
    /// `response_headers`: each of those that a listed name or prefix
    /// matches, then every listed name the answer does not carry (a
    /// browser exposes a header only if it is named here).
    pub(crate) fn exposed(&self, response_headers: &[&str]) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        let mut push = |name: &str| {
            if !out.iter().any(|o| o.eq_ignore_ascii_case(name)) {
                out.push(name.to_owned());
            }
        };
        for name in response_headers {
            if self.exposed_headers.iter().any(|p| header_matches(p, name)) {
                push(name);
            }
        }
        for name in self.exposed_headers.iter().filter(|p| !p.ends_with('*')) {
            push(name);
        }
        out
    }
}
