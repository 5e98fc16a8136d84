//! The Blob Batch multipart/mixed parser and what the handler reads of each sub-request.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| stowage_server::fuzzing::batch(data));
