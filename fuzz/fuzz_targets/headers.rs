//! Request header lines through every typed header reader: conditions,
//! range, metadata, MD5, lease id, dates.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| stowage_server::fuzzing::headers(data));
