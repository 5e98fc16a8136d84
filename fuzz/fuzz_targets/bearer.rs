//! Bearer tokens: the claim checks, and the challenge header of a refusal.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| stowage_server::fuzzing::bearer(data));
