//! Run-time compilation of emitted kernels (issue 12, deliverable 3): the one module of
//! slic-cas that spawns a compiler. A kernel's source is compiled into a shared library
//! with the system C compiler (found as a build script finds it, through the `cc` crate,
//! asked at run time with the target, host and optimisation level given explicitly) or
//! with plain `rustc -O --crate-type cdylib`, in a cache directory keyed by a hash of the
//! source, the compiler and its flags, so a second build of the same kernel loads the
//! library already there; then the library is opened with `libloading`. The source stays
//! beside its library (`kernel-c-KEY.c` by `kernel-c-KEY.so`), so a profile of a kernel can
//! be read against the code that ran.
//!
//! The cache directory is `$SLIC_CACHE_DIR`, else `$XDG_CACHE_HOME/slic-cas`, else
//! `~/.cache/slic-cas`; a kernel built for this machine's CPU is keyed by the CPU too.
//! A missing compiler is [`CompileError::NoCompiler`], whose message
//! says so and names the other backends. It must not interpret kernels or know the IR:
//! it takes source text and gives back an opened library.

use crate::emit::Target;
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// How to compile.
#[derive(Clone, Debug, Default)]
pub struct CompileOptions {
    /// The cache directory; `None` for the default (see the module's documentation).
    pub cache_dir: Option<PathBuf>,
    /// The C compiler to run instead of the one `cc` finds (`$CC` is also honoured).
    pub c_compiler: Option<PathBuf>,
    /// The `rustc` to run instead of `$RUSTC` or `rustc` on the path.
    pub rustc: Option<PathBuf>,
    /// Compile with warnings as errors (`-Werror`, `-D warnings`): what the tests ask.
    pub deny_warnings: bool,
    /// Compile kernels for the target's baseline CPU. By default they are compiled for
    /// the machine that compiles them (`-C target-cpu=native`, `-march=native`), which is
    /// the machine that runs them: a kernel built at run time is never shipped elsewhere.
    /// C kernels are compiled at `-O3` with it: on the ClinicalTrial solve (n = 10,000,
    /// one run to the draw and one per outcome) `-O2` took 7.2 us, `-O2 -march=native`
    /// 10.3 us, `-O3` 7.9 us and `-O3 -march=native` 3.7 us, the count loop vectorised
    /// as Rust's is; LinearRegression moved from 7.7 to 8.4 us, the GMM sweep from 167 to
    /// 145 ms (`cargo bench --bench kernels -- solve|gmm-sweep`, one session).
    pub portable: bool,
}

/// Why a kernel could not be compiled or loaded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CompileError {
    /// The compiler is not on this machine.
    NoCompiler { target: Target, detail: String },
    /// The compiler ran and failed (its diagnostics).
    Failed { compiler: String, stderr: String },
    /// The cache directory could not be made or written.
    Cache(String),
    /// The library could not be opened, or lacks the kernel's symbols.
    Load(String),
}

impl fmt::Display for CompileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CompileError::NoCompiler {
                target: Target::C,
                detail,
            } => write!(
                f,
                "no C compiler found ({detail}); install one (e.g. gcc or clang), or use \
                 `--backend rust` or `--backend interp`"
            ),
            CompileError::NoCompiler {
                target: Target::Rust,
                detail,
            } => write!(
                f,
                "no rustc found ({detail}); install a Rust toolchain, or use `--backend c` \
                 or `--backend interp`"
            ),
            CompileError::Failed { compiler, stderr } => {
                write!(f, "{compiler} failed to compile the kernel:\n{stderr}")
            }
            CompileError::Cache(what) => write!(f, "kernel cache: {what}"),
            CompileError::Load(what) => write!(f, "cannot load the kernel: {what}"),
        }
    }
}

impl std::error::Error for CompileError {}

/// A compiled, opened kernel library.
pub struct Library {
    pub(crate) lib: libloading::Library,
    /// Where the library is.
    pub path: PathBuf,
    /// Was it found in the cache (nothing compiled)?
    pub cache_hit: bool,
}

/// The cache directory in force.
pub fn cache_dir(opts: &CompileOptions) -> Result<PathBuf, CompileError> {
    if let Some(d) = &opts.cache_dir {
        return Ok(d.clone());
    }
    if let Some(d) = std::env::var_os("SLIC_CACHE_DIR").filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(d));
    }
    if let Some(d) = std::env::var_os("XDG_CACHE_HOME").filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(d).join("slic-cas"));
    }
    match std::env::var_os("HOME").filter(|d| !d.is_empty()) {
        Some(h) => Ok(PathBuf::from(h).join(".cache").join("slic-cas")),
        None => Err(CompileError::Cache(
            "no cache directory: set SLIC_CACHE_DIR".into(),
        )),
    }
}

/// The target triple of this process, as `cc` names targets.
fn host_triple() -> Result<&'static str, CompileError> {
    use std::env::consts::{ARCH, OS};
    Ok(match (ARCH, OS) {
        ("x86_64", "linux") => "x86_64-unknown-linux-gnu",
        ("aarch64", "linux") => "aarch64-unknown-linux-gnu",
        ("x86_64", "macos") => "x86_64-apple-darwin",
        ("aarch64", "macos") => "aarch64-apple-darwin",
        (arch, os) => {
            return Err(CompileError::NoCompiler {
                target: Target::C,
                detail: format!("no known C target for {arch}-{os}"),
            })
        }
    })
}

/// The compiler command for `target`, without the source and output paths.
fn compiler_command(target: Target, opts: &CompileOptions) -> Result<Command, CompileError> {
    match target {
        Target::C => {
            let triple = host_triple()?;
            let mut b = cc::Build::new();
            b.target(triple)
                .host(triple)
                .opt_level(3)
                .cargo_metadata(false)
                // `warnings(false)` would add `-w` and hide every warning: -Wall, not -Wextra
                .warnings(true)
                .extra_warnings(false)
                .warnings_into_errors(opts.deny_warnings)
                .cargo_warnings(false)
                .pic(true);
            if let Some(c) = &opts.c_compiler {
                b.compiler(c);
            }
            let tool = b.try_get_compiler().map_err(|e| CompileError::NoCompiler {
                target,
                detail: e.to_string(),
            })?;
            let mut cmd = tool.to_command();
            cmd.args(["-std=c11", "-shared", "-fPIC", "-fno-math-errno"]);
            if !opts.portable {
                cmd.arg("-march=native");
            }
            Ok(cmd)
        }
        Target::Rust => {
            let rustc = opts
                .rustc
                .clone()
                .or_else(|| std::env::var_os("RUSTC").map(PathBuf::from))
                .unwrap_or_else(|| PathBuf::from("rustc"));
            let mut cmd = Command::new(rustc);
            cmd.args([
                "-O",
                "--edition",
                "2021",
                "--crate-type",
                "cdylib",
                "--crate-name",
                "slic_kernel",
                "-C",
                "debuginfo=0",
            ]);
            if opts.deny_warnings {
                cmd.args(["-D", "warnings"]);
            }
            if !opts.portable {
                cmd.args(["-C", "target-cpu=native"]);
            }
            Ok(cmd)
        }
    }
}

/// FNV-1a over bytes, 64 bits from a seed: stable across versions and platforms (the
/// cache outlives the binary), unlike std's hasher.
fn fnv1a(seed: u64, parts: &[&[u8]]) -> u64 {
    let mut h = seed;
    for part in parts {
        for b in *part {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x0000_0100_0000_01B3);
        }
        // a separator, so that parts never run into each other
        h ^= 0xFF;
        h = h.wrapping_mul(0x0000_0100_0000_01B3);
    }
    h
}

/// What identifies this machine's CPU for the cache key of kernels built for it: the
/// model and feature flags Linux reports for the first CPU; empty where there is no
/// `/proc/cpuinfo` (there, `portable` keeps a shared cache safe).
fn host_cpu() -> String {
    let Ok(info) = std::fs::read_to_string("/proc/cpuinfo") else {
        return String::new();
    };
    let mut out = String::from("\ncpu:");
    for line in info.lines().take_while(|l| !l.trim().is_empty()) {
        if let Some((k, v)) = line.split_once(':') {
            if matches!(k.trim(), "vendor_id" | "model name" | "flags" | "Features") {
                out.push_str(v.trim());
                out.push(';');
            }
        }
    }
    out
}

/// The command as text: what the cache key and error messages name.
fn describe(cmd: &Command) -> String {
    let mut s = cmd.get_program().to_string_lossy().into_owned();
    for a in cmd.get_args() {
        s.push(' ');
        s.push_str(&a.to_string_lossy());
    }
    s
}

/// Compiles `source` for `target` (or finds it in the cache) and opens the library.
pub fn compile(
    source: &str,
    target: Target,
    opts: &CompileOptions,
) -> Result<Library, CompileError> {
    let mut cmd = compiler_command(target, opts)?;
    let text = describe(&cmd);
    // built for this CPU: a cache shared with another machine (a network home directory)
    // must not hand it a library with instructions its CPU lacks
    let cpu = if opts.portable {
        String::new()
    } else {
        host_cpu()
    };
    let keyed = [text.as_bytes(), cpu.as_bytes()].concat();
    let key = format!(
        "{:016x}{:016x}",
        fnv1a(0xcbf2_9ce4_8422_2325, &[source.as_bytes(), &keyed]),
        fnv1a(0x8422_2325_cbf2_9ce4, &[&keyed, source.as_bytes()])
    );
    let dir = cache_dir(opts)?;
    std::fs::create_dir_all(&dir)
        .map_err(|e| CompileError::Cache(format!("cannot create {}: {e}", dir.display())))?;
    let ext = std::env::consts::DLL_EXTENSION;
    let lib_path = dir.join(format!("kernel-{}-{key}.{ext}", target.name()));
    if lib_path.exists() {
        return open(&lib_path, true);
    }
    let src_ext = match target {
        Target::C => "c",
        Target::Rust => "rs",
    };
    // written and compiled under names of this process and build, then renamed into place, so two
    // processes building one kernel never see half a library
    static BUILDS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = BUILDS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let pid = format!("{}-{n}", std::process::id());
    let src_path = dir.join(format!("kernel-{}-{key}.{pid}.{src_ext}", target.name()));
    let tmp_path = dir.join(format!("kernel-{}-{key}.{pid}.tmp.{ext}", target.name()));
    std::fs::write(&src_path, source)
        .map_err(|e| CompileError::Cache(format!("cannot write {}: {e}", src_path.display())))?;
    cmd.arg("-o").arg(&tmp_path).arg(&src_path);
    if target == Target::C {
        cmd.arg("-lm");
    }
    let output = cmd.output();
    if output.is_err() {
        let _ = std::fs::remove_file(&src_path);
    }
    let output = match output {
        Ok(o) => o,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(CompileError::NoCompiler {
                target,
                detail: format!("`{}` not found", cmd.get_program().to_string_lossy()),
            })
        }
        Err(e) => {
            return Err(CompileError::NoCompiler {
                target,
                detail: format!("cannot run `{}`: {e}", cmd.get_program().to_string_lossy()),
            })
        }
    };
    if !output.status.success() {
        let _ = std::fs::remove_file(&src_path);
        let _ = std::fs::remove_file(&tmp_path);
        return Err(CompileError::Failed {
            compiler: text,
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        });
    }
    // the source stays beside its library, for a profiler's annotations and for a reader
    // asking what ran; the library is renamed last, so a cache hit always has its source
    let _ = std::fs::rename(
        &src_path,
        dir.join(format!("kernel-{}-{key}.{src_ext}", target.name())),
    );
    std::fs::rename(&tmp_path, &lib_path).map_err(|e| {
        CompileError::Cache(format!(
            "cannot move the library into {}: {e}",
            dir.display()
        ))
    })?;
    open(&lib_path, false)
}

fn open(path: &Path, cache_hit: bool) -> Result<Library, CompileError> {
    // SAFETY: the library is one this module compiled from an emitted kernel; loading it
    // runs no initialisers of ours (the kernels have none)
    let lib = unsafe { libloading::Library::new(path) }
        .map_err(|e| CompileError::Load(format!("{}: {e}", path.display())))?;
    Ok(Library {
        lib,
        path: path.to_path_buf(),
        cache_hit,
    })
}
