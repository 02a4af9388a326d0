//! The NFS views of each configuration beside the comparison: the kernel
//! client's (a run on a kernel NFS mount) or dbio's own (an nfs:// target),
//! summed over the repeats of each configuration and load, so that "direct
//! NFS or the kernel mount?" shows its traffic under the verdicts.
//!
//! The kernel's figures cover the measured window and every process's
//! traffic on the mount; dbio's client's cover the run, its warm-up included.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::Observation;

/// What one run's NFS views said, reduced to what the comparison shows.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NfsTraffic {
    /// "kernel mount" or "dbio client".
    pub client: String,
    pub connections: u32,
    pub read_calls: u64,
    pub write_calls: u64,
    pub other_calls: u64,
    pub retransmissions: u64,
    pub read_bytes: u64,
    /// Kernel only: READ round-trip and execute milliseconds summed over READs,
    /// and the sends and backlog sums of every connection.
    #[serde(default)]
    pub read_rtt_ms: u64,
    #[serde(default)]
    pub read_execute_ms: u64,
    #[serde(default)]
    pub sends: u64,
    #[serde(default)]
    pub backlog_sum: u64,
}

impl NfsTraffic {
    fn add(&mut self, o: &NfsTraffic) {
        self.connections = self.connections.max(o.connections);
        self.read_calls += o.read_calls;
        self.write_calls += o.write_calls;
        self.other_calls += o.other_calls;
        self.retransmissions += o.retransmissions;
        self.read_bytes += o.read_bytes;
        self.read_rtt_ms += o.read_rtt_ms;
        self.read_execute_ms += o.read_execute_ms;
        self.sends += o.sends;
        self.backlog_sum += o.backlog_sum;
    }

    fn is_kernel(&self) -> bool {
        self.client == "kernel mount"
    }

    /// Mean READ round trip and execute time (ms); kernel only.
    pub fn read_rtt(&self) -> Option<f64> {
        (self.is_kernel() && self.read_calls > 0)
            .then(|| self.read_rtt_ms as f64 / self.read_calls as f64)
    }
    pub fn read_execute(&self) -> Option<f64> {
        (self.is_kernel() && self.read_calls > 0)
            .then(|| self.read_execute_ms as f64 / self.read_calls as f64)
    }
    /// Mean requests waiting for a slot at a send; kernel only.
    pub fn backlog(&self) -> Option<f64> {
        (self.is_kernel() && self.sends > 0).then(|| self.backlog_sum as f64 / self.sends as f64)
    }
}

/// One configuration at one load: its runs' traffic summed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NfsViewRow {
    pub config: String,
    pub load: u32,
    /// Runs summed.
    pub runs: u32,
    pub traffic: NfsTraffic,
}

/// The traffic of a result's `kernel_nfs` or `nfs` section, read leniently
/// (a section of another shape gives none, not an error).
pub fn traffic_of(kernel: Option<&Value>, nfs: Option<&Value>) -> Option<NfsTraffic> {
    let u = |v: &Value, k: &str| v.get(k).and_then(Value::as_u64).unwrap_or(0);
    if let Some(k) = kernel.filter(|k| k.is_object()) {
        let mut t = NfsTraffic {
            client: "kernel mount".into(),
            read_bytes: u(k, "read_bytes"),
            ..Default::default()
        };
        for o in k.get("ops").and_then(Value::as_array).into_iter().flatten() {
            let calls = u(o, "calls");
            t.retransmissions += u(o, "transmissions").saturating_sub(calls);
            match o.get("procedure").and_then(Value::as_str) {
                Some("READ") => {
                    t.read_calls += calls;
                    t.read_rtt_ms += u(o, "rtt_ms");
                    t.read_execute_ms += u(o, "execute_ms");
                }
                Some("WRITE") => t.write_calls += calls,
                _ => t.other_calls += calls,
            }
        }
        let conns = k.get("connections").and_then(Value::as_array);
        for c in conns.into_iter().flatten() {
            t.connections += 1;
            t.sends += u(c, "sends");
            t.backlog_sum += u(c, "backlog_sum");
        }
        return Some(t);
    }
    let n = nfs.filter(|n| n.is_object())?;
    let stats = n.get("stats")?;
    let mut t = NfsTraffic {
        client: "dbio client".into(),
        read_bytes: u(stats, "read_bytes"),
        ..Default::default()
    };
    for c in stats
        .get("calls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let calls = u(c, "calls");
        // NFSv4.1 names its operations READ4 and WRITE4 (inside COMPOUNDs).
        match c.get("procedure").and_then(Value::as_str) {
            Some("READ" | "READ4") => t.read_calls += calls,
            Some("WRITE" | "WRITE4") => t.write_calls += calls,
            _ => t.other_calls += calls,
        }
    }
    for c in n
        .get("channels")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        t.connections += 1;
        t.retransmissions += u(c, "retransmits");
    }
    Some(t)
}

/// Rows for every configuration and load whose runs have NFS views, in the
/// comparison's order.
pub fn rows(obs: &[Observation], configs: &[String], loads: &[u32]) -> Vec<NfsViewRow> {
    let mut sums: BTreeMap<(&str, u32), (u32, NfsTraffic)> = BTreeMap::new();
    for o in obs {
        let Some(t) = &o.nfs else { continue };
        let e = sums.entry((&o.config, o.load)).or_insert_with(|| {
            (
                0,
                NfsTraffic {
                    client: t.client.clone(),
                    ..Default::default()
                },
            )
        });
        e.0 += 1;
        e.1.add(t);
    }
    let mut out = Vec::new();
    for c in configs {
        for &l in loads {
            if let Some((runs, traffic)) = sums.remove(&(c.as_str(), l)) {
                out.push(NfsViewRow {
                    config: c.clone(),
                    load: l,
                    runs,
                    traffic,
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_kinds_of_views_reduce_to_traffic() {
        let kernel: Value = serde_json::json!({
            "ops": [
                {"procedure": "READ", "calls": 100, "transmissions": 101, "rtt_ms": 50, "execute_ms": 70},
                {"procedure": "GETATTR", "calls": 3, "transmissions": 3}
            ],
            "connections": [{"sends": 60, "backlog_sum": 30}, {"sends": 44, "backlog_sum": 0}],
            "read_bytes": 819200
        });
        let t = traffic_of(Some(&kernel), None).unwrap();
        assert_eq!(
            (t.read_calls, t.other_calls, t.retransmissions),
            (100, 3, 1)
        );
        assert_eq!(t.connections, 2);
        assert_eq!(t.read_rtt(), Some(0.5));
        assert_eq!(t.backlog(), Some(30.0 / 104.0));
        let nfs: Value = serde_json::json!({
            "stats": {"calls": [{"procedure": "READ", "calls": 7}], "read_bytes": 57344},
            "channels": [{"retransmits": 0}, {"retransmits": 2}, {}, {}]
        });
        let t = traffic_of(None, Some(&nfs)).unwrap();
        assert_eq!(
            (t.client.as_str(), t.connections, t.read_calls),
            ("dbio client", 4, 7)
        );
        assert_eq!(t.retransmissions, 2);
        assert_eq!(
            t.read_rtt(),
            None,
            "dbio's client has no per-call times here"
        );
        // NFSv4.1: READ4 and WRITE4 inside COMPOUNDs.
        let v41: Value = serde_json::json!({
            "stats": {"calls": [
                {"procedure": "COMPOUND", "calls": 4},
                {"procedure": "READ4", "calls": 68},
                {"procedure": "WRITE4", "calls": 5}
            ]},
            "channels": [{}]
        });
        let t = traffic_of(None, Some(&v41)).unwrap();
        assert_eq!((t.read_calls, t.write_calls, t.other_calls), (68, 5, 4));
        assert!(traffic_of(None, Some(&serde_json::json!([1, 2]))).is_none());
        assert!(traffic_of(None, None).is_none());
    }
}
