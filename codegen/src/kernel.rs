//! The driver of compiled kernels (issue 12, deliverables 3-4): a loop-IR [`Program`]
//! emitted (`emit`), compiled and opened (`compile`), then called through the ABI its
//! header documents, with the same meaning as the IR's interpreter: [`Compiled::run`] is
//! `interp::run`, [`Compiled::enumerate`] is `run_measure` in `Mode::Exact`, value by
//! value, and a failure is the same kind of [`RunError`].
//!
//! Exact inference over compiled code: a kernel takes a choice script (the values of its
//! first categorical draws); at the first categorical past the script it stops and hands
//! back the weight so far and the draw's normalised log weights. A draw in tail position
//! (nothing after it but returning the drawn value: the Gibbs update's shape) is finished
//! there, each value with its weight, nothing replayed; any other stop is followed by
//! replaying the kernel with the script extended by each value of non-zero weight,
//! depth first, at most `max_paths` paths (counted as the interpreter counts them).
//!
//! Specialisation ([`Specialise`]) bakes the chosen parameters' values (scalars) and
//! lengths (arrays) into the source; a call with other values is refused, never run.
//! [`Compiled::sample`] runs the kernel in sampling mode: its own xoshiro256**, started
//! from the interpreter's seeding, and the interpreter's samplers written in the kernel's
//! language (its streams may differ from the interpreter's in the last bits of `ln`/`cos`,
//! so samples agree in law, not bit for bit).
//!
//! It must not change what a program means: anything the kernel cannot do is an error
//! here, never a guess.

use crate::compile::{compile, CompileError, CompileOptions, Library};
use crate::emit::{emit_with, EmitError, Emitted, Fixed, Site, SiteKind, Specialise, Target};
use crate::interp::{Enumerated, RunError, Sample, Sampled, Stats, Val};
use crate::ir::{Expr, Program};
use crate::sampler::Rng;
use slic_algebra::Type;
use std::ffi::c_void;
use std::fmt;

/// Why a compiled kernel could not give an answer.
#[derive(Debug)]
pub enum KernelError {
    /// The program could not be emitted.
    Emit(EmitError),
    /// The kernel could not be compiled or loaded.
    Compile(CompileError),
    /// A run-time failure, as the interpreter would report it.
    Run(RunError),
    /// An argument differs from the value (or array length) the kernel was specialised
    /// for.
    Specialised { name: String, expected: String },
}

impl fmt::Display for KernelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KernelError::Emit(e) => write!(f, "{e}"),
            KernelError::Compile(e) => write!(f, "{e}"),
            KernelError::Run(e) => write!(f, "{e}"),
            KernelError::Specialised { name, expected } => write!(
                f,
                "the kernel was specialised for `{name}` = {expected}; build it again for \
                 other data"
            ),
        }
    }
}

impl std::error::Error for KernelError {}

impl From<RunError> for KernelError {
    fn from(e: RunError) -> KernelError {
        KernelError::Run(e)
    }
}

// ---- the ABI's records, as the templates declare them ----

#[repr(C)]
struct SlicParam {
    data: *const c_void,
    len: u64,
    i: i64,
    f: f64,
}

#[repr(C)]
struct SlicValue {
    data: *mut c_void,
    len: u64,
    i: i64,
    f: f64,
}

#[repr(C)]
struct SlicCtl {
    script: *const u64,
    script_len: u64,
    pos: u64,
    err_index: u64,
    err_size: u64,
    err_value: f64,
    ln_w: f64,
    stop_ln_p: *mut f64,
    stop_len: u64,
    arena: *mut *mut c_void,
    arena_len: u64,
    arena_cap: u64,
    rng: [u64; 4],
    code: i32,
    site: u32,
    err_signed: i32,
    stop_tail: i32,
    sampling: i32,
}

type KernelFn = unsafe extern "C" fn(*const SlicParam, *mut SlicValue, *mut SlicCtl) -> i32;
type FreeFn = unsafe extern "C" fn(*mut c_void, u64);
type AbiFn = unsafe extern "C" fn() -> u32;

const OK: i32 = 0;
const OUT_OF_BOUNDS: i32 = 1;
const ARITH: i32 = 2;
const BAD_DRAW: i32 = 3;
const NOT_FINITE: i32 = 4;
const STOP: i32 = 5;
const ZERO: i32 = 6;
const NO_MEMORY: i32 = 7;

/// A result's shape: pairs of leaves, as the kernel's `out` flattens them.
#[derive(Clone, Debug)]
enum Shape {
    Leaf,
    Pair(Box<Shape>, Box<Shape>),
}

fn shape(e: &Expr) -> Shape {
    match e {
        Expr::Pair(a, b) => Shape::Pair(Box::new(shape(a)), Box::new(shape(b))),
        _ => Shape::Leaf,
    }
}

/// A compiled kernel, ready to call.
pub struct Compiled {
    lib: Library,
    kernel: KernelFn,
    free: FreeFn,
    emitted: Emitted,
    params: Vec<(String, Type)>,
    shape: Shape,
}

/// One call's outcome.
enum Call {
    Done(Val, f64),
    Zero,
    Stop {
        ln_w: f64,
        ln_p: Vec<f64>,
        tail: bool,
        site: u32,
    },
}

/// The arguments as the ABI takes them; the buffers live as long as this does.
struct Marshalled {
    params: Vec<SlicParam>,
    buffers: Vec<Buffer>,
    /// The buffer of each array parameter.
    buffer_of: Vec<Option<usize>>,
}

/// Arguments laid out once for many calls of one kernel (a Gibbs chain): between calls a
/// nat parameter ([`Prepared::set_nat`]) or an element of a nat array
/// ([`Prepared::set_element`]) changes in place, so a call costs the kernel's work
/// alone, not a copy of the data. Parameters the kernel was specialised on cannot change.
pub struct Prepared {
    m: Marshalled,
    params: Vec<(String, Type)>,
    fixed: Vec<bool>,
    /// The `nat` arrays laid out as 32-bit elements.
    narrow: Vec<bool>,
}

impl Prepared {
    /// Sets the nat parameter number `param` to `v`.
    pub fn set_nat(&mut self, param: usize, v: u64) -> Result<(), KernelError> {
        self.changeable(param, &Type::Nat)?;
        let i = i64::try_from(v).map_err(|_| self.wrong(param))?;
        self.m.params[param].i = i;
        Ok(())
    }

    /// Sets element `i` of the nat array parameter number `param` to `v` (its length
    /// stays, so a specialised array may change).
    pub fn set_element(&mut self, param: usize, i: usize, v: u64) -> Result<(), KernelError> {
        self.changeable(param, &Type::array(Type::Nat))?;
        let b = self.m.buffer_of[param].ok_or_else(|| self.wrong(param))?;
        match self.m.buffers.get_mut(b) {
            Some(Buffer::U64(xs)) if i < xs.len() => {
                xs[i] = v;
                Ok(())
            }
            Some(Buffer::U32(xs)) if i < xs.len() => match u32::try_from(v) {
                Ok(v) => {
                    xs[i] = v;
                    Ok(())
                }
                Err(_) => Err(self.wrong(param)),
            },
            _ => Err(self.wrong(param)),
        }
    }

    /// The current elements of array parameter `param` (an `inout` array's after the
    /// calls that changed it); `None` for a scalar.
    pub fn array(&self, param: usize) -> Option<Val> {
        let b = self
            .m
            .buffers
            .get(self.m.buffer_of.get(param).copied().flatten()?)?;
        let elem = self.params.get(param)?.1.array_of()?;
        let items: Vec<Val> = match (b, elem) {
            (Buffer::U64(xs), _) => xs.iter().map(|&n| Val::Nat(n)).collect(),
            (Buffer::U32(xs), _) => xs.iter().map(|&n| Val::Nat(u64::from(n))).collect(),
            (Buffer::I64(xs), _) => xs.iter().map(|&n| Val::Int(n)).collect(),
            (Buffer::F64(xs), Type::Prob) => xs.iter().map(|&l| Val::Prob(l)).collect(),
            (Buffer::F64(xs), _) => xs.iter().map(|&x| Val::Real(x)).collect(),
            (Buffer::U8(xs), _) => xs.iter().map(|&b| Val::Bool(b != 0)).collect(),
        };
        Some(Val::array(items))
    }

    /// The current elements of the `nat` array parameter `param`, without building
    /// values: what a Gibbs sweep reads its labels back with. `None` for another type.
    pub fn nats(&self, param: usize) -> Option<&[u64]> {
        let b = self
            .m
            .buffers
            .get(self.m.buffer_of.get(param).copied().flatten()?)?;
        match (b, self.params.get(param)?.1.array_of()?) {
            (Buffer::U64(xs), Type::Nat) => Some(xs),
            _ => None,
        }
    }

    /// Sets parameter `param` to `v`: a scalar of its type (which must not be
    /// specialised), or an array of its type and length ([`Self::set_array`]).
    pub fn set(&mut self, param: usize, v: &Val) -> Result<(), KernelError> {
        if matches!(v, Val::Array(_)) {
            return self.set_array(param, v);
        }
        let ty = self
            .params
            .get(param)
            .map(|p| p.1.clone())
            .unwrap_or(Type::Unit);
        self.changeable(param, &ty)?;
        let (i, f) = match (v, &ty) {
            (Val::Nat(n), Type::Nat) => (i64::try_from(*n).ok(), None),
            (Val::Int(n), Type::Int) => (Some(*n), None),
            (Val::Bool(b), Type::Bool) => (Some(i64::from(*b)), None),
            (Val::Real(x), Type::Real) | (Val::Prob(x), Type::Prob) => (None, Some(*x)),
            _ => (None, None),
        };
        let rec = &mut self.m.params[param];
        match (i, f) {
            (Some(i), _) => rec.i = i,
            (_, Some(f)) => rec.f = f,
            _ => return Err(self.wrong(param)),
        }
        Ok(())
    }

    /// Sets every element of array parameter `param` from `v`, an array of its type and
    /// length (the buffer stays where the kernel's records point).
    pub fn set_array(&mut self, param: usize, v: &Val) -> Result<(), KernelError> {
        let (Some(b), Some(ty), Val::Array(items)) = (
            self.m.buffer_of.get(param).copied().flatten(),
            self.params.get(param).and_then(|p| p.1.array_of()),
            v,
        ) else {
            return Err(self.wrong(param));
        };
        let new = flat(items, ty).ok_or_else(|| self.wrong(param))?;
        let too_wide = self.wrong(param);
        match (self.m.buffers.get_mut(b), new) {
            (Some(Buffer::U64(xs)), Buffer::U64(ys)) if xs.len() == ys.len() => {
                xs.copy_from_slice(&ys)
            }
            (Some(Buffer::U32(xs)), Buffer::U64(ys)) if xs.len() == ys.len() => {
                match narrowed(&ys) {
                    Some(n) => xs.copy_from_slice(&n),
                    None => return Err(too_wide),
                }
            }
            (Some(Buffer::I64(xs)), Buffer::I64(ys)) if xs.len() == ys.len() => {
                xs.copy_from_slice(&ys)
            }
            (Some(Buffer::F64(xs)), Buffer::F64(ys)) if xs.len() == ys.len() => {
                xs.copy_from_slice(&ys)
            }
            (Some(Buffer::U8(xs)), Buffer::U8(ys)) if xs.len() == ys.len() => {
                xs.copy_from_slice(&ys)
            }
            _ => return Err(self.wrong(param)),
        }
        Ok(())
    }

    /// Sets every element of array parameter `param` to what a fresh allocation holds
    /// (zeros; `prob`'s 0, whose logarithm is stored).
    pub fn clear(&mut self, param: usize) -> Result<(), KernelError> {
        let ty = self.params.get(param).and_then(|p| p.1.array_of()).cloned();
        let (Some(ty), Some(b)) = (ty, self.m.buffer_of.get(param).copied().flatten()) else {
            return Err(self.wrong(param));
        };
        self.changeable(param, &Type::array(ty.clone()))?;
        match self.m.buffers.get_mut(b) {
            Some(Buffer::U64(xs)) => xs.fill(0),
            Some(Buffer::U32(xs)) => xs.fill(0),
            Some(Buffer::I64(xs)) => xs.fill(0),
            Some(Buffer::F64(xs)) if ty == Type::Prob => xs.fill(f64::NEG_INFINITY),
            Some(Buffer::F64(xs)) => xs.fill(0.0),
            Some(Buffer::U8(xs)) => xs.fill(0),
            None => return Err(self.wrong(param)),
        }
        Ok(())
    }

    /// May parameter `param` of type `ty` change? A specialised scalar may not (its value
    /// is in the code); a specialised array's elements may (only its length is).
    fn changeable(&self, param: usize, ty: &Type) -> Result<(), KernelError> {
        match self.params.get(param) {
            Some((_, t)) if t == ty && (!self.fixed[param] || t.array_of().is_some()) => Ok(()),
            Some((name, t)) if t == ty => Err(KernelError::Specialised {
                name: name.clone(),
                expected: "the value it was built with".into(),
            }),
            _ => Err(self.wrong(param)),
        }
    }

    fn wrong(&self, param: usize) -> KernelError {
        let (name, ty) = self
            .params
            .get(param)
            .cloned()
            .unwrap_or_else(|| (format!("#{param}"), Type::Nat));
        RunError::ArgType {
            name,
            expected: ty.to_string(),
        }
        .into()
    }
}

enum Buffer {
    U64(Vec<u64>),
    /// A `nat` array laid out as 32-bit elements ([`crate::Specialise::narrow`]).
    U32(Vec<u32>),
    I64(Vec<i64>),
    F64(Vec<f64>),
    U8(Vec<u8>),
}

impl Compiled {
    /// Emits, compiles (or finds in the cache) and opens `p` for `target`, with the
    /// parameters `spec` fixes baked in from `args` (which must then be given).
    pub fn build(
        p: &Program,
        target: Target,
        spec: &Specialise,
        args: Option<&[Val]>,
        opts: &CompileOptions,
    ) -> Result<Compiled, KernelError> {
        let fixed = fixed_values(p, spec, args)?;
        let emitted = emit_with(p, target, &fixed, &spec.narrow).map_err(KernelError::Emit)?;
        let lib = compile(&emitted.source, target, opts).map_err(KernelError::Compile)?;
        // SAFETY: the symbols have the types the templates give them (ABI version 2,
        // checked before the first call)
        let (kernel, free, abi) = unsafe {
            let load =
                |e: libloading::Error| KernelError::Compile(CompileError::Load(e.to_string()));
            let k: libloading::Symbol<'_, KernelFn> =
                lib.lib.get(b"slic_kernel\0").map_err(load)?;
            let f: libloading::Symbol<'_, FreeFn> = lib.lib.get(b"slic_free\0").map_err(load)?;
            let a: libloading::Symbol<'_, AbiFn> = lib.lib.get(b"slic_abi\0").map_err(load)?;
            (*k, *f, (*a)())
        };
        if abi != 2 {
            return Err(KernelError::Compile(CompileError::Load(format!(
                "ABI version {abi}, expected 2"
            ))));
        }
        Ok(Compiled {
            lib,
            kernel,
            free,
            emitted,
            params: p.params.clone(),
            shape: shape(&p.result),
        })
    }

    /// Which parameters are laid out as 32-bit `nat`s, one flag per parameter.
    fn narrow_flags(&self) -> Vec<bool> {
        (0..self.params.len())
            .map(|k| self.emitted.narrow.get(k).copied().unwrap_or(false))
            .collect()
    }

    /// Was the library found in the cache (nothing compiled)?
    pub fn cache_hit(&self) -> bool {
        self.lib.cache_hit
    }

    /// The kernel's source.
    pub fn source(&self) -> &str {
        &self.emitted.source
    }

    /// Runs a program that is not a measure: `interp::run`'s value.
    pub fn run(&self, args: &[Val]) -> Result<Val, KernelError> {
        if self.emitted.measure {
            return Err(RunError::IsAMeasure.into());
        }
        let m = self.marshal(args)?;
        match self.call(&m, &[], None)? {
            Call::Done(v, _) => Ok(v),
            _ => Err(RunError::IsAMeasure.into()),
        }
    }

    /// The exact distribution of a measure program (a program that is not a measure is
    /// the point mass at its value): `run_measure` in `Mode::Exact { max_paths }`, with
    /// no work counted (`stats` is zero).
    pub fn enumerate(&self, args: &[Val], max_paths: u64) -> Result<Enumerated, KernelError> {
        let m = self.marshal(args)?;
        self.enumerate_marshalled(&m, max_paths)
    }

    /// `args` checked and laid out once, for [`Self::enumerate_prepared`] calls that
    /// change a label or an index between them.
    pub fn prepare(&self, args: &[Val]) -> Result<Prepared, KernelError> {
        let m = self.marshal(args)?;
        let fixed = (0..self.params.len())
            .map(|k| matches!(self.emitted.fixed.get(k), Some(Some(_))))
            .collect();
        Ok(Prepared {
            m,
            params: self.params.clone(),
            fixed,
            narrow: self.narrow_flags(),
        })
    }

    /// Can this kernel be called on `p`, arguments another kernel prepared? Yes when the
    /// two have the same parameters, specialised alike (the kernels of one update's
    /// incremental statistics share one set of arguments).
    pub fn accepts(&self, p: &Prepared) -> bool {
        p.params == self.params
            && p.narrow == self.narrow_flags()
            && p.fixed.len() == self.params.len()
            && (0..self.params.len())
                .all(|k| p.fixed[k] == matches!(self.emitted.fixed.get(k), Some(Some(_))))
    }

    /// Runs a program that is not a measure on prepared arguments (see
    /// [`Self::accepts`]), its `inout` arrays changed in place: `run`'s value, and
    /// `interp::run_inout`'s changes. On an error the arrays may be partly changed.
    pub fn run_prepared(&self, p: &mut Prepared) -> Result<Val, KernelError> {
        if self.emitted.measure {
            return Err(RunError::IsAMeasure.into());
        }
        // `&mut`: the kernel writes the inout buffers through the records' pointers
        match self.call(&p.m, &[], None)? {
            Call::Done(v, _) => Ok(v),
            _ => Err(RunError::IsAMeasure.into()),
        }
    }

    /// [`Self::enumerate`] on prepared arguments.
    pub fn enumerate_prepared(
        &self,
        p: &Prepared,
        max_paths: u64,
    ) -> Result<Enumerated, KernelError> {
        self.enumerate_marshalled(&p.m, max_paths)
    }

    /// The weights of a program whose first choice is its last, a categorical it returns
    /// (a Gibbs update): one call, the label of each outcome of positive weight with its
    /// log weight, exactly what [`Self::enumerate_prepared`] gives such a program, without
    /// building its outcome list (none for a run of weight 0). `None` when the first call
    /// returns a value or stops at a choice not in tail position (then use
    /// [`Self::enumerate_prepared`]).
    pub fn tail_weights_prepared(
        &self,
        p: &Prepared,
        max_paths: u64,
    ) -> Result<Option<Vec<(u64, f64)>>, KernelError> {
        let (ln_w, ln_p, site) = match self.call(&p.m, &[], None)? {
            Call::Stop {
                ln_w,
                ln_p,
                tail: true,
                site,
            } => (ln_w, ln_p, site),
            Call::Zero => return Ok(Some(Vec::new())),
            _ => return Ok(None),
        };
        let mut out = Vec::with_capacity(ln_p.len());
        for (k, &l) in ln_p.iter().enumerate() {
            if l > f64::NEG_INFINITY {
                // as enumeration's sum of a value's leaves, which reads NaN as no weight
                let w = log_mul(ln_w, l);
                out.push((k as u64, if w.is_nan() { f64::NEG_INFINITY } else { w }));
            }
        }
        if out.len() as u64 > max_paths {
            return Err(RunError::TooManyPaths {
                max_paths,
                at: self.site(site).at.clone(),
            }
            .into());
        }
        Ok(Some(out))
    }

    fn enumerate_marshalled(
        &self,
        m: &Marshalled,
        max_paths: u64,
    ) -> Result<Enumerated, KernelError> {
        let mut work: Vec<Vec<u64>> = vec![Vec::new()];
        let mut paths: u64 = 1;
        let mut leaves: Vec<(Val, f64)> = Vec::new();
        while let Some(script) = work.pop() {
            match self.call(m, &script, None)? {
                Call::Done(v, ln_w) => leaves.push((v, ln_w)),
                Call::Zero => {}
                Call::Stop {
                    ln_w,
                    ln_p,
                    tail,
                    site,
                } => {
                    let live: Vec<(usize, f64)> = ln_p
                        .iter()
                        .copied()
                        .enumerate()
                        .filter(|(_, l)| *l > f64::NEG_INFINITY)
                        .collect();
                    if live.is_empty() {
                        continue;
                    }
                    paths = paths.saturating_add(live.len() as u64 - 1);
                    if paths > max_paths {
                        return Err(RunError::TooManyPaths {
                            max_paths,
                            at: self.site(site).at.clone(),
                        }
                        .into());
                    }
                    for (k, l) in live {
                        if tail {
                            leaves.push((Val::Nat(k as u64), log_mul(ln_w, l)));
                        } else {
                            let mut s = script.clone();
                            s.push(k as u64);
                            work.push(s);
                        }
                    }
                }
            }
        }
        Ok(Enumerated::from_leaves(leaves, paths, Stats::default()))
    }

    /// `n` independent runs of a measure program drawing from the generator of `seed`:
    /// `run_measure` in `Mode::Sample { n, seed }` (the same generator and samplers,
    /// written in the kernel's language; no work counted). A run of weight 0 is a sample
    /// without a value.
    pub fn sample(&self, args: &[Val], n: usize, seed: u64) -> Result<Sampled, KernelError> {
        let m = self.marshal(args)?;
        self.sample_marshalled(&m, n, seed)
    }

    /// [`Self::sample`] on prepared arguments.
    pub fn sample_prepared(
        &self,
        p: &Prepared,
        n: usize,
        seed: u64,
    ) -> Result<Sampled, KernelError> {
        self.sample_marshalled(&p.m, n, seed)
    }

    fn sample_marshalled(
        &self,
        m: &Marshalled,
        n: usize,
        seed: u64,
    ) -> Result<Sampled, KernelError> {
        let mut rng = Rng::seed_from_u64(seed).state();
        let mut samples = Vec::new();
        for _ in 0..n {
            samples.push(self.sample_once(m, &mut rng, 1)?);
        }
        Ok(Sampled {
            samples,
            stats: Stats::default(),
        })
    }

    /// One run in sampling mode on prepared arguments, drawing from the generator state
    /// `rng` (advanced): a Markov chain's step, its generator kept between steps.
    pub fn sample_step(&self, p: &Prepared, rng: &mut [u64; 4]) -> Result<Sample, KernelError> {
        self.sample_once(&p.m, rng, 1)
    }

    /// [`Self::sample_step`] with each categorical sampled from its weights as they are,
    /// not normalised first (the ABI's sampling mode 2): the same law, one `exp` a label
    /// instead of two and a half, other rounding. What a Gibbs sweep kernel runs in
    /// (`crate::incremental::sweep_program`), whose draws need no mass.
    pub fn sweep_step(&self, p: &Prepared, rng: &mut [u64; 4]) -> Result<Sample, KernelError> {
        self.sample_once(&p.m, rng, 2)
    }

    fn sample_once(
        &self,
        m: &Marshalled,
        rng: &mut [u64; 4],
        mode: i32,
    ) -> Result<Sample, KernelError> {
        Ok(match self.call_in(m, &[], Some(rng), mode)? {
            Call::Done(v, ln_w) => Sample {
                value: Some(v),
                ln_w,
            },
            Call::Zero => Sample {
                value: None,
                ln_w: f64::NEG_INFINITY,
            },
            Call::Stop { site, .. } => {
                return Err(RunError::Arith {
                    what: "the kernel stopped while sampling".into(),
                    at: self.site(site).at.clone(),
                }
                .into())
            }
        })
    }

    fn site(&self, k: u32) -> &Site {
        static UNKNOWN: Site = Site {
            at: String::new(),
            kind: SiteKind::Alloc,
        };
        self.emitted.sites.get(k as usize).unwrap_or(&UNKNOWN)
    }

    /// The arguments checked (count, types, specialised values) and laid out.
    fn marshal(&self, args: &[Val]) -> Result<Marshalled, KernelError> {
        if args.len() != self.params.len() {
            return Err(RunError::ArgCount {
                expected: self.params.len(),
                found: args.len(),
            }
            .into());
        }
        let mut params = Vec::with_capacity(args.len());
        let mut buffers = Vec::new();
        let mut buffer_of = vec![None; args.len()];
        for (k, ((name, ty), v)) in self.params.iter().zip(args).enumerate() {
            let wrong = || RunError::ArgType {
                name: name.clone(),
                expected: ty.to_string(),
            };
            let fixed = self.emitted.fixed.get(k).cloned().flatten();
            let mut p = SlicParam {
                data: std::ptr::null(),
                len: 0,
                i: 0,
                f: 0.0,
            };
            match (v, ty) {
                (Val::Nat(n), Type::Nat) => p.i = *n as i64,
                (Val::Int(n), Type::Int) => p.i = *n,
                (Val::Bool(b), Type::Bool) => p.i = i64::from(*b),
                (Val::Real(x), Type::Real) | (Val::Prob(x), Type::Prob) => p.f = *x,
                (Val::Array(items), Type::Array(e)) => {
                    let mut buf = flat(items, e).ok_or_else(wrong)?;
                    if self.emitted.narrow.get(k).copied().unwrap_or(false) {
                        buf = match buf {
                            // each element must fit the 32 bits the kernel reads
                            Buffer::U64(xs) => Buffer::U32(narrowed(&xs).ok_or_else(wrong)?),
                            _ => return Err(wrong().into()),
                        };
                    }
                    p.len = items.len() as u64;
                    // a mutable pointer: an inout parameter's kernel writes through it
                    p.data = match &mut buf {
                        Buffer::U64(b) => b.as_mut_ptr() as *const c_void,
                        Buffer::U32(b) => b.as_mut_ptr() as *const c_void,
                        Buffer::I64(b) => b.as_mut_ptr() as *const c_void,
                        Buffer::F64(b) => b.as_mut_ptr() as *const c_void,
                        Buffer::U8(b) => b.as_mut_ptr() as *const c_void,
                    };
                    buffer_of[k] = Some(buffers.len());
                    buffers.push(buf);
                }
                _ => return Err(wrong().into()),
            }
            if let Some(f) = fixed {
                let same = match (&f, v) {
                    (Fixed::Nat(a), Val::Nat(b)) => a == b,
                    (Fixed::Int(a), Val::Int(b)) => a == b,
                    (Fixed::Bool(a), Val::Bool(b)) => a == b,
                    (Fixed::Real(a), Val::Real(b) | Val::Prob(b)) => a.to_bits() == b.to_bits(),
                    (Fixed::Len(n), Val::Array(items)) => *n == items.len() as u64,
                    _ => false,
                };
                if !same {
                    return Err(KernelError::Specialised {
                        name: name.clone(),
                        expected: match f {
                            Fixed::Nat(n) | Fixed::Len(n) => n.to_string(),
                            Fixed::Int(n) => n.to_string(),
                            Fixed::Bool(b) => b.to_string(),
                            Fixed::Real(x) => format!("{x:?}"),
                        },
                    });
                }
            }
            params.push(p);
        }
        Ok(Marshalled {
            params,
            buffers,
            buffer_of,
        })
    }

    /// One call of the kernel with a choice script, or sampling from `rng` (advanced).
    fn call(
        &self,
        m: &Marshalled,
        script: &[u64],
        rng: Option<&mut [u64; 4]>,
    ) -> Result<Call, KernelError> {
        let mode = i32::from(rng.is_some());
        self.call_in(m, script, rng, mode)
    }

    /// [`Self::call`] in sampling mode `mode` (the ABI's `ctl.sampling`; 0 without `rng`).
    fn call_in(
        &self,
        m: &Marshalled,
        script: &[u64],
        rng: Option<&mut [u64; 4]>,
        mode: i32,
    ) -> Result<Call, KernelError> {
        let leaves = &self.emitted.leaves;
        let mut out: Vec<SlicValue> = (0..leaves.len())
            .map(|_| SlicValue {
                data: std::ptr::null_mut(),
                len: 0,
                i: 0,
                f: 0.0,
            })
            .collect();
        let mut ctl = SlicCtl {
            script: script.as_ptr(),
            script_len: script.len() as u64,
            pos: 0,
            err_index: 0,
            err_size: 0,
            err_value: 0.0,
            ln_w: 0.0,
            stop_ln_p: std::ptr::null_mut(),
            stop_len: 0,
            arena: std::ptr::null_mut(),
            arena_len: 0,
            arena_cap: 0,
            rng: rng.as_deref().copied().unwrap_or([0; 4]),
            code: 0,
            site: 0,
            err_signed: 0,
            stop_tail: 0,
            sampling: if rng.is_some() { mode } else { 0 },
        };
        // SAFETY: `params` holds one record per parameter over live buffers, `out` one per
        // result leaf, as the kernel's ABI asks
        let rc = unsafe { (self.kernel)(m.params.as_ptr(), out.as_mut_ptr(), &mut ctl) };
        if let Some(r) = rng {
            *r = ctl.rng;
        }
        // every buffer the kernel handed out is copied, then freed
        let mut vals = Vec::with_capacity(leaves.len());
        for (v, (kind, ty)) in out.iter().zip(leaves) {
            vals.push(self.leaf(v, kind, ty));
        }
        let stop = self.take_stop(&ctl);
        let site = self.site(ctl.site);
        match rc {
            OK => {
                let mut it = vals.into_iter();
                let v = assemble(&self.shape, &mut it).ok_or_else(|| {
                    KernelError::Run(RunError::Arith {
                        what: "the kernel returned a result of another shape".into(),
                        at: "return".into(),
                    })
                })?;
                Ok(Call::Done(v, ctl.ln_w))
            }
            ZERO => Ok(Call::Zero),
            STOP => Ok(Call::Stop {
                ln_w: ctl.ln_w,
                ln_p: stop,
                tail: ctl.stop_tail != 0,
                site: ctl.site,
            }),
            OUT_OF_BOUNDS => Err(RunError::OutOfBounds {
                array: match &site.kind {
                    SiteKind::Index { array } => array.clone(),
                    _ => String::new(),
                },
                index: if ctl.err_signed != 0 {
                    i128::from(ctl.err_index as i64)
                } else {
                    i128::from(ctl.err_index)
                },
                size: ctl.err_size as usize,
                at: site.at.clone(),
            }
            .into()),
            ARITH | NO_MEMORY => Err(RunError::Arith {
                what: match (&site.kind, rc) {
                    (_, NO_MEMORY) => "out of memory".to_string(),
                    (SiteKind::Arith { what }, _) => {
                        format!("{what} fails (at {:?})", ctl.err_value)
                    }
                    (SiteKind::Alloc, _) => "size too large".to_string(),
                    _ => "arithmetic failure".to_string(),
                },
                at: site.at.clone(),
            }
            .into()),
            BAD_DRAW => Err(RunError::BadDraw {
                what: match &site.kind {
                    SiteKind::Draw { dist } => {
                        format!("{dist}'s parameter {:?} is out of its range", ctl.err_value)
                    }
                    _ => "a parameter is out of its range".to_string(),
                },
                at: site.at.clone(),
            }
            .into()),
            NOT_FINITE => Err(RunError::NotFinite {
                dist: match &site.kind {
                    SiteKind::Draw { dist } => dist,
                    _ => "a distribution",
                },
                at: site.at.clone(),
            }
            .into()),
            other => Err(RunError::Arith {
                what: format!("the kernel returned the unknown code {other}"),
                at: site.at.clone(),
            }
            .into()),
        }
    }

    /// The stop's log weights, copied and freed.
    fn take_stop(&self, ctl: &SlicCtl) -> Vec<f64> {
        if ctl.stop_ln_p.is_null() {
            return Vec::new();
        }
        // SAFETY: the kernel allocated `stop_len` f64s there and hands them to us
        let v =
            unsafe { std::slice::from_raw_parts(ctl.stop_ln_p, ctl.stop_len as usize).to_vec() };
        // SAFETY: freed once, with the size it was allocated with
        unsafe { (self.free)(ctl.stop_ln_p as *mut c_void, ctl.stop_len * 8) };
        v
    }

    /// One result leaf as a value (an array's buffer copied, then freed).
    fn leaf(&self, v: &SlicValue, kind: &str, ty: &str) -> Val {
        match (kind, ty) {
            ("unit", _) => Val::Unit,
            ("array", t) => {
                let n = v.len as usize;
                let size: u64 = if t == "bool" { 1 } else { 8 };
                if v.data.is_null() {
                    return Val::array(Vec::new());
                }
                // SAFETY: the kernel copied `len` elements of the leaf's type there
                let items: Vec<Val> = unsafe {
                    match t {
                        "nat" => std::slice::from_raw_parts(v.data as *const u64, n)
                            .iter()
                            .map(|x| Val::Nat(*x))
                            .collect(),
                        "int" => std::slice::from_raw_parts(v.data as *const i64, n)
                            .iter()
                            .map(|x| Val::Int(*x))
                            .collect(),
                        "bool" => std::slice::from_raw_parts(v.data as *const u8, n)
                            .iter()
                            .map(|x| Val::Bool(*x != 0))
                            .collect(),
                        "prob" => std::slice::from_raw_parts(v.data as *const f64, n)
                            .iter()
                            .map(|x| Val::Prob(*x))
                            .collect(),
                        _ => std::slice::from_raw_parts(v.data as *const f64, n)
                            .iter()
                            .map(|x| Val::Real(*x))
                            .collect(),
                    }
                };
                // SAFETY: freed once, with the size it was allocated with
                unsafe { (self.free)(v.data, v.len * size) };
                Val::array(items)
            }
            (_, "nat") => Val::Nat(v.i as u64),
            (_, "int") => Val::Int(v.i),
            (_, "bool") => Val::Bool(v.i != 0),
            (_, "prob") => Val::Prob(v.f),
            _ => Val::Real(v.f),
        }
    }
}

fn assemble(s: &Shape, it: &mut impl Iterator<Item = Val>) -> Option<Val> {
    match s {
        Shape::Leaf => it.next(),
        Shape::Pair(a, b) => {
            let a = assemble(a, it)?;
            let b = assemble(b, it)?;
            Some(Val::pair(a, b))
        }
    }
}

/// `ln(e^a · e^b)`, with measure theory's `0 · ∞ = 0`.
fn log_mul(a: f64, b: f64) -> f64 {
    if a == f64::NEG_INFINITY || b == f64::NEG_INFINITY {
        f64::NEG_INFINITY
    } else {
        a + b
    }
}

/// An array argument as a flat buffer of its element type; `None` when an element has
/// another type (or the array holds arrays: not flattened yet).
/// `xs` as 32-bit elements, if every one fits.
fn narrowed(xs: &[u64]) -> Option<Vec<u32>> {
    xs.iter().map(|&x| u32::try_from(x).ok()).collect()
}

fn flat(items: &[Val], elem: &Type) -> Option<Buffer> {
    Some(match elem {
        Type::Nat => Buffer::U64(
            items
                .iter()
                .map(|v| match v {
                    Val::Nat(n) => Some(*n),
                    _ => None,
                })
                .collect::<Option<_>>()?,
        ),
        Type::Int => Buffer::I64(
            items
                .iter()
                .map(|v| match v {
                    Val::Int(n) => Some(*n),
                    _ => None,
                })
                .collect::<Option<_>>()?,
        ),
        Type::Real | Type::Prob => Buffer::F64(
            items
                .iter()
                .map(|v| match (v, elem) {
                    (Val::Real(x), Type::Real) | (Val::Prob(x), Type::Prob) => Some(*x),
                    _ => None,
                })
                .collect::<Option<_>>()?,
        ),
        Type::Bool => Buffer::U8(
            items
                .iter()
                .map(|v| match v {
                    Val::Bool(b) => Some(u8::from(*b)),
                    _ => None,
                })
                .collect::<Option<_>>()?,
        ),
        _ => return None,
    })
}

/// The values `spec` bakes in, read off `args`.
fn fixed_values(
    p: &Program,
    spec: &Specialise,
    args: Option<&[Val]>,
) -> Result<Vec<Option<Fixed>>, KernelError> {
    if !spec.any() {
        return Ok(Vec::new());
    }
    let bad = |what: String| KernelError::Emit(EmitError::Specialise(what));
    let args = args.ok_or_else(|| bad("specialising needs the arguments".into()))?;
    if args.len() != p.params.len() || spec.fixed.len() > p.params.len() {
        return Err(bad(format!(
            "{} parameters, {} arguments, {} settings",
            p.params.len(),
            args.len(),
            spec.fixed.len()
        )));
    }
    let mut out = Vec::with_capacity(args.len());
    for (k, v) in args.iter().enumerate() {
        if !spec.fixed.get(k).copied().unwrap_or(false) {
            out.push(None);
            continue;
        }
        out.push(Some(match v {
            Val::Nat(n) => Fixed::Nat(*n),
            Val::Int(n) => Fixed::Int(*n),
            Val::Real(x) | Val::Prob(x) => Fixed::Real(*x),
            Val::Bool(b) => Fixed::Bool(*b),
            Val::Array(items) => Fixed::Len(items.len() as u64),
            other => return Err(bad(format!("argument {k} is {other:?}"))),
        }));
    }
    Ok(out)
}

/// The time of repeated solves, in microseconds: what `run --bench N` prints.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bench {
    pub solves: u64,
    pub median_us: f64,
    pub min_us: f64,
    pub max_us: f64,
}

impl Bench {
    /// Times `n` calls of `solve` (at least one), each on its own; the first error stops.
    pub fn measure<E>(n: u64, mut solve: impl FnMut() -> Result<(), E>) -> Result<Bench, E> {
        let n = n.max(1);
        let mut times = Vec::new();
        for _ in 0..n {
            let t = std::time::Instant::now();
            solve()?;
            times.push(t.elapsed().as_secs_f64() * 1e6);
        }
        times.sort_by(f64::total_cmp);
        let mid = times.len() / 2;
        let median = if times.len() % 2 == 1 {
            times[mid]
        } else {
            (times[mid - 1] + times[mid]) / 2.0
        };
        Ok(Bench {
            solves: n,
            median_us: median,
            min_us: times[0],
            max_us: times[times.len() - 1],
        })
    }
}
