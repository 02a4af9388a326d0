//! Reading a live PostgreSQL: the connection (a libpq conninfo or URI, with libpq's
//! `PG*` variables and password file filled in, since the client crate reads neither)
//! and one snapshot of the statistics views, read in a transaction of its own.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use super::{
    PgCapture, PgSetting, PgSnapshot, PgSnapshotFile, RelationReads, Sessions, CAPTURE_FORMAT,
    CAPTURE_KIND, OLDEST_VERSION_NUM, SETTINGS, SNAPSHOT_KIND, VIEWS,
};
use anyhow::{anyhow, bail};
use postgres::config::Host;
use postgres::{Client, Config, NoTls};

use super::sched;

/// How long to wait for the server to answer the connection.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// A connection and what it was made to.
pub struct Server {
    pub client: Client,
    /// host:port/database as user (no password).
    pub target: String,
    pub version: String,
    pub version_num: u32,
}

/// `conninfo` with what it leaves out taken from `PGHOST`, `PGPORT`, `PGUSER`,
/// `PGDATABASE`, `PGPASSWORD`, then the password file, as libpq does.
pub fn config(conninfo: &str) -> anyhow::Result<Config> {
    let mut c = Config::from_str(conninfo).map_err(|e| {
        anyhow!("conninfo {conninfo:?}: {e} (give key=value pairs or a postgresql:// URI)")
    })?;
    let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    if c.get_hosts().is_empty() {
        match env("PGHOST") {
            Some(h) => {
                c.host(&h);
            }
            // libpq's default: the Unix socket directory Debian builds it with.
            None if std::path::Path::new("/var/run/postgresql").is_dir() => {
                c.host_path("/var/run/postgresql");
            }
            None => {
                c.host("localhost");
            }
        }
    }
    if c.get_ports().is_empty() {
        if let Some(p) = env("PGPORT") {
            let p = p
                .parse::<u16>()
                .map_err(|_| anyhow!("PGPORT {p:?}: not a port number"))?;
            c.port(p);
        }
    }
    if c.get_user().is_none() {
        let user = env("PGUSER")
            .or_else(|| env("USER"))
            .unwrap_or_else(|| "postgres".into());
        c.user(&user);
    }
    if c.get_dbname().is_none() {
        let db = env("PGDATABASE").unwrap_or_else(|| c.get_user().unwrap_or("").to_string());
        c.dbname(&db);
    }
    if c.get_password().is_none() {
        if let Some(p) = env("PGPASSWORD") {
            c.password(p);
        } else if let Some(p) = pgpass(&c) {
            c.password(p);
        }
    }
    if c.get_connect_timeout().is_none() {
        c.connect_timeout(CONNECT_TIMEOUT);
    }
    c.application_name("dbio pg");
    Ok(c)
}

/// host:port/database as user, for messages and the capture file.
pub fn describe(c: &Config) -> String {
    let host = match c.get_hosts().first() {
        Some(Host::Tcp(h)) => h.clone(),
        Some(Host::Unix(p)) => p.display().to_string(),
        None => "localhost".into(),
    };
    let port = c.get_ports().first().copied().unwrap_or(5432);
    format!(
        "{host}:{port}/{} as {}",
        c.get_dbname().unwrap_or(""),
        c.get_user().unwrap_or("")
    )
}

/// The password for `c` from `PGPASSFILE` or `~/.pgpass`: lines
/// host:port:database:user:password, `*` matching anything, the first match wins.
fn pgpass(c: &Config) -> Option<Vec<u8>> {
    let path = std::env::var_os("PGPASSFILE")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".pgpass")))?;
    let text = std::fs::read_to_string(path).ok()?;
    let host = match c.get_hosts().first() {
        Some(Host::Tcp(h)) => h.clone(),
        // libpq matches a socket connection against "localhost".
        _ => "localhost".into(),
    };
    let port = c.get_ports().first().copied().unwrap_or(5432).to_string();
    let want = [
        host.as_str(),
        port.as_str(),
        c.get_dbname().unwrap_or(""),
        c.get_user().unwrap_or(""),
    ];
    for line in text.lines() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let fields = split_pgpass(line);
        if fields.len() < 5 {
            continue;
        }
        if fields[..4]
            .iter()
            .zip(want)
            .all(|(f, w)| f == "*" || f == w)
        {
            return Some(fields[4].clone().into_bytes());
        }
    }
    None
}

/// A password-file line's fields: `:` separates, `\` escapes `:` and `\`.
fn split_pgpass(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut chars = line.chars();
    while let Some(ch) = chars.next() {
        match ch {
            '\\' => fields.last_mut().unwrap().extend(chars.next()),
            ':' if fields.len() < 5 => fields.push(String::new()),
            _ => fields.last_mut().unwrap().push(ch),
        }
    }
    fields
}

/// Connects, in one line on failure: the server unreachable, the login refused, or
/// a server too old.
pub fn connect(conninfo: &str) -> anyhow::Result<Server> {
    let c = config(conninfo)?;
    let target = describe(&c);
    // The client's own timeout covers the TCP connect only; a server that accepts and
    // never answers its startup would hold the login forever.
    let (tx, rx) = std::sync::mpsc::channel();
    let login = c.clone();
    std::thread::spawn(move || {
        let _ = tx.send(login.connect(NoTls));
    });
    let timeout = c.get_connect_timeout().copied().unwrap_or(CONNECT_TIMEOUT);
    let mut client = match rx.recv_timeout(timeout + Duration::from_secs(1)) {
        Ok(r) => r.map_err(|e| connect_error(&target, &e))?,
        Err(_) => bail!(
            "PostgreSQL at {target} did not answer the login within {} s",
            timeout.as_secs()
        ),
    };
    let row = client
        .query_one(
            "SELECT version(), current_setting('server_version_num')::int",
            &[],
        )
        .map_err(|e| anyhow!("PostgreSQL at {target}: {}", db_message(&e)))?;
    let version: String = row.get(0);
    let version_num = row.get::<_, i32>(1).max(0) as u32;
    if version_num < OLDEST_VERSION_NUM {
        bail!(
            "PostgreSQL at {target} is {}: dbio reads 14 and later (pg_stat_wal came in 14)",
            version.split(" on ").next().unwrap_or(&version)
        );
    }
    Ok(Server {
        client,
        target,
        version,
        version_num,
    })
}

fn connect_error(target: &str, e: &postgres::Error) -> anyhow::Error {
    if let Some(db) = e.as_db_error() {
        // The server answered and said no: a refused login, a missing database.
        return anyhow!(
            "PostgreSQL at {target} refused the connection: {}",
            db.message()
        );
    }
    let mut why = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        why = s.to_string();
        source = s.source();
    }
    if why.contains("password missing") {
        return anyhow!(
            "PostgreSQL at {target} asks for a password: give password= in the conninfo, \
             PGPASSWORD, or a line in ~/.pgpass"
        );
    }
    anyhow!("cannot reach PostgreSQL at {target}: {why}")
}

/// A server error's own message, else the client's.
pub fn db_message(e: &postgres::Error) -> String {
    e.as_db_error()
        .map_or_else(|| e.to_string(), |d| d.message().to_string())
}

/// The settings of [`SETTINGS`] this server has.
pub fn settings(s: &mut Server) -> anyhow::Result<BTreeMap<String, PgSetting>> {
    let names: Vec<String> = SETTINGS.iter().map(|s| s.to_string()).collect();
    let rows = s
        .client
        .query(
            "SELECT name, setting, unit FROM pg_settings WHERE name = ANY($1)",
            &[&names],
        )
        .map_err(|e| {
            anyhow!(
                "PostgreSQL at {}: pg_settings: {}",
                s.target,
                db_message(&e)
            )
        })?;
    Ok(rows
        .iter()
        .map(|r| {
            (
                r.get::<_, String>(0),
                PgSetting {
                    setting: r.get(1),
                    unit: r.get(2),
                },
            )
        })
        .collect())
}

/// Every database's size, bytes.
pub fn database_sizes(s: &mut Server) -> anyhow::Result<BTreeMap<String, u64>> {
    let rows = s
        .client
        .query(
            "SELECT datname, pg_database_size(oid) FROM pg_database WHERE datallowconn",
            &[],
        )
        .map_err(|e| {
            anyhow!(
                "PostgreSQL at {}: pg_database_size: {}",
                s.target,
                db_message(&e)
            )
        })?;
    Ok(rows
        .iter()
        .map(|r| (r.get::<_, String>(0), r.get::<_, i64>(1).max(0) as u64))
        .collect())
}

/// Client sessions now, besides this one: (connected, active).
pub fn sessions(s: &mut Server) -> anyhow::Result<(u32, u32)> {
    let row = s
        .client
        .query_one(
            "SELECT count(*) FILTER (WHERE state IS NOT NULL), \
                    count(*) FILTER (WHERE state = 'active') \
             FROM pg_stat_activity \
             WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()",
            &[],
        )
        .map_err(|e| {
            anyhow!(
                "PostgreSQL at {}: pg_stat_activity: {}",
                s.target,
                db_message(&e)
            )
        })?;
    let n = |i| row.get::<_, i64>(i).max(0) as u32;
    Ok((n(0), n(1)))
}

/// One snapshot: every view the server has, in one transaction of its own (views
/// read in a transaction are cached to its end, so each snapshot needs a new one).
pub fn snapshot(s: &mut Server) -> anyhow::Result<PgSnapshot> {
    let target = s.target.clone();
    let err = |what: &str, e: postgres::Error| {
        anyhow!("PostgreSQL at {target}: {what}: {}", db_message(&e))
    };
    let mut tx = s.client.transaction().map_err(|e| err("BEGIN", e))?;
    let row = tx
        .query_one(
            "SELECT extract(epoch FROM clock_timestamp())::float8, \
                    pg_postmaster_start_time()::text",
            &[],
        )
        .map_err(|e| err("clock", e))?;
    let mut snap = PgSnapshot {
        taken_at: row.get(0),
        postmaster_start: row.get(1),
        views: BTreeMap::new(),
        sched: None,
        host: None,
        relations: Vec::new(),
    };
    // The server's processes, whose CPU waits are read from /proc beside the views.
    let listed: Vec<sched::Listed> = tx
        .query(
            "SELECT pid, coalesce(backend_type, ''), \
                    extract(epoch FROM backend_start)::float8 \
             FROM pg_stat_activity \
             WHERE pid <> pg_backend_pid() AND backend_start IS NOT NULL",
            &[],
        )
        .map_err(|e| err("pg_stat_activity", e))?
        .iter()
        .map(|r| sched::Listed {
            pid: r.get::<_, i32>(0).max(0) as u32,
            backend_type: r.get(1),
            started: r.get(2),
        })
        .collect();
    for (view, since) in VIEWS {
        if s.version_num < since {
            continue;
        }
        // The view names are constants of dbio's, not input.
        let sql = format!("SELECT coalesce(json_agg(v), '[]')::text FROM {view} v");
        let text: String = tx
            .query_one(sql.as_str(), &[])
            .map_err(|e| err(view, e))?
            .get(0);
        let rows: Vec<serde_json::Value> = serde_json::from_str(&text)
            .map_err(|e| anyhow!("PostgreSQL at {target}: {view}: {e}"))?;
        snap.views.insert(view.to_string(), rows);
    }
    snap.relations = relations(&mut tx).map_err(|e| err("pg_statio_all_tables", e))?;
    let place = tx
        .query_one(
            "SELECT (SELECT setting FROM pg_settings WHERE name = 'data_directory'), \
                    pg_backend_pid()",
            &[],
        )
        .map_err(|e| err("data_directory", e))?;
    let data_directory: Option<String> = place.get(0);
    let own_pid = place.get::<_, i32>(1).max(0) as u32;
    tx.commit().map_err(|e| err("COMMIT", e))?;
    let sched = sched::read(&listed);
    // Only a server whose processes are this host's has its device and memory here.
    if !sched.processes.is_empty() {
        snap.host = Some(super::host::read(
            data_directory.as_deref(),
            parent_of(own_pid),
        ));
    }
    snap.sched = Some(sched);
    Ok(snap)
}

/// The capture of `begin` and `end`, taken from `s` with `sessions` seen between:
/// what the server says of itself (its databases' sizes, its settings) read at the end.
pub fn capture(
    s: &mut Server,
    begin: PgSnapshot,
    end: PgSnapshot,
    sessions: Sessions,
) -> anyhow::Result<PgCapture> {
    Ok(PgCapture {
        kind: CAPTURE_KIND.into(),
        format: CAPTURE_FORMAT,
        server: s.version.clone(),
        server_version_num: s.version_num,
        target: s.target.clone(),
        database_bytes: database_sizes(s)?,
        settings: settings(s)?,
        sessions,
        begin,
        end,
    })
}

/// One snapshot now as a file of its own, to be joined with a later one; `settings`
/// are the server's, read already.
pub fn snapshot_file(
    s: &mut Server,
    settings: BTreeMap<String, PgSetting>,
) -> anyhow::Result<PgSnapshotFile> {
    let (n, active) = sessions(s)?;
    Ok(PgSnapshotFile {
        kind: SNAPSHOT_KIND.into(),
        format: CAPTURE_FORMAT,
        server: s.version.clone(),
        server_version_num: s.version_num,
        target: s.target.clone(),
        database_bytes: database_sizes(s)?,
        settings,
        sessions: Sessions {
            max: n,
            mean: f64::from(n),
            max_active: active,
            samples: 1,
        },
        snapshot: snapshot(s)?,
    })
}

/// Reads per relation of the database connected to, largest first (at most 1000).
fn relations(tx: &mut postgres::Transaction) -> Result<Vec<RelationReads>, postgres::Error> {
    let rows = tx.query(
        "SELECT relid::int8, schemaname || '.' || relname, \
                coalesce(heap_blks_read, 0) + coalesce(toast_blks_read, 0), \
                coalesce(idx_blks_read, 0) + coalesce(tidx_blks_read, 0), \
                coalesce(pg_table_size(relid), 0), coalesce(pg_indexes_size(relid), 0), \
                coalesce(heap_blks_hit, 0) + coalesce(toast_blks_hit, 0), \
                coalesce(idx_blks_hit, 0) + coalesce(tidx_blks_hit, 0) \
         FROM pg_statio_all_tables \
         ORDER BY 3 + 4 + 7 + 8 DESC, 5 DESC LIMIT 1000",
        &[],
    )?;
    let n = |r: &postgres::Row, i| r.get::<_, i64>(i).max(0) as u64;
    Ok(rows
        .iter()
        .map(|r| RelationReads {
            relid: n(r, 0) as u32,
            name: r.get(1),
            heap_reads: n(r, 2),
            index_reads: n(r, 3),
            heap_bytes: n(r, 4),
            index_bytes: n(r, 5),
            heap_hits: n(r, 6),
            index_hits: n(r, 7),
        })
        .collect())
}

/// The parent of `pid` here (a backend's: the postmaster), from /proc/PID/stat.
fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat[stat.rfind(')')? + 1..]
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pgpass_lines_split_with_escapes() {
        assert_eq!(
            split_pgpass(r"db\:1:5432:*:me:pa\:ss:word"),
            vec!["db:1", "5432", "*", "me", "pa:ss:word"]
        );
    }

    #[test]
    fn conninfo_and_uri_read_alike() {
        let a = config("host=127.0.0.1 port=5999 user=u dbname=d password=p").unwrap();
        let b = config("postgresql://u:p@127.0.0.1:5999/d").unwrap();
        assert_eq!(describe(&a), "127.0.0.1:5999/d as u");
        assert_eq!(describe(&a), describe(&b));
        let e = config("host=").err().map(|e| e.to_string());
        assert!(e.is_none() || e.unwrap().starts_with("conninfo"));
        let e = config("nonsense").unwrap_err().to_string();
        assert!(e.starts_with("conninfo \"nonsense\""), "{e}");
    }
}
