//! Tests of the elaborator.
