//! Shared Key and Shared Key Lite canonicalisation and verification of an arbitrary request.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| stowage_server::fuzzing::shared_key(data));
