//! The hand-written C baselines of `benches/baselines/` (issue 12, deliverable 6), compiled
//! with the system C compiler into shared libraries and called in process, for their tests
//! (`tests/baselines.rs`) and their benchmark (`benches/baselines.rs`): one loader, so the
//! tests check exactly the code the benchmark times.
//!
//! Shared libraries rather than driver programs because a benchmark of one Naive Bayes
//! update (milliseconds) or one exact solve (microseconds) cannot be timed through a child
//! process. The C compiler is spawned here, and in `slic-codegen` (the kernels), nowhere
//! else; the libraries go to `target/baselines/`, named by a hash of source and flags, so
//! concurrent test binaries never overwrite a library another has loaded.
//!
//! Benchmark and test scaffolding: no algorithm of slic-cas lives here, and the baselines'
//! arithmetic lives only in their C files.

use std::ffi::c_void;
use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use libloading::Library;

/// The flags every baseline must compile warning-free under (the plus `-Wextra
/// -pedantic`, and `-Werror` so a warning fails the test), for this machine's CPU: the
/// Rust kernels are compiled for it (`CompileOptions::portable` off), so the baselines
/// get the same chance.
pub const CFLAGS: [&str; 9] = [
    "-std=c11",
    "-Wall",
    "-Wextra",
    "-pedantic",
    "-Werror",
    "-O2",
    "-march=native",
    "-shared",
    "-fPIC",
];

/// A compiled baseline, loaded.
#[derive(Clone)]
pub struct Baseline {
    lib: Arc<Library>,
    pub name: String,
}

/// The C compiler: `$CC`, else `cc`.
fn compiler() -> String {
    std::env::var("CC").unwrap_or_else(|_| "cc".to_string())
}

/// Compiles `benches/baselines/NAME.c` (unless already compiled from the same source)
/// and loads it. Errors say what failed: no C compiler, a compile error or warning (with
/// the compiler's output), or a library that does not load.
pub fn compile(name: &str) -> Result<Baseline, String> {
    let src = crate::root()
        .join("benches/baselines")
        .join(format!("{name}.c"));
    let text = std::fs::read(&src).map_err(|e| format!("cannot read {}: {e}", src.display()))?;
    // the header the Gibbs baselines include is part of their source
    let header = src.with_file_name("draw.h");
    let shared =
        std::fs::read(&header).map_err(|e| format!("cannot read {}: {e}", header.display()))?;
    let cc = compiler();
    let hash = fnv(&[&text, &shared, cc.as_bytes(), CFLAGS.join(" ").as_bytes()]);
    let dir = crate::root().join("target/baselines");
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let lib = dir.join(format!("{name}-{hash:016x}.so"));
    if !lib.exists() {
        // compile to a name of this build's own, then rename: another process or thread
        // may be loading the final name
        static BUILDS: AtomicUsize = AtomicUsize::new(0);
        let build = BUILDS.fetch_add(1, Ordering::Relaxed);
        let tmp: PathBuf = dir.join(format!(
            "{name}-{hash:016x}.{}-{build}.tmp",
            std::process::id()
        ));
        let out = Command::new(&cc)
            .args(CFLAGS)
            .arg("-o")
            .arg(&tmp)
            .arg(&src)
            .arg("-lm")
            .output()
            .map_err(|e| {
                format!(
                    "no C compiler: `{cc}` could not be run ({e}). The C baselines need one: \
                     install gcc or clang, or set CC"
                )
            })?;
        if !out.status.success() {
            return Err(format!(
                "{} does not compile warning-free with `{cc} {}`:\n{}",
                src.display(),
                CFLAGS.join(" "),
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        std::fs::rename(&tmp, &lib).map_err(|e| format!("cannot move the library: {e}"))?;
    }
    // SAFETY: the library is our own C file, whose initialisers are plain C (none run
    // code at load)
    let loaded =
        unsafe { Library::new(&lib) }.map_err(|e| format!("cannot load {}: {e}", lib.display()))?;
    Ok(Baseline {
        lib: Arc::new(loaded),
        name: name.to_string(),
    })
}

fn fnv(parts: &[&[u8]]) -> u64 {
    parts
        .iter()
        .flat_map(|p| p.iter())
        .fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        })
}

impl Baseline {
    /// The symbol `name`, typed `T` (a function pointer type the caller vouches for).
    fn symbol<T: Copy>(&self, name: &str) -> Result<T, String> {
        // SAFETY: the callers name the C functions with the types their headers document
        unsafe { self.lib.get::<T>(name.as_bytes()) }
            .map(|s| *s)
            .map_err(|e| format!("{}: no symbol {name}: {e}", self.name))
    }
}

type FreeFn = unsafe extern "C" fn(*mut c_void);
type WeightsFn = unsafe extern "C" fn(*mut c_void, i64, *mut f64);
type CommitFn = unsafe extern "C" fn(*mut c_void, i64, i64);
type SweepFn = unsafe extern "C" fn(*mut c_void, *const i64, i64, *const f64);

/// What a Gibbs baseline borrows: classes, points, the state, the real and nat arrays.
type Parts = (usize, usize, Vec<i64>, Vec<Vec<f64>>, Vec<Vec<i64>>);

/// A Gibbs baseline's state (GMM, Naive Bayes or LDA; recomputing or incremental): the C
/// struct and the data it borrows, owned here so they outlive it.
pub struct Gibbs {
    state: *mut c_void,
    free: FreeFn,
    weights: WeightsFn,
    commit: CommitFn,
    sweep: SweepFn,
    classes: usize,
    points: usize,
    z: Vec<i64>,
    _reals: Vec<Vec<f64>>,
    _nats: Vec<Vec<i64>>,
    _lib: Baseline,
}

impl Drop for Gibbs {
    fn drop(&mut self) {
        // SAFETY: `state` came from the library's `*_new` and is freed once
        unsafe { (self.free)(self.state) }
    }
}

fn len(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

impl Gibbs {
    fn finish(
        lib: &Baseline,
        prefix: &str,
        state: *mut c_void,
        parts: Parts,
    ) -> Result<Gibbs, String> {
        let free: FreeFn = lib.symbol(&format!("{prefix}_free"))?;
        if state.is_null() {
            return Err(format!("{}: {prefix}_new returned NULL", lib.name));
        }
        let (classes, points, z, reals, nats) = parts;
        Ok(Gibbs {
            state,
            free,
            weights: lib.symbol(&format!("{prefix}_weights"))?,
            commit: lib.symbol(&format!("{prefix}_commit"))?,
            sweep: lib.symbol(&format!("{prefix}_sweep"))?,
            classes,
            points,
            z,
            _reals: reals,
            _nats: nats,
            _lib: lib.clone(),
        })
    }

    /// `gmm_new(s, as, K, z, t, n)` of `gmm_*.c`; the points are `t`, labels `z`.
    pub fn gmm(lib: &Baseline, s: f64, as_: &[f64], z: &[i64], t: &[f64]) -> Result<Gibbs, String> {
        type New =
            unsafe extern "C" fn(f64, *const f64, i64, *mut i64, *const f64, i64) -> *mut c_void;
        let new: New = lib.symbol("gmm_new")?;
        let (as_, mut z, t) = (as_.to_vec(), z.to_vec(), t.to_vec());
        // SAFETY: the pointers stay valid (the vectors move into the result, their buffers
        // do not move), with the lengths passed
        let state = unsafe {
            new(
                s,
                as_.as_ptr(),
                len(as_.len()),
                z.as_mut_ptr(),
                t.as_ptr(),
                len(t.len()),
            )
        };
        let parts = (as_.len(), t.len(), z, vec![as_, t], Vec::new());
        Gibbs::finish(lib, "gmm", state, parts)
    }

    /// `nb_new(topic_prior, K, word_prior, V, z, D, w, doc, N)` of `nb_*.c`; the points
    /// are the documents.
    pub fn naive_bayes(
        lib: &Baseline,
        topic_prior: &[f64],
        word_prior: &[f64],
        z: &[i64],
        w: &[i64],
        doc: &[i64],
    ) -> Result<Gibbs, String> {
        type New = unsafe extern "C" fn(
            *const f64,
            i64,
            *const f64,
            i64,
            *mut i64,
            i64,
            *const i64,
            *const i64,
            i64,
        ) -> *mut c_void;
        let new: New = lib.symbol("nb_new")?;
        let (tp, wp, mut z, w, doc) = (
            topic_prior.to_vec(),
            word_prior.to_vec(),
            z.to_vec(),
            w.to_vec(),
            doc.to_vec(),
        );
        // SAFETY: as in `gmm`
        let state = unsafe {
            new(
                tp.as_ptr(),
                len(tp.len()),
                wp.as_ptr(),
                len(wp.len()),
                z.as_mut_ptr(),
                len(z.len()),
                w.as_ptr(),
                doc.as_ptr(),
                len(w.len().min(doc.len())),
            )
        };
        let parts = (tp.len(), z.len(), z, vec![tp, wp], vec![w, doc]);
        Gibbs::finish(lib, "nb", state, parts)
    }

    /// `lda_new(topic_prior, K, word_prior, V, numDocs, w, doc, z, N)` of `lda_*.c`; the
    /// points are the tokens.
    #[allow(clippy::too_many_arguments)]
    /// [`Gibbs::lda`] over a generated dataset's arrays.
    pub fn lda_of(lib: &Baseline, d: &crate::datagen::Lda) -> Result<Gibbs, String> {
        Gibbs::lda(
            lib,
            &d.topic_prior,
            &d.word_prior,
            d.num_docs,
            &d.w,
            &d.doc,
            &d.z,
        )
    }

    pub fn lda(
        lib: &Baseline,
        topic_prior: &[f64],
        word_prior: &[f64],
        num_docs: i64,
        w: &[i64],
        doc: &[i64],
        z: &[i64],
    ) -> Result<Gibbs, String> {
        type New = unsafe extern "C" fn(
            *const f64,
            i64,
            *const f64,
            i64,
            i64,
            *const i64,
            *const i64,
            *mut i64,
            i64,
        ) -> *mut c_void;
        let new: New = lib.symbol("lda_new")?;
        let (tp, wp, w, doc, mut z) = (
            topic_prior.to_vec(),
            word_prior.to_vec(),
            w.to_vec(),
            doc.to_vec(),
            z.to_vec(),
        );
        let n = w.len().min(doc.len()).min(z.len());
        // SAFETY: as in `gmm`
        let state = unsafe {
            new(
                tp.as_ptr(),
                len(tp.len()),
                wp.as_ptr(),
                len(wp.len()),
                num_docs,
                w.as_ptr(),
                doc.as_ptr(),
                z.as_mut_ptr(),
                len(n),
            )
        };
        let parts = (tp.len(), n, z, vec![tp, wp], vec![w, doc]);
        Gibbs::finish(lib, "lda", state, parts)
    }

    /// The number of classes (topics).
    pub fn classes(&self) -> usize {
        self.classes
    }

    /// The number of points that can be updated.
    pub fn points(&self) -> usize {
        self.points
    }

    /// The current state.
    pub fn z(&self) -> &[i64] {
        &self.z
    }

    /// The unnormalised log weights of each class for point `u` (which must be below
    /// [`Gibbs::points`]).
    pub fn weights(&mut self, u: usize) -> Vec<f64> {
        let mut out = vec![0.0; self.classes];
        self.weights_into(u, &mut out);
        out
    }

    pub fn weights_into(&mut self, u: usize, out: &mut [f64]) {
        assert!(
            u < self.points && out.len() >= self.classes,
            "point or buffer out of range"
        );
        // SAFETY: u in range, out has room for the classes
        unsafe { (self.weights)(self.state, len(u), out.as_mut_ptr()) }
    }

    /// Sets `z[u] = k` (and, for an incremental baseline, moves u's statistics).
    pub fn commit(&mut self, u: usize, k: usize) {
        assert!(
            u < self.points && k < self.classes,
            "point or class out of range"
        );
        // SAFETY: both in range
        unsafe { (self.commit)(self.state, len(u), len(k)) }
    }

    /// Updates the points `order` in turn, the j-th drawn by `uniforms[j]`.
    pub fn sweep(&mut self, order: &[i64], uniforms: &[f64]) {
        assert!(uniforms.len() >= order.len(), "a uniform per update");
        assert!(
            order.iter().all(|&u| u >= 0 && (u as usize) < self.points),
            "points out of range"
        );
        // SAFETY: every point in range, a uniform for each
        unsafe {
            (self.sweep)(
                self.state,
                order.as_ptr(),
                len(order.len()),
                uniforms.as_ptr(),
            )
        }
    }
}

/// The solver of `clinical.c`, with the library it lives in.
pub struct ClinicalSolver {
    solve: unsafe extern "C" fn(i64, *const u8, *const u8, *mut f64),
    _lib: Baseline,
}

impl ClinicalSolver {
    pub fn new(lib: &Baseline) -> Result<ClinicalSolver, String> {
        Ok(ClinicalSolver {
            solve: lib.symbol("clinical_solve")?,
            _lib: lib.clone(),
        })
    }

    /// `clinical_solve(n, control, treated, out)`: `[log weight of true, log weight of
    /// false, log evidence, P(true)]`.
    pub fn solve(&self, control: &[u8], treated: &[u8]) -> [f64; 4] {
        let mut out = [0.0; 4];
        let n = control.len().min(treated.len());
        // SAFETY: both arrays hold n elements, out four; the library is loaded while self
        // lives
        unsafe { (self.solve)(len(n), control.as_ptr(), treated.as_ptr(), out.as_mut_ptr()) };
        out
    }
}

/// The solver of `linreg.c`, with the library it lives in.
pub struct LinRegSolver {
    solve: unsafe extern "C" fn(*const f64, *const f64, i64, *mut f64),
    _lib: Baseline,
}

impl LinRegSolver {
    pub fn new(lib: &Baseline) -> Result<LinRegSolver, String> {
        Ok(LinRegSolver {
            solve: lib.symbol("linreg_solve")?,
            _lib: lib.clone(),
        })
    }

    /// `linreg_solve(x, y, n, out)` (see `linreg.c` for the eight outputs).
    pub fn solve(&self, x: &[f64], y: &[f64]) -> [f64; 8] {
        let mut out = [0.0; 8];
        let n = x.len().min(y.len());
        // SAFETY: both arrays hold n elements, out eight; the library is loaded while self
        // lives
        unsafe { (self.solve)(x.as_ptr(), y.as_ptr(), len(n), out.as_mut_ptr()) };
        out
    }
}
