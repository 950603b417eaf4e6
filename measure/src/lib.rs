//! `slic-measure`: the meaning of measure terms.
