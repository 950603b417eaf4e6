//! Compiled kernels on the corpus (issue 12): every corpus program the loop IR can express
//! (the programs of `lowering.rs`: `corpus/cases/`, `simplify/`, `examples/`, `lowering/`)
//! is lowered with every pass, emitted as C and as Rust, compiled once per target
//! (unspecialised, warnings as errors) and called on every argument tuple of the lowering
//! test, plus extreme ones made from the example: prob arguments scaled by e^-800 (they
//! underflow in linear space), nat scalars at 0 (zero counts), arrays emptied. Against
//! the IR's interpreter: values and exact distributions equal value by value to 1e-9
//! relative (probs by their logarithms), no NaN or infinity where it gives a finite
//! number, and errors of the same kind (a measure with continuous draws is "not finite"
//! on both sides). Measures with continuous draws are also sampled by both from the same
//! seed and agree sample by sample (but for rare shifts of the stream; see `SAMPLES`). A
//! few array programs are also specialised on their example (sizes
//! and scalars baked in) and must agree too.
//!
//! Compilation dominates the time: identical lowered programs are compiled once, the
//! libraries are cached in a directory of this run, and programs are compiled on two
//! threads.

use slic_algebra::{front, Store};
use slic_codegen::{
    enumerable, lower_program, run, run_measure, CompileOptions, Compiled, KernelError, Mode,
    Outcome, Passes, Program, RunError, Specialise, Target, Val,
};
use slic_suite::cases::{argument_tuples, lowering_programs, short, to_val, Kind, LoweringProgram};
use slic_suite::with_big_stack;

const MAX_PATHS: u64 = 1 << 16;

/// An argument in a form threads can share (`Val` holds `Rc`s).
#[derive(Clone, Debug)]
enum Arg {
    Nat(u64),
    Int(i64),
    Real(f64),
    Prob(f64),
    Bool(bool),
    Array(Vec<Arg>),
}

fn to_arg(v: &Val) -> Option<Arg> {
    Some(match v {
        Val::Nat(n) => Arg::Nat(*n),
        Val::Int(n) => Arg::Int(*n),
        Val::Real(x) => Arg::Real(*x),
        Val::Prob(l) => Arg::Prob(*l),
        Val::Bool(b) => Arg::Bool(*b),
        Val::Array(xs) => Arg::Array(xs.iter().map(to_arg).collect::<Option<_>>()?),
        _ => return None,
    })
}

fn arg_val(a: &Arg) -> Val {
    match a {
        Arg::Nat(n) => Val::Nat(*n),
        Arg::Int(n) => Val::Int(*n),
        Arg::Real(x) => Val::Real(*x),
        Arg::Prob(l) => Val::Prob(*l),
        Arg::Bool(b) => Val::Bool(*b),
        Arg::Array(xs) => Val::array(xs.iter().map(arg_val).collect()),
    }
}

fn vals(args: &[Arg]) -> Vec<Val> {
    args.iter().map(arg_val).collect()
}

/// The extreme variants of a tuple: probs underflowing, nat scalars 0, arrays empty.
fn extremes(args: &[Val]) -> Vec<Vec<Val>> {
    fn underflow(v: &Val) -> Val {
        match v {
            Val::Prob(l) => Val::Prob(l - 800.0),
            Val::Array(xs) => Val::array(xs.iter().map(underflow).collect()),
            v => v.clone(),
        }
    }
    let zero = |v: &Val| match v {
        Val::Nat(_) => Val::Nat(0),
        v => v.clone(),
    };
    let empty = |v: &Val| match v {
        Val::Array(_) => Val::array(Vec::new()),
        v => v.clone(),
    };
    vec![
        args.iter().map(underflow).collect(),
        args.iter().map(zero).collect(),
        args.iter().map(empty).collect(),
    ]
}

/// Reals to 1e-9 of the larger; probs by their logarithms (1e-9, relative beyond 1);
/// the rest exactly. A NaN or infinity matches only itself.
fn close(a: &Val, b: &Val) -> bool {
    let real = |x: f64, y: f64| {
        x == y
            || (x.is_nan() && y.is_nan())
            || (x.is_finite() && y.is_finite() && (x - y).abs() <= 1e-9 * x.abs().max(y.abs()))
    };
    let log = |x: f64, y: f64| {
        x == y
            || (x.is_nan() && y.is_nan())
            || (x.is_finite()
                && y.is_finite()
                && (x - y).abs() <= 1e-9 * x.abs().max(y.abs()).max(1.0))
    };
    match (a, b) {
        (Val::Real(x), Val::Real(y)) => real(*x, *y),
        (Val::Prob(x), Val::Prob(y)) => log(*x, *y),
        (Val::Array(xs), Val::Array(ys)) => {
            xs.len() == ys.len() && xs.iter().zip(ys.iter()).all(|(x, y)| close(x, y))
        }
        (Val::Pair(p), Val::Pair(q)) => close(&p.0, &q.0) && close(&p.1, &q.1),
        _ => a == b,
    }
}

/// The kernel's answer on `args` against the interpreter's; `Err` says what differs.
fn agree(p: &Program, k: &Compiled, args: &[Val]) -> Result<(), String> {
    let kind = |a: &RunError, b: &KernelError| match b {
        KernelError::Run(b) if std::mem::discriminant(a) == std::mem::discriminant(b) => Ok(()),
        b => Err(format!("the interpreter fails ({a}), the kernel: {b}")),
    };
    if !p.measure {
        return match (run(p, args), k.run(args)) {
            (Ok((a, _)), Ok(b)) if close(&a, &b) => Ok(()),
            (Ok((a, _)), Ok(b)) => Err(format!("value {b:?}, the interpreter's {a:?}")),
            (Err(a), Err(b)) => kind(&a, &b),
            (Ok((a, _)), Err(b)) => Err(format!(
                "the kernel fails ({b}), the interpreter gives {a:?}"
            )),
            (Err(a), Ok(b)) => Err(format!(
                "the kernel gives {b:?}, the interpreter fails ({a})"
            )),
        };
    }
    match (
        run_measure(
            p,
            args,
            Mode::Exact {
                max_paths: MAX_PATHS,
            },
        ),
        k.enumerate(args, MAX_PATHS),
    ) {
        (Ok(Outcome::Exact(a)), Ok(b)) => {
            if a.weights.len() != b.weights.len() || a.paths != b.paths {
                return Err(format!(
                    "{} values on {} paths, the interpreter's {} on {}",
                    b.weights.len(),
                    b.paths,
                    a.weights.len(),
                    a.paths
                ));
            }
            for ((va, la), (vb, lb)) in a.weights.iter().zip(&b.weights) {
                if !close(va, vb) || !close(&Val::Prob(*la), &Val::Prob(*lb)) {
                    return Err(format!(
                        "{vb:?} with ln weight {lb}, the interpreter's {va:?} with {la}"
                    ));
                }
            }
            Ok(())
        }
        (Ok(Outcome::Exact(_)), Err(b)) => {
            Err(format!("the kernel fails ({b}), the interpreter does not"))
        }
        (Ok(_), _) => Err("the interpreter did not enumerate".into()),
        (Err(a), Err(b)) => kind(&a, &b),
        (Err(a), Ok(_)) => Err(format!(
            "the kernel enumerates, the interpreter fails ({a})"
        )),
    }
}

/// How many runs a sampled measure is compared on, and the share of them that must agree
/// sample by sample (the kernel's `ln`, `exp` and `cos` may differ from the
/// interpreter's libm in the last bit, which can flip a rejection step and shift the
/// stream after it; neither side is wrong then, so a few disagreements are tolerated).
const SAMPLES: usize = 40;

/// The kernel's samples against the interpreter's from the same seed: value by value to
/// 1e-6, nearly all of them; errors of the same kind.
fn agree_sampled(p: &Program, k: &Compiled, args: &[Val], seed: u64) -> Result<(), String> {
    let a = run_measure(p, args, Mode::Sample { n: SAMPLES, seed });
    let b = k.sample(args, SAMPLES, seed);
    let (a, b) = match (a, b) {
        (Ok(Outcome::Sampled(a)), Ok(b)) => (a, b),
        (Err(a), Err(KernelError::Run(b)))
            if std::mem::discriminant(&a) == std::mem::discriminant(&b) =>
        {
            return Ok(())
        }
        (a, b) => return Err(format!("sampling: the interpreter {a:?}, the kernel {b:?}")),
    };
    let near = near_val;
    let same = a
        .samples
        .iter()
        .zip(&b.samples)
        .filter(|(x, y)| {
            let v = match (&x.value, &y.value) {
                (Some(u), Some(w)) => near(u, w),
                (None, None) => true,
                _ => false,
            };
            v && near(&Val::Prob(x.ln_w), &Val::Prob(y.ln_w))
        })
        .count();
    if b.samples.len() != SAMPLES || same * 20 < SAMPLES * 19 {
        return Err(format!(
            "{same} of {SAMPLES} samples agree: {:?} against the interpreter's {:?}",
            &b.samples[..b.samples.len().min(3)],
            &a.samples[..3.min(a.samples.len())]
        ));
    }
    Ok(())
}

/// Values equal to 1e-6 (relative beyond 1), componentwise; NaN matches NaN.
fn near_val(x: &Val, y: &Val) -> bool {
    match (x, y) {
        (Val::Real(x), Val::Real(y)) | (Val::Prob(x), Val::Prob(y)) => {
            x == y
                || (x.is_nan() && y.is_nan())
                || (x - y).abs() <= 1e-6 * x.abs().max(y.abs()).max(1.0)
        }
        (Val::Array(xs), Val::Array(ys)) => {
            xs.len() == ys.len() && xs.iter().zip(ys.iter()).all(|(x, y)| near_val(x, y))
        }
        (Val::Pair(p), Val::Pair(q)) => near_val(&p.0, &q.0) && near_val(&p.1, &q.1),
        _ => x == y,
    }
}

/// One lowered corpus program and its argument tuples.
struct Case {
    name: String,
    program: Program,
    tuples: Vec<Vec<Arg>>,
}

fn cases() -> (Vec<Case>, Vec<String>) {
    let mut out: Vec<Case> = Vec::new();
    let mut skipped = Vec::new();
    for LoweringProgram {
        path,
        headers,
        kind,
    } in lowering_programs()
    {
        let name = path.to_string_lossy().into_owned();
        let (Ok(text), Ok(head)) = (
            std::fs::read_to_string(&path),
            std::fs::read_to_string(&headers),
        ) else {
            panic!("{name}: cannot read");
        };
        let mut store = Store::new();
        let t = front::load(&mut store, &text).unwrap_or_else(|_| panic!("{name}: does not load"));
        let mut tuples = argument_tuples(&store, t, &headers, &head, kind)
            .unwrap_or_else(|e| panic!("{name}: arguments: {e}"))
            .tuples;
        if kind == Kind::Scalar {
            tuples.truncate(2);
        }
        let program = match lower_program(&mut store, t, Passes::default()) {
            Ok(l) => l.program,
            Err(e) => {
                skipped.push(format!("{}: {e}", short(&path)));
                continue;
            }
        };
        let mut vals: Vec<Vec<Val>> = tuples
            .iter()
            .filter_map(|args| args.iter().map(to_val).collect::<Option<Vec<_>>>())
            .collect();
        if let Some(first) = vals.first().cloned() {
            vals.extend(extremes(&first));
        }
        let vals: Vec<Vec<Arg>> = vals
            .iter()
            .filter_map(|args| args.iter().map(to_arg).collect::<Option<Vec<_>>>())
            .collect();
        // one kernel per distinct program: its tuples join the first one's
        let text = program.to_string();
        match out.iter_mut().find(|c| c.program.to_string() == text) {
            Some(c) => c.tuples.extend(vals),
            None => out.push(Case {
                name: short(&path),
                program,
                tuples: vals,
            }),
        }
    }
    (out, skipped)
}

fn options(dir: &str) -> CompileOptions {
    CompileOptions {
        cache_dir: Some(
            std::env::temp_dir().join(format!("slic-kernels-{}-{dir}", std::process::id())),
        ),
        deny_warnings: true,
        ..CompileOptions::default()
    }
}

/// Removes a test's kernel cache (hundreds of megabytes of libraries for the Rust
/// target), so that runs do not fill the machine's temporary directory.
fn remove_cache(opts: &CompileOptions) {
    if let Some(dir) = &opts.cache_dir {
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// Each case compiled for `target` and checked on all its tuples; failures as text.
fn check_target(cases: &[Case], target: Target, threads: usize) -> (usize, Vec<String>) {
    let opts = options(target.name());
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results = std::sync::Mutex::new((0usize, Vec::new()));
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(c) = cases.get(i) else { break };
                let mut local = (0usize, Vec::new());
                match Compiled::build(&c.program, target, &Specialise::default(), None, &opts) {
                    Err(KernelError::Emit(e)) => {
                        local.1.push(format!("{} ({target:?}): {e}", c.name))
                    }
                    Err(e) => local
                        .1
                        .push(format!("{} ({target:?}): {e}\n{}", c.name, c.program)),
                    Ok(k) => {
                        for (seed, args) in c.tuples.iter().enumerate() {
                            let args = vals(args);
                            let sampled = c.program.measure && !enumerable(&c.program);
                            let r = agree(&c.program, &k, &args).and_then(|()| {
                                if sampled {
                                    agree_sampled(&c.program, &k, &args, seed as u64)
                                } else {
                                    Ok(())
                                }
                            });
                            match r {
                                Ok(()) => local.0 += 1,
                                Err(e) => local.1.push(format!(
                                    "{} ({target:?}) on {args:?}: {e}\n{}",
                                    c.name, c.program
                                )),
                            }
                        }
                    }
                }
                if let Ok(mut r) = results.lock() {
                    r.0 += local.0;
                    r.1.extend(local.1);
                }
            });
        }
    });
    remove_cache(&opts);
    results.into_inner().unwrap_or_default()
}

fn check_all(target: Target) {
    let (cases, skipped) = with_big_stack(cases);
    eprintln!(
        "not expressible in the loop IR ({}):\n{}",
        skipped.len(),
        skipped.join("\n")
    );
    let started = std::time::Instant::now();
    let (agreed, failures) = check_target(&cases, target, 2);
    eprintln!(
        "{target:?}: {} programs, {agreed} argument tuples agree, {:.1} s",
        cases.len(),
        started.elapsed().as_secs_f64()
    );
    assert!(
        failures.is_empty(),
        "{} failures:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
    assert!(cases.len() >= 60, "only {} programs", cases.len());
    assert!(agreed >= 300, "only {agreed} comparisons");
}

#[test]
fn c_kernels_agree_with_the_interpreter_on_the_corpus() {
    check_all(Target::C);
}

#[test]
fn rust_kernels_agree_with_the_interpreter_on_the_corpus() {
    check_all(Target::Rust);
}

/// A few array programs specialised on their example (sizes and scalars baked in).
#[test]
fn specialised_kernels_agree_on_their_data() {
    let (cases, _) = with_big_stack(cases);
    let mut done = 0;
    for c in cases
        .iter()
        .filter(|c| c.name.contains("cases/1") || c.name.contains("cases/2"))
    {
        let Some(args) = c.tuples.first().map(|a| vals(a)) else {
            continue;
        };
        if !args.iter().any(|a| matches!(a, Val::Array(_))) {
            continue;
        }
        for target in [Target::C, Target::Rust] {
            let spec = Specialise::all(args.len());
            let k = Compiled::build(&c.program, target, &spec, Some(&args), &options("spec"))
                .unwrap_or_else(|e| panic!("{} ({target:?}): {e}", c.name));
            if let Err(e) = agree(&c.program, &k, &args) {
                panic!("{} specialised ({target:?}): {e}", c.name);
            }
        }
        done += 1;
        if done == 3 {
            break;
        }
    }
    remove_cache(&options("spec"));
    assert_eq!(done, 3, "fewer than 3 array programs to specialise");
}

/// A count table known to be large is stored as 32-bit counts (`emit/safe.rs`): the
/// Naive Bayes update specialised on 2 topics and 2,200 words (a topic-by-word table of
/// 4,398 counts over 400 tokens) agrees with the interpreter on both targets, and the C
/// source the cache keeps shows the narrowed table, so this test runs that code.
#[test]
fn narrowed_count_tables_agree() {
    let path = slic_suite::root().join("corpus/cases/19-naive-bayes-gibbs.simplified.hk");
    let text = std::fs::read_to_string(&path).expect("corpus file");
    let p = with_big_stack(move || slic_suite::lowered(&text).0);
    let (k, v, d, n) = (2u64, 2200u64, 30u64, 400u64);
    let probs = |m: u64, x: f64| Val::array((0..m).map(|_| Val::prob(x)).collect());
    let nats = |xs: Vec<u64>| Val::array(xs.into_iter().map(Val::Nat).collect());
    let args = vec![
        probs(k, 1.0),
        probs(v, 0.1),
        nats((0..d).map(|i| i % k).collect()),
        nats((0..n).map(|i| (i * 37 + i / 3) % v).collect()),
        nats((0..n).map(|i| i * d / n).collect()),
        Val::Nat(d / 2),
    ];
    let opts = options("narrow");
    remove_cache(&opts);
    for target in [Target::C, Target::Rust] {
        let spec = Specialise::all(args.len());
        let kernel = Compiled::build(&p, target, &spec, Some(&args), &opts)
            .unwrap_or_else(|e| panic!("({target:?}): {e}"));
        if let Err(e) = agree(&p, &kernel, &args) {
            panic!("narrowed ({target:?}): {e}");
        }
    }
    let dir = opts.cache_dir.clone().expect("a cache directory");
    let narrowed = std::fs::read_dir(&dir)
        .expect("the cache directory")
        .filter_map(|e| e.ok())
        .filter(|e| e.path().extension().is_some_and(|x| x == "c"))
        .filter_map(|e| std::fs::read_to_string(e.path()).ok())
        .any(|src| src.contains("uint32_t *const"));
    remove_cache(&opts);
    assert!(narrowed, "no table stored as 32-bit counts");
}
