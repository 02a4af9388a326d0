//! CSV: a run gives one row per class, a calibration one row per curve point.
//! Figures are written with full precision and no thousands separators.

use crate::fmt::csv_field;
use crate::AnyResult;

const RUN_HEADER: &str =
    "class,wait_event,ios,bytes,iops,mbps,mean_us,p50_us,p90_us,p95_us,p99_us,p999_us,min_us,max_us";
const OPEN_LOOP_COLUMNS: &str = ",asked_iops,late,max_late_us";
const CALIBRATE_HEADER: &str =
    "ramp,io_size,outstanding,duration_s,ios,iops,mbps,mean_us,p50_us,p99_us,cpu_us_per_io,within_cap";

/// CSV text with a header line; lines end in "\n".
pub fn csv(result: &AnyResult) -> String {
    let mut out = String::new();
    match result {
        AnyResult::Run(r) => {
            // An open-loop run adds what was asked and the backlog.
            let open = r.open_loop.as_deref();
            out.push_str(RUN_HEADER);
            if open.is_some() {
                out.push_str(OPEN_LOOP_COLUMNS);
            }
            out.push('\n');
            for c in &r.classes {
                out.push_str(&format!(
                    "{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
                    csv_field(&c.class),
                    csv_field(&c.wait_event),
                    c.ios,
                    c.bytes,
                    c.iops,
                    c.mbps,
                    c.mean_us,
                    c.p50_us,
                    c.p90_us,
                    c.p95_us,
                    c.p99_us,
                    c.p999_us,
                    c.min_us,
                    c.max_us
                ));
                if let Some(o) = open {
                    let p = o.classes.iter().find(|p| p.class == c.class);
                    let (asked, late, max) =
                        p.map_or((0.0, 0, 0.0), |p| (p.asked_iops, p.late, p.max_late_us));
                    out.push_str(&format!(",{asked},{late},{max}"));
                }
                out.push('\n');
            }
        }
        AnyResult::Calibrate(c) => {
            out.push_str(CALIBRATE_HEADER);
            out.push('\n');
            for (ramp, size, points) in [
                ("iops", 8192, &c.iops_curve),
                ("mbps", 1 << 20, &c.mbps_curve),
            ] {
                for p in points {
                    out.push_str(&format!(
                        "{ramp},{size},{},{},{},{},{},{},{},{},{},{}\n",
                        p.outstanding,
                        p.duration_s,
                        p.ios,
                        p.iops,
                        p.mbps,
                        p.mean_us,
                        p.p50_us,
                        p.p99_us,
                        p.cpu_us_per_io,
                        p.within_cap
                    ));
                }
            }
        }
    }
    out
}
