//! `dbio nfs ping`: NULL round trips, or READs of a file, through `dbio_nfs::ping`.

use std::io::Write;
use std::time::Duration;

use anyhow::bail;
use dbio_nfs::fs::Access;
use dbio_stats::cpu::CpuClock;

use super::remote::{copy_result, flat, stop_flag, warn, ConnArgs, Done, Remote};

pub(super) fn ping(
    conn: &ConnArgs,
    url: &str,
    count: u64,
    outstanding: u32,
    read: Option<u64>,
) -> anyhow::Result<Done> {
    let stop = stop_flag();
    let r = Remote::open(conn, url)?;
    let (fs, rel) = (&r.fs, r.rel.as_str());
    let outstanding = outstanding.clamp(1, dbio_nfs::ping::MAX_OUTSTANDING);
    let cpu0 = CpuClock::now();
    let (name, result) = match read {
        None => {
            let server = r.display("");
            let result = r.block_on(dbio_nfs::ping::null(
                r.pool.router(),
                count,
                outstanding,
                &server,
                stop,
            ));
            ("NULL", result)
        }
        Some(size) => {
            let bytes = size.clamp(1, u64::from(fs.max_read().max(4096)));
            let open = r
                .block_on(async {
                    let (fh, a) = fs.lookup_path(rel).await?;
                    let open = fs.open_handle(&fh, Access::Read, rel).await?;
                    Ok::<_, dbio_nfs::NfsError>((open, a.size))
                })
                .map_err(flat)?;
            let (open, file_size) = open;
            if file_size < bytes {
                bail!(
                    "{}: file of {file_size} bytes is smaller than one READ of {bytes}",
                    r.display(rel)
                );
            }
            let mut dp = r.pool.data_path(outstanding, bytes as u32).map_err(flat)?;
            let id = dbio_nfs::copy::add_file(fs, &mut dp, &open).map_err(flat)?;
            let result = r.block_on(dbio_nfs::ping::read(
                &mut dp,
                id,
                file_size,
                bytes as u32,
                count,
                outstanding,
                &r.display(rel),
                stop,
            ));
            drop(dp);
            if let Err(e) = r.block_on(fs.close(open)) {
                warn(&e);
            }
            ("READ", result)
        }
    };
    let s = match copy_result(result)? {
        Ok(s) => s,
        Err(stopped) => return Ok(stopped),
    };
    let cpu = CpuClock::now().since(&cpu0).total_s();
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "{} {name} calls to {} (NFS version {}), {} outstanding: {:.0} calls/s, client CPU {:.2} us/call",
        s.calls,
        r.display(rel),
        fs.version().label(),
        s.outstanding,
        s.calls_per_s(),
        cpu * 1e6 / s.calls.max(1) as f64,
    )?;
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    writeln!(
        out,
        "latency us: min {:.1}  avg {:.1}  p50 {:.1}  p99 {:.1}  max {:.1}",
        us(s.min),
        us(s.mean),
        us(s.p50),
        us(s.p99),
        us(s.max),
    )?;
    out.flush()?;
    r.close()
}
