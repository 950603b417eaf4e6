//! Stack growth for deep recursion, in one place.
//!
//! Terms, conditions, polynomials and parse trees nest as deeply as the user writes them,
//! and every pass over them recurses once per level. Each recursive step runs inside
//! [`grow`], which moves the rest of the recursion to a fresh heap-allocated stack segment
//! when the current stack runs low, so a deep input costs memory, never a stack overflow.
//! The two constants below are the only red-zone numbers in the workspace: a pass that
//! needs stack headroom calls [`grow`] rather than `stacker` directly.

/// Stack that must be left before one more recursion step runs on the current stack. One
/// step of the largest passes (the parser, the simplifier's integrator) takes up to ~20 KiB
/// in unoptimised builds, and a step may recurse a few times before it calls [`grow`]
/// again, so the red zone leaves room for about ten of them.
pub const RED_ZONE: usize = 256 << 10;

/// Size of each extra stack segment: large enough that a long descent allocates few
/// segments, small enough that a shallow one that happens to cross the red zone is cheap.
pub const SEGMENT: usize = 8 << 20;

/// Run `f`, on a new stack segment if less than [`RED_ZONE`] of the current stack is left.
#[inline]
pub fn grow<R>(f: impl FnOnce() -> R) -> R {
    stacker::maybe_grow(RED_ZONE, SEGMENT, f)
}

#[cfg(test)]
mod tests {
    use super::grow;

    /// Recursion far deeper than a test thread's 2 MiB stack allows without growth.
    fn depth(n: u64) -> u64 {
        grow(|| {
            // a frame with some weight, so that the recursion really uses stack
            let pad = std::hint::black_box([n; 64]);
            if n == 0 {
                0
            } else {
                // pad[63] is n: the frame's array is read after the recursive call
                1 + depth(n - 1) + pad[63] - n
            }
        })
    }

    #[test]
    fn deep_recursion_does_not_overflow() {
        assert_eq!(depth(100_000), 100_000);
    }
}
