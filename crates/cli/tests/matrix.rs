//! `dbio matrix` against local files.

mod support;

use support::{dbio, json, s, scratch};

#[test]
fn a_basic_matrix_writes_orion_grids_and_its_points() {
    let dir = scratch();
    let ds = dir.path().join("ds");
    let prefix = dir.path().join("m");
    let out = dir.path().join("m.json");
    let o = dbio(&[
        "matrix",
        "--target",
        s(&ds),
        "--size",
        "64MiB",
        "--matrix",
        "basic",
        "--num-small",
        "4",
        "--num-large",
        "2",
        "--time-per-point",
        "200ms",
        "--csv",
        s(&prefix),
        "--json",
        s(&out),
        "--html",
        s(&dir.path().join("m.html")),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let m = json(&out);
    let points = m["points"].as_array().unwrap();
    // 1, 2, 4 small alone, then 1, 2 large alone.
    let shape: Vec<(u64, u64)> = points
        .iter()
        .map(|p| (p["small"].as_u64().unwrap(), p["large"].as_u64().unwrap()))
        .collect();
    assert_eq!(shape, [(1, 0), (2, 0), (4, 0), (0, 1), (0, 2)]);
    for p in points {
        let small = p["small"].as_u64().unwrap() > 0;
        assert_eq!(p["small_iops"].as_f64().unwrap() > 0.0, small, "{p}");
        assert_eq!(p["large_mbps"].as_f64().unwrap() > 0.0, !small, "{p}");
    }
    let iops = std::fs::read_to_string(format!("{}_iops.csv", s(&prefix))).unwrap();
    assert!(iops.starts_with("Large/Small,0,1,2,4\n0,,"), "{iops}");
    assert_eq!(iops.lines().count(), 4, "a row per large level: {iops}");
    for suffix in ["_mbps.csv", "_lat.csv"] {
        assert!(std::path::Path::new(&format!("{}{suffix}", s(&prefix))).exists());
    }
    let o = dbio(&["matrix", "--target", s(&ds), "--matrix", "diagonal"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("expected basic, detailed, row, col or max")
    );
}
