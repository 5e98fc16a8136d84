//! Differential: the same bytes, split at read boundaries the first 8
//! bytes seed, through the connection layer and on to actix-http's
//! decoder; both must see the same requests.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| stowage_server::fuzzing::connection(data));
