//! Exact case for metadata names (spec/00-overview.md §8: names "are
//! returned exactly" as first written, in headers and in XML).
//!
//! actix-web lowercases header names when it parses a request and when it
//! writes a response, so the case would be lost both ways. This layer sits
//! between the socket and actix: it frames each direction of the connection
//! itself ([`framer`]), records the `x-ms-meta-*` names of every request head
//! as sent, and rewrites `x-ms-meta-*` names in response heads from a
//! private header the handler adds ([`heads::NAMES_HEADER`]). Bodies pass
//! through untouched. If framing is ever lost on a connection, the layer
//! stops rewriting for the rest of it (names are then lowercase), so bytes
//! are never changed unless their framing is known.

mod framer;
mod heads;
mod io;

pub(crate) use heads::NAMES_HEADER;
pub(crate) use io::{CaseIo, Connection};

/// The local address a connection arrived on (connection data, read by Copy
/// Blob to recognise URLs of this server).
#[derive(Clone, Copy, Debug)]
pub(crate) struct LocalAddr(pub std::net::SocketAddr);
