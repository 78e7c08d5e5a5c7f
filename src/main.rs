//! The `boardwatch` command line: one subcommand per job, each in its own module under `cli/`.

mod cli;

use clap::Parser;

fn main() -> std::process::ExitCode {
    let args = cli::Cli::parse();
    if args.command.writes_to_a_pipe() {
        // `boardwatch pdn show ... | head` should end quietly, as Unix tools do, instead of
        // panicking on the closed pipe: restore the default SIGPIPE that Rust's runtime ignores.
        // (Not for the daemon, whose sockets rely on EPIPE errors.)
        unsafe {
            libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        }
    }
    cli::init_tracing(args.verbose, matches!(args.command, cli::Command::Run(_) | cli::Command::Hall(_)));
    match cli::run(args.command) {
        Ok(code) => code,
        Err(err) => {
            // `{:#}` prints the whole chain: "reading games.pdn: line 3, column 7: ...".
            eprintln!("error: {err:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
