//! Test support for the hostile-server tests: a scripted ONC RPC server on an
//! ephemeral loopback port (one thread per connection), a good MOUNT/NFSv3 responder
//! that cases override procedure by procedure, a counting allocator, and a harness
//! that runs each case under a hard time limit and measures its memory.

use std::alloc::{GlobalAlloc, Layout, System};
use std::future::Future;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use dbio_nfs::proto::mount3::{self, DirPath, Export, Exports, MountOk};
use dbio_nfs::proto::nfs3::{self, encode_res_ok, Fattr3, FileHandle, FsinfoOk, Ftype3, GetattrOk};
use dbio_nfs::{ClientOptions, Nfs3Client, NfsError, NfsUrl};
use dbio_rpc::conn::ConnConfig;
use dbio_rpc::{decode_call, encode_reply_error, encode_reply_success, ReplyError};
use dbio_xdr::XdrEncode;

// ---- memory: the live bytes of the whole process and their peak ----

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grow(n: usize) {
    let live = LIVE.fetch_add(n, SeqCst) + n;
    PEAK.fetch_max(live, SeqCst);
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        grow(layout.size());
        System.alloc(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), SeqCst);
        System.dealloc(ptr, layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size > layout.size() {
            grow(new_size - layout.size());
        } else {
            LIVE.fetch_sub(layout.size() - new_size, SeqCst);
        }
        System.realloc(ptr, layout, new_size)
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// Cases run one at a time so that the peak of live memory is theirs alone.
static SERIAL: Mutex<()> = Mutex::new(());

/// The client's limits in every case: short timeouts keep the suite fast.
pub const TIMEOUT: Duration = Duration::from_millis(200);
pub const RETRIES: u32 = 2;
pub const MAX_RECORD: usize = 256 * 1024;

pub fn conn_config() -> ConnConfig {
    ConnConfig {
        timeout: TIMEOUT,
        retries: RETRIES,
        connect_timeout: Duration::from_secs(1),
        max_record: MAX_RECORD,
        ..ConnConfig::default()
    }
}

/// When a call fails at the latest, with room for the scheduler and the 50 ms tick.
pub fn deadline_bound() -> Duration {
    conn_config().deadline() + Duration::from_millis(400)
}

/// Runs `body` on its own current-thread runtime under a hard time limit (a hang
/// fails the test instead of blocking the suite) and checks that live memory never
/// grew by more than `mem_bound` bytes meanwhile. Returns the body's value.
pub fn run_case<T, F>(
    limit: Duration,
    mem_bound: usize,
    body: impl FnOnce() -> F + Send + 'static,
) -> T
where
    T: Send + 'static,
    F: Future<Output = T>,
{
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let base = LIVE.load(SeqCst);
    PEAK.store(base, SeqCst);
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        let out = rt.block_on(body());
        let _ = tx.send(out);
    });
    let out = match rx.recv_timeout(limit) {
        Ok(out) => out,
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("case hung: no outcome within {limit:?}"),
        Err(mpsc::RecvTimeoutError::Disconnected) => panic!("case panicked"),
    };
    let growth = PEAK.load(SeqCst).saturating_sub(base);
    assert!(
        growth <= mem_bound,
        "live memory grew by {growth} bytes (bound {mem_bound})"
    );
    out
}

/// Times `fut` and returns its output with the elapsed time.
pub async fn timed<T>(fut: impl Future<Output = T>) -> (T, Duration) {
    let t0 = Instant::now();
    let out = fut.await;
    (out, t0.elapsed())
}

// ---- the server ----

/// One call as the server saw it.
pub struct CallMsg {
    pub xid: u32,
    pub prog: u32,
    pub proc_: u32,
    pub args: Vec<u8>,
}

/// The server side of one accepted connection.
pub struct Peer {
    pub stream: TcpStream,
    /// 0 for the first connection the server accepted, 1 for the next, ...
    pub index: usize,
}

impl Peer {
    /// Next call, or `None` when the client closed or sent garbage.
    pub fn read_call(&mut self) -> Option<CallMsg> {
        let mut mark = [0u8; 4];
        self.stream.read_exact(&mut mark).ok()?;
        let len = (u32::from_be_bytes(mark) & 0x7fff_ffff) as usize;
        if len > 8 << 20 {
            return None;
        }
        let mut rec = vec![0u8; len];
        self.stream.read_exact(&mut rec).ok()?;
        let call = decode_call(&rec).ok()?;
        Some(CallMsg {
            xid: call.xid,
            prog: call.prog,
            proc_: call.proc_,
            args: call.args.to_vec(),
        })
    }

    /// Sends raw bytes (record marks included); false once the client is gone.
    pub fn send_raw(&mut self, bytes: &[u8]) -> bool {
        self.stream.write_all(bytes).is_ok()
    }

    /// Sends `body` as one record.
    pub fn send_record(&mut self, body: &[u8]) -> bool {
        let mut out = ((body.len() as u32) | 0x8000_0000).to_be_bytes().to_vec();
        out.extend_from_slice(body);
        self.send_raw(&out)
    }

    /// Sends an accepted SUCCESS reply carrying `results`.
    pub fn reply(&mut self, xid: u32, results: &[u8]) -> bool {
        self.send_record(&success(xid, results))
    }

    /// Sends a refusal.
    pub fn refuse(&mut self, xid: u32, reason: ReplyError) -> bool {
        let mut body = Vec::new();
        encode_reply_error(&mut body, xid, reason);
        self.send_record(&body)
    }
}

/// An accepted SUCCESS reply message (without record mark).
pub fn success(xid: u32, results: &[u8]) -> Vec<u8> {
    let mut body = Vec::new();
    encode_reply_success(&mut body, xid);
    body.extend_from_slice(results);
    body
}

/// A scripted server; the script runs once per accepted connection.
pub struct Server {
    pub addr: SocketAddr,
    accepted: Arc<AtomicUsize>,
}

impl Server {
    pub fn start(script: impl Fn(Peer) + Send + Sync + 'static) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        let addr = listener.local_addr().expect("local addr");
        let accepted = Arc::new(AtomicUsize::new(0));
        let count = accepted.clone();
        let script = Arc::new(script);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { return };
                let index = count.fetch_add(1, SeqCst);
                let script = script.clone();
                std::thread::spawn(move || script(Peer { stream, index }));
            }
        });
        Server { addr, accepted }
    }

    /// Connections accepted so far.
    pub fn accepted(&self) -> usize {
        self.accepted.load(SeqCst)
    }

    /// The URL of the export this server pretends to have (MOUNT and NFS on one port).
    pub fn url(&self) -> NfsUrl {
        let p = self.addr.port();
        NfsUrl::parse(&format!("nfs://127.0.0.1/export?mountport={p}&nfsport={p}"))
            .expect("test URL")
    }
}

/// What a case does with one call: answer it itself, or let the good server answer.
pub enum Step {
    Done,
    Default,
    /// Stop serving this connection (closing it).
    Close,
}

pub fn root_handle() -> FileHandle {
    FileHandle::new(b"root-handle").expect("short handle")
}

pub fn attrs(ftype: Ftype3, size: u64) -> Fattr3 {
    Fattr3 {
        ftype,
        mode: 0o644,
        nlink: 1,
        uid: 0,
        gid: 0,
        size,
        used: size,
        rdev: Default::default(),
        fsid: 1,
        fileid: 2,
        atime: Default::default(),
        mtime: Default::default(),
        ctime: Default::default(),
    }
}

/// The results a well-behaved server gives for the calls mounting needs.
pub fn good_results(call: &CallMsg) -> Option<Vec<u8>> {
    let mut r = Vec::new();
    match (call.prog, call.proc_) {
        (_, 0) => {}
        (mount3::PROGRAM, 5) => Exports(vec![Export {
            dir: DirPath::from("/export"),
            groups: vec![],
        }])
        .encode(&mut r),
        (mount3::PROGRAM, 1) => mount3::encode_mnt(
            &mut r,
            &Ok(MountOk {
                fhandle: root_handle(),
                auth_flavors: vec![1],
            }),
        ),
        (nfs3::PROGRAM, 19) => encode_res_ok(
            &mut r,
            &FsinfoOk {
                obj_attributes: None,
                rtmax: 65536,
                rtpref: 65536,
                rtmult: 4096,
                wtmax: 65536,
                wtpref: 65536,
                wtmult: 4096,
                dtpref: 8192,
                maxfilesize: u64::MAX,
                time_delta: Default::default(),
                properties: 0,
            },
        ),
        (nfs3::PROGRAM, 1) => encode_res_ok(
            &mut r,
            &GetattrOk {
                attributes: attrs(Ftype3::Dir, 4096),
            },
        ),
        _ => return None,
    }
    Some(r)
}

/// A MOUNT/NFSv3 server that answers like a good one except where `hook` decides.
pub fn nfs_server(hook: impl Fn(&CallMsg, &mut Peer) -> Step + Send + Sync + 'static) -> Server {
    Server::start(move |mut peer| {
        while let Some(call) = peer.read_call() {
            match hook(&call, &mut peer) {
                Step::Done => {}
                Step::Close => return,
                Step::Default => {
                    let ok = match good_results(&call) {
                        Some(r) => peer.reply(call.xid, &r),
                        None => peer.refuse(call.xid, ReplyError::ProcUnavail),
                    };
                    if !ok {
                        return;
                    }
                }
            }
        }
    })
}

pub fn client_options() -> ClientOptions {
    ClientOptions {
        conn: conn_config(),
        retry: dbio_nfs::retry::Backoff::NONE,
        ..ClientOptions::default()
    }
}

/// Mounts the server's export with the test limits.
pub async fn mount(server: &Server) -> Result<Nfs3Client, NfsError> {
    Nfs3Client::mount(&server.url(), client_options())
        .await
        .map(|(c, _)| c)
}
