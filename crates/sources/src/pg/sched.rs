//! The server's processes' CPU waits beside a snapshot: `/proc/PID/schedstat` of each
//! process `pg_stat_activity` lists, where the server runs on this host. A pid counts
//! only when /proc has it as a postgres process started when PostgreSQL says it
//! started: a remote server, or one in another pid namespace, gives no figure, and the
//! snapshot says why.

use super::{
    parse_proc_io, parse_schedstat, parse_stat_minor_faults, parse_stat_start, ProcessSched,
    SchedSnapshot,
};

/// A server process as `pg_stat_activity` lists it.
pub struct Listed {
    pub pid: u32,
    pub backend_type: String,
    /// backend_start, seconds since 1970.
    pub started: f64,
}

/// How far a process's start in /proc may be from PostgreSQL's backend_start: /proc
/// gives whole seconds of boot time and clock ticks after it.
const START_SLACK_S: f64 = 3.0;

/// Reads the processes `listed`, and says why any could not be.
pub fn read(listed: &[Listed]) -> SchedSnapshot {
    let boot = boot_time();
    let hz = dbio_stats::cpu::clock_ticks();
    let mut out = SchedSnapshot::default();
    let (mut absent, mut other, mut later, mut unreadable) = (0, 0, 0, 0);
    for l in listed {
        let dir = format!("/proc/{}", l.pid);
        let Ok(comm) = std::fs::read_to_string(format!("{dir}/comm")) else {
            absent += 1;
            continue;
        };
        let comm = comm.trim();
        if !(comm.starts_with("postgres") || comm == "postmaster") {
            other += 1;
            continue;
        }
        let stat = std::fs::read_to_string(format!("{dir}/stat")).ok();
        let start = stat
            .as_deref()
            .and_then(parse_stat_start)
            .zip(boot)
            .map(|(ticks, boot)| boot + ticks as f64 / hz);
        match start {
            Some(s) if (s - l.started).abs() <= START_SLACK_S => {}
            Some(_) => {
                later += 1;
                continue;
            }
            None => {
                unreadable += 1;
                continue;
            }
        }
        let Some((delay, slices)) = std::fs::read_to_string(format!("{dir}/schedstat"))
            .ok()
            .and_then(|t| parse_schedstat(&t))
        else {
            unreadable += 1;
            continue;
        };
        out.processes.push(ProcessSched {
            pid: l.pid,
            backend_type: l.backend_type.clone(),
            started: l.started,
            run_delay_ns: delay,
            timeslices: slices,
            minor_faults: stat
                .as_deref()
                .and_then(parse_stat_minor_faults)
                .unwrap_or(0),
            // Readable by root and the server's own user only.
            read_bytes: std::fs::read_to_string(format!("{dir}/io"))
                .ok()
                .and_then(|t| parse_proc_io(&t, "read_bytes")),
        });
    }
    let mut why = Vec::new();
    if absent > 0 {
        why.push(format!("{absent} not in /proc"));
    }
    if other > 0 {
        why.push(format!("{other} another program's pid here"));
    }
    if later > 0 {
        why.push(format!(
            "{later} a process started at another time than PostgreSQL says"
        ));
    }
    if unreadable > 0 {
        why.push(format!(
            "{unreadable} whose /proc/PID/stat or schedstat could not be read"
        ));
    }
    if listed.is_empty() {
        out.unread = Some(
            "pg_stat_activity listed no server process with its start (a role without \
             pg_read_all_stats sees only its own sessions')"
                .into(),
        );
    } else if out.processes.is_empty() {
        out.unread = Some(format!(
            "none of the {} processes pg_stat_activity lists is this host's ({}): a \
             server on another host or in another pid namespace",
            listed.len(),
            why.join(", ")
        ));
    } else if !why.is_empty() {
        out.unread = Some(format!(
            "{} of the {} processes pg_stat_activity lists not read: {}",
            listed.len() - out.processes.len(),
            listed.len(),
            why.join(", ")
        ));
    }
    out
}

/// When this host booted, seconds since 1970 (`btime` of /proc/stat).
fn boot_time() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/stat").ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix("btime "))
        .and_then(|v| v.trim().parse::<f64>().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> f64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs_f64()
    }

    #[test]
    fn a_pid_that_is_not_a_postgres_process_here_gives_no_figure_and_says_why() {
        // This test's own process: not postgres.
        let me = Listed {
            pid: std::process::id(),
            backend_type: "client backend".into(),
            started: now(),
        };
        let s = read(&[me]);
        assert!(s.processes.is_empty());
        let why = s.unread.unwrap();
        assert!(
            why.starts_with("none of the 1 processes pg_stat_activity lists is this host's"),
            "{why}"
        );
        assert!(why.contains("1 another program's pid here"), "{why}");
        // A pid no process has (above the kernel's largest).
        let gone = Listed {
            pid: 1 << 23,
            backend_type: "walwriter".into(),
            started: now(),
        };
        let why = read(&[gone]).unread.unwrap();
        assert!(why.contains("1 not in /proc"), "{why}");
        assert_eq!(
            read(&[]).unread.as_deref(),
            Some(
                "pg_stat_activity listed no server process with its start (a role without \
                 pg_read_all_stats sees only its own sessions')"
            )
        );
    }
}
