//! Fuzz target: arbitrary bytes through decode, parse and elaboration must give a term or
//! diagnostics, never a panic, a hang or a stack overflow; a term that elaborates must
//! print to text that loads again.
#![no_main]

use libfuzzer_sys::fuzz_target;
use slic_algebra::{front, print, Store};

fuzz_target!(|data: &[u8]| {
    let mut store = Store::new();
    if let Ok(term) = front::load_bytes(&mut store, data) {
        let text = print::print_term(&store, term);
        let again = front::load(&mut store, &text);
        assert!(again.is_ok(), "printed text does not load:\n{text}");
    }
});
