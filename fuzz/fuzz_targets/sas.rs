//! SAS token parsing and verification, with a re-signed round trip.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| stowage_server::fuzzing::sas(data));
