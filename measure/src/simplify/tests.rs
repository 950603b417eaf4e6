//! Tests of the simplifier: tables of (input program, expected printed output) per
//! rule, and meaning checks against the reference interpreter.
