//! Raw bytes from a client connection as an HTTP/1.1 request: connection
//! framing, request head, target, query, operation.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| stowage_server::fuzzing::route(data));
