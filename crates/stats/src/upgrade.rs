//! Reading results written in older formats: the JSON is brought up to
//! [`FORMAT_VERSION`] before it is read into the schema's structs.

use serde_json::{json, Map, Value};

use crate::schema::{FORMAT_VERSION, RUN_KIND};

/// A result (run or calibrate, as JSON) in the current format. Format 1
/// runs have their dNFS views (`servers`, `channels`, `nfs_stats`,
/// `events`, `files[].server`) moved into the `nfs` section. A result
/// already current, or newer than this dbio reads, or not a JSON object,
/// is returned as it is.
pub fn upgrade_json(mut value: Value) -> Value {
    let Some(obj) = value.as_object_mut() else {
        return value;
    };
    let version = obj
        .get("format_version")
        .and_then(Value::as_u64)
        .unwrap_or(1);
    if version < 2 {
        if obj.get("kind").and_then(Value::as_str) == Some(RUN_KIND) {
            nfs_section_from_v1(obj);
        }
        obj.insert("format_version".into(), json!(2));
    }
    value
}

// A new format needs its upgrade step above.
const _: () = assert!(FORMAT_VERSION == 2);

/// Format 1 to 2: the top-level dNFS views become the `nfs` section.
fn nfs_section_from_v1(run: &mut Map<String, Value>) {
    let mut take = |name: &str| run.remove(name).filter(|v| !v.is_null());
    let servers = take("servers");
    let channels = take("channels");
    let stats = take("nfs_stats");
    let events = take("events");
    let mut files = Vec::new();
    if let Some(Value::Array(list)) = run.get_mut("files") {
        for f in list.iter_mut().filter_map(Value::as_object_mut) {
            if let Some(server) = f.remove("server").filter(|s| !s.is_null()) {
                files.push(json!({
                    "name": f.get("name").cloned().unwrap_or(json!("")),
                    "size": f.get("size").cloned().unwrap_or(json!(0)),
                    "server": server,
                }));
            }
        }
    }
    let nfs = servers.is_some()
        || channels.is_some()
        || stats.is_some()
        || events.is_some()
        || !files.is_empty();
    if nfs {
        let empty = json!({ "calls": [], "read_bytes": 0, "write_bytes": 0 });
        run.insert(
            "nfs".into(),
            json!({
                "servers": servers.unwrap_or(json!([])),
                "channels": channels.unwrap_or(json!([])),
                "files": files,
                "stats": stats.unwrap_or(empty),
                "events": events.unwrap_or(json!([])),
            }),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::RunResult;

    #[test]
    fn format_1_nfs_views_move_into_the_nfs_section() {
        let v1 = json!({
            "kind": "run", "format_version": 1, "dbio_version": "0.1.0",
            "started_unix": 0.0, "elapsed_s": 1.0, "interrupted": false,
            "config": { "target": "nfs://h/export", "engine": "nfs", "profile": "oltp",
                "workloads": [], "users": 1, "outstanding": 1, "block_size": 8192,
                "direct": true, "update_pct": 0, "scan_pct": 0, "redo_stress": "lite",
                "dataset_bytes": 0 },
            "ios": 0, "iops": 0.0, "mbps": 0.0, "failed_ios": 0,
            "cpu": { "user_s": 0.0, "system_s": 0.0 }, "cpu_us_per_io": 0.0,
            "classes": [], "series": [],
            "files": [{ "name": "a.dbf", "size": 8192, "reads": 1, "writes": 0,
                "read_bytes": 8192, "write_bytes": 0, "read_mean_us": 1.0,
                "write_mean_us": 0.0, "server": "filer1" }],
            "servers": [{ "name": "filer1", "export": "/export", "nfs_version": "3",
                "nfs_port": 2049, "rtmax": 1048576, "wtmax": 1048576, "rsize": 1048576,
                "wsize": 1048576, "paths": ["10.0.0.2"] }],
            "events": []
        });
        let r: RunResult = serde_json::from_value(upgrade_json(v1)).unwrap();
        assert_eq!(r.format_version, 2);
        let nfs = r.nfs.unwrap();
        assert_eq!(nfs.servers[0].name, "filer1");
        assert_eq!(nfs.files[0].server, "filer1");
        assert_eq!(nfs.files[0].name, "a.dbf");
        assert!(nfs.channels.is_empty() && nfs.events.is_empty());
        assert_eq!(nfs.stats, Default::default());
    }

    #[test]
    fn local_format_1_runs_get_no_nfs_section_and_current_ones_are_kept() {
        let v1 = json!({ "kind": "run", "format_version": 1, "files": [{ "name": "a" }] });
        let up = upgrade_json(v1);
        assert!(up.get("nfs").is_none());
        assert_eq!(up["format_version"], 2);
        let v2 = json!({ "kind": "run", "format_version": 2, "servers": [1] });
        assert_eq!(upgrade_json(v2.clone()), v2);
        let cal = json!({ "kind": "calibrate", "format_version": 1 });
        assert_eq!(upgrade_json(cal)["format_version"], 2);
        assert_eq!(upgrade_json(json!([1])), json!([1]));
    }
}
