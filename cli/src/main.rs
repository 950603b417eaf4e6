//! The `slic-cas` command: argument parsing, file and data I/O, and rendering of
//! diagnostics. No algorithm lives here: every command is a few calls into the library
//! crates (`slic-algebra` for reading and printing terms, `slic-semantics` for sampling, `slic-simplify` and `slic-equiv` for the transforms and verdicts).
//!
//! Exit codes: 0 success (also `--help` and `--version`), 1 a user error (bad arguments,
//! or bad input reported as `file:line:col` with the source line), 2 an internal error (a
//! bug in slic-cas; never expected). `equiv` also exits 1 when the programs differ and 3
//! when it cannot decide.
//! The work runs on a thread with a large stack because term depth follows program
//! length (a 10,000-line program is a 10,000-deep chain of binds).

mod args;
mod chain;
mod commands;
mod gibbs;
mod plot;
mod report;
mod run;

use std::process::ExitCode;

use clap::Parser as _;

/// Terms and syntax trees are many small allocations; mimalloc makes the front end about
/// a quarter faster than the system allocator (benches/frontend.rs).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Stack for the worker thread: deep programs recurse deeply (see the module doc).
const WORKER_STACK_BYTES: usize = 512 * 1024 * 1024;

fn main() -> ExitCode {
    let cli = match args::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return args::exit_for(&e),
    };
    // A panic is a bug in slic-cas, never the user's fault: report it as internal.
    std::panic::set_hook(Box::new(|info| {
        eprintln!("internal error: {info}");
        eprintln!("this is a bug in slic-cas; please report it with the input that caused it");
    }));
    let worker = std::thread::Builder::new()
        .name("slic-cas".into())
        .stack_size(WORKER_STACK_BYTES)
        .spawn(move || commands::run(cli));
    let outcome = match worker {
        Ok(handle) => handle.join(),
        Err(e) => {
            eprintln!("internal error: cannot start the worker thread: {e}");
            return ExitCode::from(2);
        }
    };
    match outcome {
        Ok(Ok(())) => ExitCode::SUCCESS,
        Ok(Err(commands::Failure::User(message))) => {
            eprint!("{message}");
            if !message.ends_with('\n') {
                eprintln!();
            }
            ExitCode::from(1)
        }
        Ok(Err(commands::Failure::Exit(code))) => ExitCode::from(code),
        Ok(Err(commands::Failure::Internal(e))) => {
            eprintln!("internal error: {e:#}");
            ExitCode::from(2)
        }
        // the panic hook has already printed the message
        Err(_) => ExitCode::from(2),
    }
}
