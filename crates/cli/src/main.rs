//! dbio: is this storage good enough for my database, and what is the best way to reach it?

mod age_loops;
mod cmd_age;
mod cmd_awr;
mod cmd_calibrate;
mod cmd_compare;
mod cmd_doctor;
mod cmd_frag;
mod cmd_matrix;
mod cmd_mysql;
mod cmd_nfs;
mod cmd_pg;
mod cmd_replay;
mod cmd_report;
mod cmd_run;
mod cmd_sweep;
mod cmd_verify;
mod common;
mod db_capture;
mod kernel_views;
mod mpi_calibrate;
mod mpi_run;
mod nfs_target;
mod provenance;
#[cfg(test)]
mod readme_examples;
mod run_flags;
mod slob_conf;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "dbio",
    version,
    about = "Database-shaped storage I/O: calibrate, run, sweep, compare, report, and a direct NFS client",
    long_about = "Database-shaped storage I/O: calibrate, run, sweep, compare, report, and a direct \
        NFS client.\n\n\
        Start with `dbio calibrate` (max IOPS, max MB/s and the latency at max IOPS, in about a \
        minute, on a local data set made in /var/tmp and kept for the next command), then `dbio run --profile oltp` for the I/O an \
        Oracle instance does. `dbio sweep` runs configurations against each other (A or B?) \
        and `dbio compare` tells which differences stand out of the noise. `dbio <command> \
        --help` explains every option."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    // The commands' help comes from their Args (about and long_about).
    Calibrate(cmd_calibrate::Args),
    Run(cmd_run::Args),
    Sweep(cmd_sweep::Args),
    Compare(cmd_compare::Args),
    Awr(cmd_awr::Args),
    Replay(cmd_replay::Args),
    Pg(cmd_pg::Args),
    Mysql(cmd_mysql::Args),
    Matrix(cmd_matrix::Args),
    Age(cmd_age::Args),
    Report(cmd_report::Args),
    Verify(cmd_verify::Args),
    Frag(cmd_frag::Args),
    Doctor(cmd_doctor::Args),
    /// Direct NFS client: ping, ls, stat, cat, cp, df, mkdir, rm.
    Nfs(cmd_nfs::Args),
}

/// Keeps freed memory in the process instead of giving it back at once. The NFS
/// client receives into 256 KiB buffers that are freed when the last reply in them
/// is; glibc otherwise maps those from the system and returns them when freed (or
/// trims its heap), and every new buffer is faulted in page by page: on 8 KiB READs
/// at 32 outstanding over 4 connections that was 0.12-0.19 page faults and about a
/// tenth of the client's CPU per read.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn keep_freed_memory() {
    // SAFETY: mallopt only sets allocator parameters; it is called before any thread
    // starts. A refusal leaves glibc's defaults, which work, only slower.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 512 << 20);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn keep_freed_memory() {}

fn main() {
    keep_freed_memory();
    let cli = match Cli::try_parse_from(args()) {
        Ok(cli) => cli,
        Err(e) => common::exit_on_clap_error(e, &help_command()),
    };
    let result = match cli.command {
        Command::Calibrate(a) => cmd_calibrate::main(a),
        Command::Run(a) => cmd_run::main(a),
        Command::Sweep(a) => cmd_sweep::main(a),
        Command::Compare(a) => cmd_compare::main(a).map(|()| 0),
        Command::Awr(a) => cmd_awr::main(a),
        Command::Replay(a) => cmd_replay::main(a),
        Command::Pg(a) => cmd_pg::main(a),
        Command::Mysql(a) => cmd_mysql::main(a),
        Command::Matrix(a) => cmd_matrix::main(a),
        Command::Age(a) => cmd_age::main(a),
        Command::Report(a) => cmd_report::main(a).map(|()| 0),
        Command::Verify(a) => cmd_verify::main(a),
        Command::Frag(a) => cmd_frag::main(a).map(|()| 0),
        Command::Doctor(a) => cmd_doctor::main(a),
        Command::Nfs(a) => cmd_nfs::main(a),
    };
    match result {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            // One line, naming what and where; no backtrace.
            let line = one_line(&e);
            if let Some(code) = common::ended_by_signal(&line) {
                std::process::exit(code);
            }
            eprintln!("dbio: {line}");
            std::process::exit(2);
        }
    }
}

/// The command line, with `dbio compare`'s set separators (`--` between sets of results)
/// kept as values: option parsing would take the first `--` and drop the others.
fn args() -> Vec<std::ffi::OsString> {
    with_set_breaks(std::env::args_os().collect())
}

/// `args` with `dbio compare`'s set separators marked (see [`args`]).
fn with_set_breaks(mut args: Vec<std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    if args.get(1).is_some_and(|a| a == "compare") {
        for a in args.iter_mut().skip(2) {
            if a == "--" {
                *a = cmd_compare::SET_BREAK.into();
            }
        }
    }
    args
}

/// The command whose `--help` explains what went wrong on the command line:
/// the deepest subcommand named (`dbio nfs ls`), `dbio` when none is.
fn help_command() -> String {
    use clap::CommandFactory;
    let mut cmd = Cli::command();
    let mut path = vec!["dbio".to_string()];
    for a in std::env::args().skip(1) {
        if a.starts_with('-') {
            continue;
        }
        match cmd.find_subcommand(&a) {
            Some(sub) => {
                path.push(sub.get_name().to_string());
                cmd = sub.clone();
            }
            None => break,
        }
    }
    path.join(" ")
}

/// The error and its causes on one line, leaving out a cause whose text
/// the line already holds (many messages embed their source).
fn one_line(e: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in e.chain() {
        let mut text = cause.to_string();
        if line.contains(&text) {
            continue;
        }
        // A cause that starts with what the line already names (its path:
        // `--target /x` then `/x: No such file`) says it once.
        if let Some((head, rest)) = text.split_once(": ") {
            if !line.is_empty() && line.contains(head) {
                text = rest.to_string();
            }
        }
        if !line.is_empty() {
            line.push_str(": ");
        }
        line.push_str(&text);
    }
    line.replace('\n', " ")
}

#[cfg(test)]
mod tests {
    use super::one_line;

    #[derive(Debug)]
    struct Embeds(std::io::Error);
    impl std::fmt::Display for Embeds {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "/x: {}", self.0)
        }
    }
    impl std::error::Error for Embeds {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.0)
        }
    }

    #[test]
    fn causes_are_shown_once_on_one_line() {
        let io = std::io::Error::other("disk\non fire");
        let e = anyhow::Error::new(Embeds(io));
        assert_eq!(one_line(&e), "/x: disk on fire");
        let e = anyhow::Error::new(std::io::Error::other("inner")).context("outer");
        assert_eq!(one_line(&e), "outer: inner");
        let io = std::io::Error::other("No such file or directory");
        let e = anyhow::Error::new(Embeds(io)).context("--target /x");
        assert_eq!(one_line(&e), "--target /x: No such file or directory");
    }
}
