//! Exact case for metadata names (docs/wire/requests.md#metadata: names "are
//! returned exactly" as first written, in headers and in XML).
//!
//! actix-web lowercases header names when it parses a request and when it
//! writes a response, so the case would be lost both ways. This layer sits
//! between the socket and actix:
//!
//! - Requests: it reads the bytes from the client with actix-http's own
//!   HTTP/1 decoder ([`mirror`]), so where a request starts and ends is
//!   decided by one parser, never two, and records the `x-ms-meta-*` names
//!   of each request head as sent. It hands actix a request's bytes only
//!   once the answer to the request before it was written: actix then
//!   decodes requests one at a time, which pipelined requests need (its
//!   encoder takes HEAD-ness and the HTTP version from the request it
//!   decoded last), and the request a handler runs for is always the first
//!   one not yet answered.
//! - Responses: it frames what actix writes ([`framer`]), and rewrites
//!   `x-ms-meta-*` names in each response head from a private header the
//!   handler adds ([`heads::NAMES_HEADER`]), which it always removes.
//!   Bodies pass through untouched.
//!
//! It never stops rewriting on a connection that goes on: bytes actix
//! refuses end the connection in actix, and anything the layer cannot read
//! ends it with an error.

pub(crate) mod check;
mod framer;
mod heads;
mod io;
mod mirror;

pub(crate) use heads::NAMES_HEADER;
pub(crate) use io::{CaseIo, Connection};

/// The local address a connection arrived on (connection data, read by Copy
/// Blob to recognise URLs of this server).
#[derive(Clone, Copy, Debug)]
pub(crate) struct LocalAddr(pub std::net::SocketAddr);
