//! A report's figures under the names a dbio run gives the same I/O (`iops`, `mbps`,
//! `EVENT mean_us`, ...): what `dbio compare` sets beside a run, kept with the report.

use std::collections::BTreeMap;

use super::model::AwrReport;

impl AwrReport {
    /// The figures as an observation's metrics: `iops` and `mbps` from the I/O
    /// requests and MiB per second (never from blocks, which count each block of a
    /// multiblock read), `read iops`, `write iops`, `read mbps`, `write mbps`, and per
    /// foreground User I/O, System I/O or Commit event `EVENT mean_us` and `EVENT
    /// iops` (waits per second); background System I/O events (log file parallel
    /// write, db file parallel write, ...) as `EVENT (background) ...`.
    pub fn metrics(&self) -> BTreeMap<String, f64> {
        let mut m = BTreeMap::new();
        let lp = &self.load_profile;
        let mut pair = |name: &str, r: Option<f64>, w: Option<f64>, scale: f64| {
            if let Some(r) = r {
                m.insert(format!("read {name}"), r * scale);
            }
            if let Some(w) = w {
                m.insert(format!("write {name}"), w * scale);
            }
            if r.is_some() || w.is_some() {
                m.insert(
                    name.to_string(),
                    (r.unwrap_or(0.0) + w.unwrap_or(0.0)) * scale,
                );
            }
        };
        pair("iops", lp.read_iops, lp.write_iops, 1.0);
        // dbio's MB are 10^6 bytes; Oracle's MB are MiB.
        pair("mbps", lp.read_mib_s, lp.write_mib_s, 1.048_576);
        let foreground = self.events.iter().map(|e| (e, ""));
        let background = self
            .background_events
            .iter()
            .filter(|e| e.wait_class == "System I/O")
            .map(|e| (e, " (background)"));
        for (e, suffix) in foreground.chain(background) {
            if !matches!(e.wait_class.as_str(), "User I/O" | "System I/O" | "Commit") {
                continue;
            }
            if let Some(mean) = e.mean_wait_us {
                m.insert(format!("{}{suffix} mean_us", e.event), mean);
            }
            if let Some(w) = e.waits {
                m.insert(format!("{}{suffix} iops", e.event), w / self.elapsed_s);
            }
        }
        m
    }
}
