//! Reading a live MySQL or MariaDB: the connection, named as its own clients name it
//! (a `mysql://` URL, `--defaults-file`, `~/.my.cnf`, a socket, `MYSQL_*` variables),
//! and one snapshot of InnoDB's counters and `performance_schema`'s file I/O.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::{
    FileIo, MyCapture, MyServer, MySnapshot, MySnapshotFile, ServerProcess, TimerSum,
    CAPTURE_FORMAT, CAPTURE_KIND, SETTINGS, SNAPSHOT_KIND, STATUS,
};
use crate::pg::Sessions;
use anyhow::{anyhow, bail};
use mysql::prelude::Queryable;
use mysql::{Conn, Opts, OptsBuilder};

/// How long to wait for the server to answer the connection, and each query.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
const QUERY_TIMEOUT: Duration = Duration::from_secs(30);
/// Where Debian's and most distributions' servers put their socket.
const DEFAULT_SOCKET: &str = "/run/mysqld/mysqld.sock";

/// How the server was named to reach it (`dbio mysql`'s URL, --defaults-file and
/// --socket): [`endpoint`] completes it as the server's own clients would.
#[derive(Clone, Debug, Default)]
pub struct ServerNamed {
    /// mysql://USER:PASSWORD@HOST:PORT/DATABASE (mariadb:// too; ?socket=PATH).
    pub url: Option<String>,
    /// Read the [client] group of this option file only (not ~/.my.cnf).
    pub defaults_file: Option<PathBuf>,
    /// The server's Unix socket (for localhost).
    pub socket: Option<String>,
}

/// Where and as whom: what a client needs, before it connects.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Endpoint {
    pub user: Option<String>,
    pub password: Option<String>,
    pub host: Option<String>,
    pub port: Option<u16>,
    pub socket: Option<String>,
    pub database: Option<String>,
}

impl Endpoint {
    /// Fills what `self` leaves out from `other`.
    fn or(mut self, other: Endpoint) -> Endpoint {
        self.user = self.user.or(other.user);
        self.password = self.password.or(other.password);
        self.host = self.host.or(other.host);
        self.port = self.port.or(other.port);
        self.socket = self.socket.or(other.socket);
        self.database = self.database.or(other.database);
        self
    }

    /// Over the socket: no host, or "localhost" (as MySQL's clients take it).
    fn local(&self) -> bool {
        !matches!(self.host.as_deref(), Some(h) if h != "localhost")
    }

    /// "127.0.0.1:3306 as dbio" or "/run/mysqld/mysqld.sock as dbio" (no password).
    pub fn target(&self) -> String {
        let place = if self.local() {
            self.socket.clone().unwrap_or_else(|| DEFAULT_SOCKET.into())
        } else {
            format!(
                "{}:{}",
                self.host.as_deref().unwrap_or("localhost"),
                self.port.unwrap_or(3306)
            )
        };
        format!("{place} as {}", self.user.as_deref().unwrap_or("root"))
    }

    fn opts(&self) -> Opts {
        let mut b = OptsBuilder::new()
            .user(Some(self.user.clone().unwrap_or_else(|| "root".into())))
            .pass(self.password.clone())
            .db_name(self.database.clone())
            .prefer_socket(false)
            .tcp_connect_timeout(Some(CONNECT_TIMEOUT))
            .read_timeout(Some(QUERY_TIMEOUT))
            .write_timeout(Some(QUERY_TIMEOUT));
        if self.local() {
            let socket = self.socket.clone().unwrap_or_else(|| DEFAULT_SOCKET.into());
            b = b.socket(Some(socket));
        } else {
            b = b
                .ip_or_hostname(self.host.clone())
                .tcp_port(self.port.unwrap_or(3306));
        }
        Opts::from(b)
    }
}

/// A `mysql://` or `mariadb://` URL's parts.
pub fn parse_url(url: &str) -> anyhow::Result<Endpoint> {
    let bad = |why: &str| anyhow!("URL {url:?}: {why} (mysql://USER:PASSWORD@HOST:PORT/DATABASE)");
    let rest = url
        .strip_prefix("mysql://")
        .or_else(|| url.strip_prefix("mariadb://"))
        .ok_or_else(|| bad("not a mysql:// URL"))?;
    let (rest, query) = rest.split_once('?').unwrap_or((rest, ""));
    let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
    let (userinfo, hostport) = match authority.rsplit_once('@') {
        Some((u, h)) => (Some(u), h),
        None => (None, authority),
    };
    let mut e = Endpoint::default();
    if let Some(u) = userinfo {
        let (user, pass) = match u.split_once(':') {
            Some((a, b)) => (a, Some(b)),
            None => (u, None),
        };
        e.user = Some(decode(user).map_err(|w| bad(&w))?).filter(|s| !s.is_empty());
        e.password = pass.map(decode).transpose().map_err(|w| bad(&w))?;
    }
    let (host, port) = match hostport.rsplit_once(':') {
        Some((h, p)) if !h.ends_with(']') || hostport.starts_with('[') => (h, Some(p)),
        _ => (hostport, None),
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    e.host = (!host.is_empty()).then(|| host.to_string());
    if let Some(p) = port {
        e.port = Some(p.parse().map_err(|_| bad(&format!("port {p:?}")))?);
    }
    e.database = Some(decode(path).map_err(|w| bad(&w))?).filter(|s| !s.is_empty());
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        match pair.split_once('=') {
            Some(("socket", v)) => e.socket = Some(decode(v).map_err(|w| bad(&w))?),
            _ => {
                return Err(bad(&format!(
                    "unknown parameter {pair:?} (only socket=PATH)"
                )))
            }
        }
    }
    Ok(e)
}

fn decode(s: &str) -> Result<String, String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = s
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| format!("bad %-escape at {:?}", &s[i..]))?;
            out.push(hex);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| "not UTF-8 once %-decoded".into())
}

/// The `[client]` (and `[client-server]`, `[client-mariadb]`) groups of an option
/// file, as MySQL's clients read them; `file` names it in errors.
pub fn option_file(text: &str, file: &str) -> anyhow::Result<Endpoint> {
    let mut e = Endpoint::default();
    let mut in_client = false;
    for (n, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if line.starts_with('!') {
            continue; // !include and !includedir: other files, not read here
        }
        if let Some(group) = line.strip_prefix('[') {
            let group = group.trim_end_matches(']').trim();
            in_client = matches!(group, "client" | "client-server" | "client-mariadb");
            continue;
        }
        if !in_client {
            continue;
        }
        let (key, value) = match line.split_once('=') {
            Some((k, v)) => (k.trim(), v.trim()),
            None => (line, ""),
        };
        let value = value
            .strip_prefix('"')
            .and_then(|v| v.strip_suffix('"'))
            .or_else(|| value.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')))
            .unwrap_or(value)
            .to_string();
        match key.replace('_', "-").as_str() {
            "user" => e.user = Some(value),
            "password" => e.password = Some(value),
            "host" => e.host = Some(value),
            "socket" => e.socket = Some(value),
            "database" => e.database = Some(value),
            "port" => {
                let p = value.parse().map_err(|_| {
                    anyhow!("{file} line {}: port {value:?} is not a port number", n + 1)
                })?;
                e.port = Some(p);
            }
            _ => {}
        }
    }
    Ok(e)
}

/// The endpoint `a` names: the URL, then `--socket`, then the option file
/// (`--defaults-file`, else `~/.my.cnf` where it exists), then `MYSQL_*` variables.
pub fn endpoint(a: &ServerNamed) -> anyhow::Result<Endpoint> {
    let mut e = match &a.url {
        Some(u) => parse_url(u)?,
        None => Endpoint::default(),
    };
    if a.socket.is_some() {
        e.socket = a.socket.clone();
    }
    let file = match &a.defaults_file {
        Some(f) => Some(f.clone()),
        None => std::env::var_os("HOME")
            .map(|h| Path::new(&h).join(".my.cnf"))
            .filter(|p| p.is_file()),
    };
    if let Some(f) = file {
        let text = std::fs::read_to_string(&f)
            .map_err(|err| anyhow!("--defaults-file {}: {err}", f.display()))?;
        e = e.or(option_file(&text, &f.display().to_string())?);
    }
    let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    let port = match env("MYSQL_TCP_PORT") {
        Some(p) => Some(
            p.parse()
                .map_err(|_| anyhow!("MYSQL_TCP_PORT {p:?}: not a port number"))?,
        ),
        None => None,
    };
    Ok(e.or(Endpoint {
        user: None,
        password: env("MYSQL_PWD"),
        host: env("MYSQL_HOST"),
        port,
        socket: env("MYSQL_UNIX_PORT"),
        database: None,
    }))
}

/// A connection and what it was made to.
pub struct Server {
    conn: Conn,
    endpoint: Endpoint,
    pub target: String,
    pub version: String,
    pub comment: String,
}

/// Connects, or says in one line why not: unreachable, refused, too old.
pub fn connect(e: &Endpoint) -> anyhow::Result<Server> {
    let target = e.target();
    let mut conn = open(e, &target)?;
    let (version, comment): (String, String) = conn
        .query_first("SELECT VERSION(), @@version_comment")
        .map_err(|err| anyhow!("MySQL at {target}: {err}"))?
        .ok_or_else(|| anyhow!("MySQL at {target}: SELECT VERSION() returned nothing"))?;
    let probe = MyServer {
        version: version.clone(),
        ..MyServer::default()
    };
    if !probe.supported() {
        bail!(
            "{} {version} at {target} is older than MySQL 5.7 and MariaDB 10.2, whose \
             InnoDB counters and performance_schema dbio reads",
            probe.flavour()
        );
    }
    Ok(Server {
        conn,
        endpoint: e.clone(),
        target,
        version,
        comment,
    })
}

fn open(e: &Endpoint, target: &str) -> anyhow::Result<Conn> {
    Conn::new(e.opts()).map_err(|err| match &err {
        mysql::Error::MySqlError(m) if m.code == 1045 || m.code == 1698 => {
            anyhow!("MySQL at {target} refused the login: {}", m.message)
        }
        mysql::Error::MySqlError(m) => anyhow!("MySQL at {target}: {}", m.message),
        _ => anyhow!("cannot connect to MySQL at {target}: {err}"),
    })
}

impl Server {
    /// Connects again after the connection broke (a server restarted, a timeout).
    pub fn reconnect(&mut self) -> anyhow::Result<()> {
        self.conn = open(&self.endpoint, &self.target)?;
        Ok(())
    }

    fn fail(&self, what: &str, err: mysql::Error) -> anyhow::Error {
        anyhow!("MySQL at {}: {what}: {err}", self.target)
    }

    /// The server, its settings and the data's size.
    pub fn server(&mut self) -> anyhow::Result<MyServer> {
        let vars: Vec<(String, String)> = self
            .conn
            .query("SHOW GLOBAL VARIABLES")
            .map_err(|e| self.fail("SHOW GLOBAL VARIABLES", e))?;
        let settings = vars
            .into_iter()
            .filter(|(k, _)| SETTINGS.contains(&k.as_str()))
            .collect();
        let sizes = self.schema_bytes()?;
        Ok(MyServer {
            version: self.version.clone(),
            comment: self.comment.clone(),
            target: self.target.clone(),
            settings,
            schema_bytes: sizes,
        })
    }

    /// Bytes of InnoDB's tablespaces per schema: their files' sizes (`INNODB_SYS_
    /// TABLESPACES` in MariaDB, `INNODB_TABLESPACES` in MySQL 8, which PROCESS lets a
    /// monitoring account read), else the tables it may see (`information_schema.
    /// TABLES` lists only those it has privileges on).
    fn schema_bytes(&mut self) -> anyhow::Result<BTreeMap<String, u64>> {
        for view in ["INNODB_SYS_TABLESPACES", "INNODB_TABLESPACES"] {
            let sql = format!("SELECT NAME, FILE_SIZE FROM information_schema.{view}");
            let Ok(rows) = self.conn.query::<(String, Option<u64>), _>(sql) else {
                continue;
            };
            let mut sizes = BTreeMap::new();
            for (name, bytes) in rows {
                // "schema/table"; the system and undo tablespaces have no schema.
                let schema = name.split_once('/').map_or("(system)", |(s, _)| s);
                *sizes.entry(schema.to_string()).or_insert(0) += bytes.unwrap_or(0);
            }
            if !sizes.is_empty() {
                return Ok(sizes);
            }
        }
        let rows: Vec<(String, Option<u64>)> = self
            .conn
            .query(
                "SELECT TABLE_SCHEMA, CAST(SUM(DATA_LENGTH + INDEX_LENGTH) AS UNSIGNED) \
                 FROM information_schema.TABLES WHERE ENGINE = 'InnoDB' GROUP BY TABLE_SCHEMA",
            )
            .map_err(|e| self.fail("information_schema.TABLES", e))?;
        Ok(rows
            .into_iter()
            .filter_map(|(s, b)| Some((s, b?)))
            .collect())
    }

    /// One snapshot: the server's clock, the status counters, the file I/O.
    pub fn snapshot(&mut self) -> anyhow::Result<MySnapshot> {
        let (taken_at, pfs): (String, String) = self
            .conn
            .query_first("SELECT UNIX_TIMESTAMP(NOW(6)), @@performance_schema")
            .map_err(|e| self.fail("the server's clock", e))?
            .ok_or_else(|| anyhow!("MySQL at {}: no clock", self.target))?;
        let taken_at: f64 = taken_at
            .parse()
            .map_err(|_| anyhow!("MySQL at {}: clock {taken_at:?}", self.target))?;
        let rows: Vec<(String, String)> = self
            .conn
            .query("SHOW GLOBAL STATUS")
            .map_err(|e| self.fail("SHOW GLOBAL STATUS", e))?;
        let status: BTreeMap<String, u64> = rows
            .into_iter()
            .filter(|(k, _)| STATUS.contains(&k.as_str()))
            .filter_map(|(k, v)| Some((k, v.trim().parse().ok()?)))
            .collect();
        let mut s = MySnapshot {
            taken_at,
            status,
            ..MySnapshot::default()
        };
        if pfs == "1" || pfs.eq_ignore_ascii_case("ON") {
            match self.file_io() {
                Ok((events, instances)) if !events.is_empty() => {
                    s.file_events = events;
                    s.file_instances = instances;
                }
                Ok(_) => {
                    s.performance_schema_missing = Some(
                        "performance_schema counted no InnoDB file I/O (the \
                         wait/io/file/innodb/% instruments are off)"
                            .into(),
                    )
                }
                Err(e) => s.performance_schema_missing = Some(format!("performance_schema: {e}")),
            }
            // The statements' time, for how a transaction's reads are spaced; a server
            // whose statement instruments are off just gives none.
            s.statements = self.statement_time().ok().flatten();
            s.session_data_file = self.session_data_file().ok().flatten();
        } else {
            s.performance_schema_missing = Some("performance_schema was OFF".into());
        }
        match self.server_process() {
            Ok(p) => s.server_process = Some(p),
            Err(why) => s.server_process_missing = Some(why),
        }
        Ok(s)
    }

    /// The server's process, where it runs on this host: found by its pid file
    /// (`@@pid_file`), and taken only if it is a MariaDB or MySQL server.
    fn server_process(&mut self) -> Result<ServerProcess, String> {
        let file: Option<String> = self
            .conn
            .query_first("SELECT @@pid_file")
            .map_err(|e| format!("@@pid_file: {e}"))?;
        let file = file.ok_or("@@pid_file is empty")?;
        let text = std::fs::read_to_string(&file).map_err(|e| {
            format!("pid file {file}: {e} (the server runs on another host, or the capture cannot read its files)")
        })?;
        let pid: u32 = text
            .trim()
            .parse()
            .map_err(|_| format!("pid file {file}: {:?} is no process id", text.trim()))?;
        let comm = std::fs::read_to_string(format!("/proc/{pid}/comm"))
            .map_err(|e| format!("/proc/{pid}/comm: {e} (pid file {file})"))?;
        if !matches!(comm.trim(), "mariadbd" | "mysqld") {
            return Err(format!(
                "process {pid} of pid file {file} is {:?}, not the server",
                comm.trim()
            ));
        }
        let io = std::fs::read_to_string(format!("/proc/{pid}/io")).map_err(|e| {
            format!("/proc/{pid}/io: {e} (run the capture as the server's user or root)")
        })?;
        let syscr = crate::pg::parse_proc_io(&io, "syscr")
            .ok_or_else(|| format!("/proc/{pid}/io: no syscr"))?;
        Ok(ServerProcess { pid, syscr })
    }

    /// The sessions' calls on InnoDB's data files: the rows of users (background
    /// threads have none).
    fn session_data_file(&mut self) -> Result<Option<TimerSum>, mysql::Error> {
        let row: Option<(Option<u64>, Option<u64>)> = self.conn.query_first(
            "SELECT CAST(SUM(COUNT_STAR) AS UNSIGNED), CAST(SUM(SUM_TIMER_WAIT) AS UNSIGNED) \
             FROM performance_schema.events_waits_summary_by_user_by_event_name \
             WHERE USER IS NOT NULL AND EVENT_NAME = 'wait/io/file/innodb/innodb_data_file'",
        )?;
        Ok(match row {
            Some((Some(count), Some(sum_timer_wait))) => Some(TimerSum {
                count,
                sum_timer_wait,
            }),
            _ => None,
        })
    }

    fn statement_time(&mut self) -> Result<Option<TimerSum>, mysql::Error> {
        let row: Option<(Option<u64>, Option<u64>)> = self.conn.query_first(
            "SELECT CAST(SUM(COUNT_STAR) AS UNSIGNED), CAST(SUM(SUM_TIMER_WAIT) AS UNSIGNED) \
             FROM performance_schema.events_statements_summary_global_by_event_name",
        )?;
        Ok(match row {
            Some((Some(count), Some(sum_timer_wait))) if count > 0 => Some(TimerSum {
                count,
                sum_timer_wait,
            }),
            _ => None,
        })
    }

    fn file_io(&mut self) -> Result<(Vec<FileIo>, Vec<FileIo>), mysql::Error> {
        const COLUMNS: &str = "EVENT_NAME, COUNT_READ, COUNT_WRITE, COUNT_MISC, \
             SUM_TIMER_READ, SUM_TIMER_WRITE, SUM_TIMER_MISC, SUM_NUMBER_OF_BYTES_READ, \
             SUM_NUMBER_OF_BYTES_WRITE";
        type Row = (String, u64, u64, u64, u64, u64, u64, u64, u64);
        let io = |r: Row, file: Option<String>| FileIo {
            event: r.0,
            file,
            count_read: r.1,
            count_write: r.2,
            count_misc: r.3,
            sum_timer_read: r.4,
            sum_timer_write: r.5,
            sum_timer_misc: r.6,
            bytes_read: r.7,
            bytes_written: r.8,
        };
        let events: Vec<Row> = self.conn.query(format!(
            "SELECT {COLUMNS} FROM performance_schema.file_summary_by_event_name \
             WHERE EVENT_NAME LIKE 'wait/io/file/innodb/%'"
        ))?;
        let instances: Vec<(String, Row)> = self.conn.query_map(
            format!(
                "SELECT FILE_NAME, {COLUMNS} FROM performance_schema.file_summary_by_instance \
                     WHERE EVENT_NAME LIKE 'wait/io/file/innodb/%'"
            ),
            |(f, e, a, b, c, d, g, h, i, j): (
                String,
                String,
                u64,
                u64,
                u64,
                u64,
                u64,
                u64,
                u64,
                u64,
            )| (f, (e, a, b, c, d, g, h, i, j)),
        )?;
        Ok((
            events.into_iter().map(|r| io(r, None)).collect(),
            instances.into_iter().map(|(f, r)| io(r, Some(f))).collect(),
        ))
    }

    /// The capture of `begin` and `end` with `sessions` seen between, the server as
    /// it is at the end.
    pub fn capture(
        &mut self,
        begin: MySnapshot,
        end: MySnapshot,
        sessions: Sessions,
    ) -> anyhow::Result<MyCapture> {
        Ok(MyCapture {
            kind: CAPTURE_KIND.into(),
            format: CAPTURE_FORMAT,
            server: self.server()?,
            sessions,
            begin,
            end,
        })
    }

    /// `snapshot`, taken now, as a file of its own to be joined with a later one.
    pub fn snapshot_file(&mut self, snapshot: MySnapshot) -> anyhow::Result<MySnapshotFile> {
        let (n, active) = self.sessions()?;
        Ok(MySnapshotFile {
            kind: SNAPSHOT_KIND.into(),
            format: CAPTURE_FORMAT,
            server: self.server()?,
            sessions: Sessions {
                max: n,
                mean: f64::from(n),
                max_active: active,
                samples: 1,
            },
            snapshot,
        })
    }

    /// Client sessions now, and of them those running a statement (the capture's own
    /// and the server's threads not counted).
    pub fn sessions(&mut self) -> anyhow::Result<(u32, u32)> {
        let rows: Vec<(String, Option<String>)> = self
            .conn
            .query(
                "SELECT COMMAND, USER FROM information_schema.PROCESSLIST \
                 WHERE ID <> CONNECTION_ID()",
            )
            .map_err(|e| self.fail("the processlist", e))?;
        let clients: Vec<&String> = rows
            .iter()
            .filter(|(_, user)| {
                !matches!(
                    user.as_deref(),
                    Some("system user" | "event_scheduler") | None
                )
            })
            .map(|(command, _)| command)
            .filter(|c| !matches!(c.as_str(), "Daemon" | "Binlog Dump" | "Binlog Dump GTID"))
            .collect();
        let active = clients.iter().filter(|c| c.as_str() != "Sleep").count();
        Ok((clients.len() as u32, active as u32))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_gives_its_parts() {
        let e = parse_url("mysql://mon%40x:p%3Ass@db1:3307/app").unwrap();
        assert_eq!(e.user.as_deref(), Some("mon@x"));
        assert_eq!(e.password.as_deref(), Some("p:ss"));
        assert_eq!((e.host.as_deref(), e.port), (Some("db1"), Some(3307)));
        assert_eq!(e.database.as_deref(), Some("app"));
        assert_eq!(e.target(), "db1:3307 as mon@x");
        let s = parse_url("mariadb://root@localhost/?socket=%2Ftmp%2Fm.sock").unwrap();
        assert_eq!(s.socket.as_deref(), Some("/tmp/m.sock"));
        assert_eq!(s.target(), "/tmp/m.sock as root");
        let v6 = parse_url("mysql://u@[::1]:3306").unwrap();
        assert_eq!((v6.host.as_deref(), v6.port), (Some("::1"), Some(3306)));
    }

    #[test]
    fn a_bad_url_says_what() {
        for (url, what) in [
            ("postgresql://x", "not a mysql:// URL"),
            ("mysql://h:port", "port \"port\""),
            ("mysql://h/?ssl=1", "unknown parameter"),
            ("mysql://u%zz@h", "bad %-escape"),
        ] {
            let e = parse_url(url).unwrap_err().to_string();
            assert!(e.contains(what), "{url}: {e}");
        }
    }

    #[test]
    fn an_option_file_gives_its_client_group() {
        let text = "[mysqld]\nport = 9999\n\n[client]\nuser = monitor\npassword = \"s3 cret\"\n\
                    socket=/run/m.sock\n# port = 1\n!includedir /etc/mysql/conf.d/\n[mysql]\nuser=other\n";
        let e = option_file(text, "my.cnf").unwrap();
        assert_eq!(e.user.as_deref(), Some("monitor"));
        assert_eq!(e.password.as_deref(), Some("s3 cret"));
        assert_eq!(e.socket.as_deref(), Some("/run/m.sock"));
        assert_eq!(e.port, None);
        let bad = option_file("[client]\nport = x\n", "my.cnf").unwrap_err();
        assert_eq!(
            bad.to_string(),
            "my.cnf line 2: port \"x\" is not a port number"
        );
    }

    #[test]
    fn the_url_wins_over_the_option_file() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("my.cnf");
        std::fs::write(&f, "[client]\nuser=file\npassword=fromfile\nhost=h2\n").unwrap();
        let a = ServerNamed {
            url: Some("mysql://url@h1/".into()),
            defaults_file: Some(f),
            socket: None,
        };
        let e = endpoint(&a).unwrap();
        assert_eq!(e.user.as_deref(), Some("url"));
        assert_eq!(e.password.as_deref(), Some("fromfile"));
        assert_eq!(e.host.as_deref(), Some("h1"));
    }
}
