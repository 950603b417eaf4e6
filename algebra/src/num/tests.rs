//! Tests of `Rational`: arithmetic tables on both representations (with the overflow
//! boundaries), roots and rational powers, and a proptest against `BigRational` as the
//! oracle.

use super::*;
use num_traits::Zero;
use proptest::prelude::*;
use std::hash::BuildHasher;

fn h(q: &Rational) -> u64 {
    rustc_hash::FxBuildHasher.hash_one(q)
}

/// Parses `"n"` or `"n/d"` with arbitrarily large parts, through `BigRational` (the oracle).
fn q(text: &str) -> Rational {
    let big = |s: &str| s.trim().parse::<BigInt>().unwrap();
    match text.split_once('/') {
        Some((n, d)) => Rational::new(BigRational::new(big(n), big(d))),
        None => Rational::from_bigint(big(text)),
    }
}

/// The canonical-representation invariant: small exactly when the parts fit.
fn canonical(x: &Rational) -> bool {
    let b = x.to_big();
    let fits = b.numer().to_i64().is_some_and(|n| n != i64::MIN) && b.denom().to_i64().is_some();
    fits == x.is_small()
}

#[test]
fn equal_values_hash_equal_even_when_built_unreduced() {
    let a = Rational::new(BigRational::new_raw(BigInt::from(2), BigInt::from(4)));
    let b = Rational::new(BigRational::new(BigInt::from(1), BigInt::from(2)));
    let c = Rational::new(BigRational::new_raw(BigInt::from(-3), BigInt::from(-6)));
    assert_eq!(a, b);
    assert_eq!(h(&a), h(&b));
    assert_eq!(h(&b), h(&c));
    assert_ne!(h(&b), h(&Rational::from_integer(2)));
}

const MAX: &str = "9223372036854775807"; // 2^63 - 1
const P62: &str = "4611686018427387904"; // 2^62

#[test]
fn arithmetic_table() {
    #[rustfmt::skip]
    let rows: &[(&str, &str, char, &str)] = &[
        ("1/2", "1/3", '+', "5/6"),
        ("1/2", "1/2", '+', "1"),
        ("-1/2", "1/2", '+', "0"),
        ("1/6", "1/3", '+', "1/2"),
        ("3", "4", '*', "12"),
        ("2/3", "3/4", '*', "1/2"),
        ("-2/3", "9/4", '*', "-3/2"),
        ("0", "5/7", '*', "0"),
        ("5/7", "0", '-', "5/7"),
        ("1/4", "3/4", '-', "-1/2"),
        ("7", "7", '/', "1"),
        ("-3", "6", '/', "-1/2"),
        (MAX, "1", '+', "9223372036854775808"),
        ("-9223372036854775807", "-1", '+', "-9223372036854775808"),
        ("-9223372036854775807", "-2", '+', "-9223372036854775809"),
        ("9223372036854775808", "-1", '+', MAX),
        (P62, P62, '*', "21267647932558653966460912964485513216"),
        (P62, "2", '*', "9223372036854775808"),
        ("9223372036854775808", "1/2", '*', P62),
        (MAX, MAX, '-', "0"),
        ("1/9223372036854775807", "1/9223372036854775807", '+', "2/9223372036854775807"),
        ("1/9223372036854775807", "1/9223372036854775806", '*', "1/85070591730234615838173535747377725442"),
        ("1/3037000499", "1/3037000507", '+', "6074001006/9223372055222252993"),
        ("85070591730234615838173535747377725442", "9223372036854775806", '/', MAX),
        ("1/4611686018427387904", "4611686018427387904", '*', "1"),
        ("-9223372036854775808", "-1", '*', "9223372036854775808"),
        ("-9223372036854775808", "1", '*', "-9223372036854775808"),
    ];
    for &(a, b, op, want) in rows {
        let (x, y) = (q(a), q(b));
        let got = match op {
            '+' => &x + &y,
            '-' => &x - &y,
            '*' => &x * &y,
            '/' => x.checked_div(&y).unwrap(),
            _ => unreachable!(),
        };
        let want = q(want);
        assert_eq!(got, want, "{a} {op} {b}");
        assert_eq!(h(&got), h(&want), "{a} {op} {b}: hash");
        assert!(canonical(&got), "{a} {op} {b}: representation");
    }
}

#[test]
fn representation_boundaries() {
    #[rustfmt::skip]
    let rows: &[(&str, bool)] = &[
        ("0", true), ("9223372036854775807", true), ("-9223372036854775807", true),
        ("-9223372036854775808", false), ("9223372036854775808", false),
        ("1/9223372036854775807", true), ("1/9223372036854775808", false),
        ("-1/9223372036854775807", true),
    ];
    for &(text, small) in rows {
        let x = q(text);
        assert_eq!(x.is_small(), small, "{text}");
        assert!(canonical(&-&x) && canonical(&x.abs()), "{text}");
        assert_eq!(x.to_string(), text);
    }
    assert_eq!(Rational::from_integer(i64::MIN), q("-9223372036854775808"));
    assert!(!Rational::from_integer(i64::MIN).is_small());
    assert_eq!(Rational::from_integer(i64::MIN).to_i64(), Some(i64::MIN));
}

#[test]
fn unary_table() {
    #[rustfmt::skip]
    let rows: &[(&str, &str, &str, &str, &str, &str)] = &[
        // x,      floor,  ceil,  abs,    signum, recip
        ("7/2",    "3",    "4",   "7/2",  "1",    "2/7"),
        ("-7/2",   "-4",   "-3",  "7/2",  "-1",   "-2/7"),
        ("5",      "5",    "5",   "5",    "1",    "1/5"),
        ("-1/3",   "-1",   "0",   "1/3",  "-1",   "-3"),
        ("0",      "0",    "0",   "0",    "0",    "none"),
        ("-9223372036854775808", "-9223372036854775808", "-9223372036854775808",
            "9223372036854775808", "-1", "-1/9223372036854775808"),
        ("100000000000000000001/10", "10000000000000000000", "10000000000000000001",
            "100000000000000000001/10", "1", "10/100000000000000000001"),
        ("-100000000000000000001/10", "-10000000000000000001", "-10000000000000000000",
            "100000000000000000001/10", "-1", "-10/100000000000000000001"),
    ];
    for &(x, fl, ce, ab, sg, re) in rows {
        let v = q(x);
        assert_eq!(v.floor(), q(fl), "floor {x}");
        assert_eq!(v.ceil(), q(ce), "ceil {x}");
        assert_eq!(v.abs(), q(ab), "abs {x}");
        assert_eq!(v.signum(), q(sg), "signum {x}");
        assert_eq!(
            v.recip().map(|r| r.to_string()).unwrap_or("none".into()),
            re,
            "recip {x}"
        );
        assert_eq!(v.is_positive(), q(sg).is_one(), "is_positive {x}");
    }
}

#[test]
fn gcd_lcm_table() {
    #[rustfmt::skip]
    let rows: &[(&str, &str, &str, &str)] = &[
        ("12", "18", "6", "36"),
        ("-12", "18", "6", "36"),
        ("0", "5", "5", "0"),
        ("0", "0", "0", "0"),
        ("1/2", "1/3", "1/6", "1"),
        ("2/3", "4/9", "2/9", "4/3"),
        ("9223372036854775807", "9223372036854775807", MAX, MAX),
        ("18446744073709551616", "12", "4", "55340232221128654848"),
    ];
    for &(a, b, g, l) in rows {
        assert_eq!(q(a).gcd(&q(b)), q(g), "gcd({a}, {b})");
        assert_eq!(q(a).lcm(&q(b)), q(l), "lcm({a}, {b})");
    }
    assert_eq!(gcd_u64(0, 0), 0);
    assert_eq!(gcd_u64(1 << 40, 3 << 20), 1 << 20);
}

#[test]
fn pow_and_conversions() {
    #[rustfmt::skip]
    let rows: &[(&str, i64, &str)] = &[
        ("2", 10, "1024"), ("2", 63, "9223372036854775808"), ("-2", 63, "-9223372036854775808"),
        ("2/3", -2, "9/4"), ("-1", 1_000_000_001, "-1"), ("1", i64::MIN, "1"),
        ("0", 0, "1"), ("0", 5, "0"), ("7", 0, "1"), ("-1/2", 3, "-1/8"),
    ];
    for &(x, n, want) in rows {
        assert_eq!(q(x).pow(n), Some(q(want)), "{x}^{n}");
    }
    assert_eq!(q("0").pow(-1), None);
    assert_eq!(q("2").pow(1 << 40), None, "over MAX_POW_BITS");
    assert_eq!(q("3/4").to_f64(), 0.75);
    assert_eq!(q("1/3").to_f64(), 1.0 / 3.0);
    assert_eq!(q("9223372036854775807").to_f64(), 9.223372036854776e18);
    assert_eq!(q("10").pow(400).unwrap().to_f64(), f64::INFINITY);
    assert_eq!(q("-10").pow(401).unwrap().to_f64(), f64::NEG_INFINITY);
    assert_eq!(q("10").pow(-400).unwrap().to_f64(), 0.0);
    assert_eq!(q("-3/4").to_small(), Some((-3, 4)));
    assert_eq!(q("3/4").to_i64(), None);
    assert_eq!(q("-3/4").numer(), BigInt::from(-3));
    assert_eq!(q("-3/4").denom(), BigInt::from(4));
    assert_eq!(Rational::ratio(6, -4), Some(q("-3/2")));
    assert_eq!(Rational::ratio(1, 0), None);
    assert_eq!(format!("{:?}", q("-3/4")), "-3/4");
}

#[test]
fn order_across_representations() {
    let mut xs: Vec<Rational> = [
        "18446744073709551616",
        "-1/2",
        "9223372036854775807",
        "-9223372036854775808",
        "1/9223372036854775808",
        "0",
        "1/9223372036854775807",
        "9223372036854775808",
    ]
    .iter()
    .map(|s| q(s))
    .collect();
    xs.sort();
    let sorted: Vec<String> = xs.iter().map(|x| x.to_string()).collect();
    assert_eq!(
        sorted,
        [
            "-9223372036854775808",
            "-1/2",
            "0",
            "1/9223372036854775808",
            "1/9223372036854775807",
            "9223372036854775807",
            "9223372036854775808",
            "18446744073709551616",
        ]
    );
}

/// `root(x, n)` gives `(c, r)`; `None` written as `("none", "")`.
#[test]
fn root_table() {
    #[rustfmt::skip]
    let rows: &[(&str, u32, &str, &str)] = &[
        ("8", 2, "2", "2"),
        ("4", 2, "2", "1"),
        ("1/8", 2, "1/4", "2"),
        ("-27", 3, "-3", "1"),
        ("2", 2, "1", "2"),
        ("0", 2, "0", "1"),
        ("1", 5, "1", "1"),
        ("12", 2, "2", "3"),
        ("72", 2, "6", "2"),
        ("72", 3, "2", "9"),
        ("1/4", 3, "1/2", "2"),
        ("9/8", 2, "3/4", "2"),
        ("-1/16", 3, "-1/4", "4"),
        ("-4", 2, "none", ""),
        ("7", 0, "none", ""),
        ("5/3", 1, "5/3", "1"),
        ("1000000", 6, "10", "1"),
        ("999966000289", 2, "999983", "1"),            // 999983^2, the largest prime < 10^6
        ("999985999949", 2, "1", "999985999949"),      // 999983 * 1000003: two big primes
        ("1000006000009", 2, "1000003", "1"),          // 1000003^2: a prime above the limit
        ("1000009000027000027", 3, "1000003", "1"),    // 1000003^3
        ("18446744073709551616", 2, "4294967296", "1"),// 2^64
        ("340282366920938463463374607431768211456", 2, "18446744073709551616", "1"), // 2^128
        ("680564733841876926926749214863536422912", 2, "18446744073709551616", "2"), // 2^129
        ("1/340282366920938463463374607431768211457", 2,
            "1/340282366920938463463374607431768211457", "340282366920938463463374607431768211457"),
        ("3/1000003", 3, "1/1000003", "3000018000027"),
        ("1000036000099/4", 2, "1/2", "1000036000099"),  // 1000003 * 1000033: complete
    ];
    for &(x, n, c, r) in rows {
        let got = q(x).root(n);
        match got {
            None => assert_eq!(c, "none", "root({x}, {n})"),
            Some((gc, gr)) => {
                assert_eq!(
                    (gc.to_string(), gr.to_string()),
                    (c.to_string(), r.to_string()),
                    "root({x}, {n})"
                );
                // c^n * r == x exactly
                assert_eq!(
                    gc.pow(i64::from(n)).unwrap() * &gr,
                    q(x),
                    "root({x}, {n}) reassembles"
                );
            }
        }
    }
}

#[test]
fn huge_roots_stop_quickly() {
    // (2^521 - 1) is prime: trial division gives up at its limit, the answer stays exact
    let m: BigInt = BigInt::from(2).pow(521u32) - 1;
    let x = Rational::from_bigint(m.clone() * &m * 9);
    let (c, r) = x.root(2).unwrap();
    assert_eq!(c, Rational::from_bigint(m * 3));
    assert!(r.is_one());
    let y = Rational::from_bigint(BigInt::from(3).pow(4000u32) + 1);
    let (c, r) = y.root(2).unwrap();
    assert_eq!(c.pow(2).unwrap() * r, y);
}

/// `x^e` as `coeff * radicand^(1/index)`.
#[test]
fn pow_rational_table() {
    #[rustfmt::skip]
    let rows: &[(&str, &str, &str, &str, u32)] = &[
        ("8", "1/2", "2", "2", 2),
        ("4", "1/2", "2", "1", 1),
        ("4", "3/4", "2", "2", 2),
        ("-8", "2/3", "4", "1", 1),
        ("-8", "1/3", "-2", "1", 1),
        ("2", "-1/2", "1/2", "2", 2),
        ("1/8", "1/2", "1/4", "2", 2),
        ("2", "5/2", "4", "2", 2),
        ("16", "1/8", "1", "2", 2),
        ("64", "5/6", "32", "1", 1),
        ("3", "2", "9", "1", 1),
        ("0", "1/2", "0", "1", 1),
        ("2", "2/3", "1", "4", 3),
        ("27/4", "-3/2", "8/243", "3", 2),
    ];
    for &(x, e, c, r, n) in rows {
        let got = q(x)
            .pow_rational(&q(e))
            .unwrap_or_else(|| panic!("{x}^{e}"));
        assert_eq!(
            got,
            Radical {
                coeff: q(c),
                radicand: q(r),
                index: n
            },
            "{x}^({e})"
        );
        let want = q(x).to_f64().abs().powf(q(e).to_f64()) * got.coeff.signum().to_f64();
        assert!(
            (got.to_f64() - want).abs() <= 1e-12 * want.abs().max(1.0),
            "{x}^({e}) numerically"
        );
    }
    for (x, e) in [("-4", "1/2"), ("0", "-1/2"), ("2", "1/4294967296")] {
        assert_eq!(q(x).pow_rational(&q(e)), None, "{x}^({e})");
    }
    assert_eq!(super::root::extract_for_tests(720, 2), (12, 5));
}

/// Small and big values, biased to the overflow boundaries.
fn arb_rational() -> impl Strategy<Value = Rational> {
    let part = prop_oneof![
        -20i64..20,
        any::<i64>(),
        (0u32..64).prop_map(|k| 1i64.wrapping_shl(k).wrapping_sub(1)),
        Just(i64::MAX),
        Just(i64::MIN),
        Just(i64::MIN + 1),
    ];
    let big = (part.clone(), 0u32..3, part.clone())
        .prop_map(|(a, k, b)| BigInt::from(a) * BigInt::from(i64::MAX).pow(k) + BigInt::from(b));
    (big.clone(), big).prop_filter_map("zero denominator", |(n, d)| {
        (!d.is_zero()).then(|| Rational::new(BigRational::new(n, d)))
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn fast_path_agrees_with_big_rational(a in arb_rational(), b in arb_rational()) {
        let (x, y) = (a.to_big(), b.to_big());
        let cases = [
            (&a + &b, &x + &y),
            (&a - &b, &x - &y),
            (&a * &b, &x * &y),
            (-&a, -&x),
        ];
        for (got, want) in cases {
            prop_assert!(canonical(&got));
            prop_assert_eq!(&got, &Rational::new(want.clone()));
            prop_assert_eq!(h(&got), h(&Rational::new(want)));
        }
        prop_assert_eq!(a.cmp(&b), x.cmp(&y));
        prop_assert_eq!(a == b, x == y);
        prop_assert_eq!(a.floor(), Rational::new(x.floor()));
        prop_assert_eq!(a.to_f64(), num_traits::ToPrimitive::to_f64(&x).unwrap_or(a.to_f64()));
        if !b.is_zero() {
            prop_assert_eq!(a.checked_div(&b).unwrap(), Rational::new(&x / &y));
        }
        let mut acc = a.clone();
        acc += &b;
        acc *= &b;
        acc -= &a;
        prop_assert_eq!(acc, Rational::new((&x + &y) * &y - &x));
    }

    #[test]
    fn ring_axioms(a in arb_rational(), b in arb_rational(), c in arb_rational()) {
        prop_assert_eq!(&a + &b, &b + &a);
        prop_assert_eq!(&a * &b, &b * &a);
        prop_assert_eq!(&(&a + &b) + &c, &a + &(&b + &c));
        prop_assert_eq!(&(&a * &b) * &c, &a * &(&b * &c));
        prop_assert_eq!(&a * &(&b + &c), &(&a * &b) + &(&a * &c));
        prop_assert_eq!(&a + &Rational::zero(), a.clone());
        prop_assert_eq!(&a * &Rational::one(), a.clone());
        prop_assert!((&a + &(-&a)).is_zero());
        if let Some(r) = a.recip() {
            prop_assert!((&a * &r).is_one());
        }
    }

    #[test]
    fn gcd_divides_both(a in arb_rational(), b in arb_rational()) {
        let g = a.gcd(&b);
        if g.is_zero() {
            prop_assert!(a.is_zero() && b.is_zero());
        } else {
            prop_assert!(a.checked_div(&g).unwrap().is_integer());
            prop_assert!(b.checked_div(&g).unwrap().is_integer());
            prop_assert!(!g.is_negative());
        }
    }

    #[test]
    fn roots_reassemble(a in arb_rational(), n in 1u32..6) {
        if let Some((c, r)) = a.root(n) {
            prop_assert!(r.is_integer() && r.is_positive());
            prop_assert_eq!(c.pow(i64::from(n)).unwrap() * r, a);
        } else {
            prop_assert!(a.is_negative() && n % 2 == 0);
        }
    }
}
