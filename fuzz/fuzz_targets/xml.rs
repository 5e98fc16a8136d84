//! The Put Block List, Set Container ACL and Set Blob Service Properties readers.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| stowage_server::fuzzing::xml(data));
