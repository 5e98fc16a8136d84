//! The tag expression language (docs/wire/tags.md).
//!
//! Two dialects share one tokenizer:
//!
//! * [`TagCondition`], the value of `x-ms-if-tags` (and
//!   `x-ms-source-if-tags`): comparisons with `=`, `<>`, `<`, `<=`, `>`,
//!   `>=`, joined with `AND` and `OR` (AND binds tighter), grouped with
//!   parentheses.
//! * [`Filter`], the `where` of Find Blobs by Tags: comparisons with `=`,
//!   `<`, `<=`, `>`, `>=` joined with `AND` only, plus `@container = 'name'`.
//!
//! A key is double-quoted (`"Project"`) or a bare word of letters, digits
//! and `_`; a value is single-quoted. `AND` and `OR` are read in any case.
//! Values compare as strings, byte by byte (the service compares
//! lexicographically). A comparison on a key the blob does not have is
//! false, whatever its operator.

use std::cmp::Ordering;

use super::Tags;

/// A comparison operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// `=`
    Eq,
    /// `<>` (conditions only)
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
}

impl Op {
    /// Whether `value <op> operand` holds.
    pub fn holds(self, value: &str, operand: &str) -> bool {
        let o = value.cmp(operand);
        match self {
            Op::Eq => o == Ordering::Equal,
            Op::Ne => o != Ordering::Equal,
            Op::Lt => o == Ordering::Less,
            Op::Le => o != Ordering::Greater,
            Op::Gt => o == Ordering::Greater,
            Op::Ge => o != Ordering::Less,
        }
    }

    /// `>` and `>=`: a lower bound.
    fn is_lower(self) -> bool {
        matches!(self, Op::Gt | Op::Ge)
    }

    /// `<` and `<=`: an upper bound.
    fn is_upper(self) -> bool {
        matches!(self, Op::Lt | Op::Le)
    }
}

/// One `key op 'value'`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Comparison {
    /// The tag key.
    pub key: String,
    /// The operator.
    pub op: Op,
    /// The value compared with.
    pub value: String,
}

impl Comparison {
    fn matches(&self, tags: &Tags) -> bool {
        tags.get(&self.key)
            .is_some_and(|v| self.op.holds(v, &self.value))
    }
}

/// An expression that cannot be read: answered with a `400` naming the
/// header or the `where` parameter.
/// Its text is the service's: `Error parsing query at or near character
/// position N: ...`, or `Error parsing query: ...` for a problem of the
/// whole query.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExprError {
    /// Where the problem was found (0-based character offset), when it was
    /// found at one place.
    pub position: Option<usize>,
    /// What was wrong.
    pub reason: String,
}

impl std::fmt::Display for ExprError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.position {
            Some(p) => write!(
                f,
                "Error parsing query at or near character position {p}: {}",
                self.reason
            ),
            None => write!(f, "Error parsing query: {}", self.reason),
        }
    }
}

impl std::error::Error for ExprError {}

/// A parsed `x-ms-if-tags`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TagCondition(Node);

#[derive(Clone, Debug, PartialEq, Eq)]
enum Node {
    Cmp(Comparison),
    And(Box<Node>, Box<Node>),
    Or(Box<Node>, Box<Node>),
}

impl Node {
    fn matches(&self, tags: &Tags) -> bool {
        match self {
            Node::Cmp(c) => c.matches(tags),
            Node::And(a, b) => a.matches(tags) && b.matches(tags),
            Node::Or(a, b) => a.matches(tags) || b.matches(tags),
        }
    }
}

impl TagCondition {
    /// Parses an `x-ms-if-tags` value.
    ///
    /// # Errors
    /// [`ExprError`] for anything outside the grammar.
    pub fn parse(s: &str) -> Result<TagCondition, ExprError> {
        let mut p = Parser::new(s, Dialect::Condition)?;
        let node = p.or()?;
        p.end()?;
        Ok(TagCondition(node))
    }

    /// Whether a blob with `tags` meets the condition.
    pub fn matches(&self, tags: &Tags) -> bool {
        self.0.matches(tags)
    }
}

/// A parsed Find Blobs by Tags `where`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Filter {
    /// `@container = '…'`, when given.
    pub container: Option<String>,
    /// The comparisons on tags, in the order written (at least one).
    pub terms: Vec<Comparison>,
}

impl Filter {
    /// Parses a `where` value.
    ///
    /// Besides the grammar, refused as the service refuses them: a key
    /// compared twice on the same side (`"a" > '1' AND "a" >= '2'`) or with
    /// `=` and anything else, `@container` twice or with another operator
    /// than `=`, an expression with no tag comparison, and one comparing
    /// more than 10 different tags. A key or value that breaks the tag rules
    /// (length, characters) is refused; a condition (`x-ms-if-tags`) refuses
    /// only the characters, a key or value too long to exist is false.
    ///
    /// # Errors
    /// [`ExprError`].
    pub fn parse(s: &str) -> Result<Filter, ExprError> {
        let mut p = Parser::new(s, Dialect::Filter)?;
        let mut container = None;
        let mut terms: Vec<Comparison> = Vec::new();
        loop {
            let at = p.position();
            match p.comparison()? {
                Term::Container(op, name) => {
                    if op != Op::Eq || container.is_some() {
                        return Err(p.error_at(at, "invalid use of '@container'"));
                    }
                    container = Some(name);
                }
                Term::Tag(c) => {
                    let clash = terms.iter().filter(|t| t.key == c.key).any(|t| {
                        t.op == Op::Eq
                            || c.op == Op::Eq
                            || (t.op.is_lower() && c.op.is_lower())
                            || (t.op.is_upper() && c.op.is_upper())
                    });
                    if clash {
                        return Err(p.error_at(
                            at,
                            "cannot have multiple conditions for a single tag unless they define a range",
                        ));
                    }
                    terms.push(c);
                }
            }
            if !p.keyword("AND") {
                break;
            }
        }
        p.end()?;
        if terms.is_empty() {
            return Err(p.error_at(0, "at least one tag comparison is required"));
        }
        let mut keys: Vec<&str> = terms.iter().map(|t| t.key.as_str()).collect();
        keys.sort_unstable();
        keys.dedup();
        if keys.len() > super::MAX_TAGS {
            return Err(ExprError {
                position: None,
                reason: "there can be at most 10 unique tags in a query".into(),
            });
        }
        Ok(Filter { container, terms })
    }

    /// Whether a blob with `tags` meets every comparison (the container is
    /// the caller's to check).
    pub fn matches(&self, tags: &Tags) -> bool {
        self.terms.iter().all(|t| t.matches(tags))
    }

    /// The comparison an index lookup starts from: the first equality, or
    /// else the first range.
    pub fn driving_term(&self) -> &Comparison {
        self.terms
            .iter()
            .find(|t| t.op == Op::Eq)
            .unwrap_or(&self.terms[0])
    }

    /// The tags of `tags` that the expression names, in the blob's order
    /// (what Find Blobs by Tags returns for each blob).
    pub fn named_tags(&self, tags: &Tags) -> Vec<(String, String)> {
        tags.iter()
            .filter(|(k, _)| self.terms.iter().any(|t| t.key == *k))
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect()
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Dialect {
    Condition,
    Filter,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Token {
    Key(String),
    Container,
    Value(String),
    Op(Op),
    Word(String),
    Open,
    Close,
}

enum Term {
    Tag(Comparison),
    Container(Op, String),
}

struct Parser {
    tokens: Vec<(usize, Token)>,
    next: usize,
    len: usize,
    dialect: Dialect,
}

impl Parser {
    fn new(s: &str, dialect: Dialect) -> Result<Parser, ExprError> {
        let chars: Vec<char> = s.chars().collect();
        let mut tokens = Vec::new();
        let mut i = 0;
        let err = |at: usize, reason: &str| ExprError {
            position: Some(at),
            reason: reason.to_owned(),
        };
        while i < chars.len() {
            let c = chars[i];
            let start = i;
            match c {
                _ if c.is_whitespace() => {
                    i += 1;
                    continue;
                }
                '"' | '\'' => {
                    let close = chars[i + 1..]
                        .iter()
                        .position(|&x| x == c)
                        .ok_or_else(|| err(start, "unterminated quoted string"))?;
                    let text: String = chars[i + 1..i + 1 + close].iter().collect();
                    i += close + 2;
                    tokens.push((
                        start,
                        if c == '"' {
                            Token::Key(text)
                        } else {
                            Token::Value(text)
                        },
                    ));
                }
                '(' | ')' if dialect == Dialect::Condition => {
                    i += 1;
                    tokens.push((start, if c == '(' { Token::Open } else { Token::Close }));
                }
                '=' => {
                    i += 1;
                    tokens.push((start, Token::Op(Op::Eq)));
                }
                '<' | '>' => {
                    let next = chars.get(i + 1).copied();
                    let (op, n) = match (c, next) {
                        ('<', Some('=')) => (Op::Le, 2),
                        ('<', Some('>')) if dialect == Dialect::Condition => (Op::Ne, 2),
                        ('<', _) => (Op::Lt, 1),
                        ('>', Some('=')) => (Op::Ge, 2),
                        _ => (Op::Gt, 1),
                    };
                    i += n;
                    tokens.push((start, Token::Op(op)));
                }
                '@' if dialect == Dialect::Filter => {
                    let word: String = chars[i + 1..]
                        .iter()
                        .take_while(|x| x.is_ascii_alphanumeric() || **x == '_')
                        .collect();
                    if word != "container" {
                        return Err(err(start, &format!("unsupported parameter '@{word}'")));
                    }
                    i += 1 + word.len();
                    tokens.push((start, Token::Container));
                }
                _ if c.is_ascii_alphanumeric() || c == '_' => {
                    let word: String = chars[i..]
                        .iter()
                        .take_while(|x| x.is_ascii_alphanumeric() || **x == '_')
                        .collect();
                    i += word.len();
                    tokens.push((start, Token::Word(word)));
                }
                _ => return Err(err(start, &format!("unexpected '{c}'"))),
            }
        }
        Ok(Parser {
            tokens,
            next: 0,
            len: chars.len(),
            dialect,
        })
    }

    fn position(&self) -> usize {
        self.tokens.get(self.next).map_or(self.len, |(at, _)| *at)
    }

    fn error_at(&self, position: usize, reason: &str) -> ExprError {
        ExprError {
            position: Some(position),
            reason: reason.to_owned(),
        }
    }

    fn unexpected(&self) -> ExprError {
        match self.tokens.get(self.next) {
            Some((at, t)) => self.error_at(*at, &format!("unexpected {}", describe(t))),
            None => self.error_at(self.len, "unexpected end of expression"),
        }
    }

    fn keyword(&mut self, word: &str) -> bool {
        match self.tokens.get(self.next) {
            Some((_, Token::Word(w))) if w.eq_ignore_ascii_case(word) => {
                self.next += 1;
                true
            }
            _ => false,
        }
    }

    fn end(&self) -> Result<(), ExprError> {
        if self.next == self.tokens.len() {
            Ok(())
        } else {
            Err(self.unexpected())
        }
    }

    fn or(&mut self) -> Result<Node, ExprError> {
        let mut left = self.and()?;
        while self.keyword("OR") {
            let right = self.and()?;
            left = Node::Or(Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn and(&mut self) -> Result<Node, ExprError> {
        let mut left = self.primary()?;
        while self.keyword("AND") {
            let right = self.primary()?;
            left = Node::And(Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn primary(&mut self) -> Result<Node, ExprError> {
        if let Some((_, Token::Open)) = self.tokens.get(self.next) {
            self.next += 1;
            let inner = self.or()?;
            match self.tokens.get(self.next) {
                Some((_, Token::Close)) => {
                    self.next += 1;
                    Ok(inner)
                }
                _ => Err(self.unexpected()),
            }
        } else {
            match self.comparison()? {
                Term::Tag(c) => Ok(Node::Cmp(c)),
                Term::Container(..) => unreachable!("the condition dialect has no @container"),
            }
        }
    }

    fn comparison(&mut self) -> Result<Term, ExprError> {
        let key = match self.tokens.get(self.next) {
            Some((_, Token::Key(k))) => Some(k.clone()),
            Some((_, Token::Word(w)))
                if !w.eq_ignore_ascii_case("AND") && !w.eq_ignore_ascii_case("OR") =>
            {
                Some(w.clone())
            }
            Some((_, Token::Container)) => None,
            _ => return Err(self.unexpected()),
        };
        if let Some(k) = &key {
            // A condition may name a key or value longer than a tag can
            // have: it is then simply false (412), as the service answers;
            // a filter refuses it.
            let too_long =
                self.dialect == Dialect::Filter && k.chars().count() > super::MAX_KEY_LEN;
            if k.is_empty() || too_long {
                return Err(self.error_at(
                    self.position(),
                    "the key of a tag must be between 1 and 128 characters in length",
                ));
            }
            if !k.chars().all(super::allowed) {
                return Err(self.error_at(
                    self.position(),
                    "characters other than letters, digits, space and + - . / : = _ are not permitted in tag name or value",
                ));
            }
        }
        self.next += 1;
        let op = match self.tokens.get(self.next) {
            Some((_, Token::Op(op))) => *op,
            _ => return Err(self.unexpected()),
        };
        self.next += 1;
        let value = match self.tokens.get(self.next) {
            Some((_, Token::Value(v))) => v.clone(),
            _ => return Err(self.unexpected()),
        };
        // A container name is checked by the lookup, not by the tag rules.
        if key.is_some()
            && self.dialect == Dialect::Filter
            && value.chars().count() > super::MAX_VALUE_LEN
        {
            return Err(self.error_at(
                self.position(),
                "tag value must be between 0 and 256 characters in length",
            ));
        }
        if key.is_some() && !value.chars().all(super::allowed) {
            return Err(self.error_at(
                self.position(),
                "characters other than letters, digits, space and + - . / : = _ are not permitted in tag name or value",
            ));
        }
        self.next += 1;
        debug_assert!(key.is_some() || self.dialect == Dialect::Filter);
        Ok(match key {
            Some(key) => Term::Tag(Comparison { key, op, value }),
            None => Term::Container(op, value),
        })
    }
}

fn describe(t: &Token) -> String {
    match t {
        Token::Key(k) => format!("'\"{k}\"'"),
        Token::Container => "'@container'".into(),
        Token::Value(v) => format!("''{v}''"),
        Token::Op(op) => format!("'{op:?}'"),
        Token::Word(w) => format!("'{w}'"),
        Token::Open => "'('".into(),
        Token::Close => "')'".into(),
    }
}

#[cfg(test)]
#[path = "expr_tests.rs"]
mod tests;
