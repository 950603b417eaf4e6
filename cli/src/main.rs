//! The `slic-cas` command.
fn main() {}
