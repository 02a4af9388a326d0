//! `dbio run --slob-conf`: a SLOB 2.5 slob.conf sets the run's workload, the
//! command line wins over it, and every variable is accounted for on stderr.

mod support;

use std::path::Path;

use support::{dbio, json, s, scratch};

/// A slob.conf in SLOB 2.5's layout: 40% updates, a fixed-iteration run of
/// 50 statements of 50 blocks (2,500 I/Os per session) capped by RUN_TIME,
/// 2 sessions on 2048 blocks, plus connectivity settings and one variable
/// SLOB does not know.
const CONF: &str = r#"#### SLOB 2.5.4.0 slob.conf

UPDATE_PCT=40
SCAN_PCT=0
RUN_TIME=60
WORK_LOOP=50
SCALE=2048
SCAN_TABLE_SZ=1M
WORK_UNIT=50
REDO_STRESS=LITE
LOAD_PARALLEL_DEGREE=2

THREADS_PER_SCHEMA=2

DATABASE_STATISTICS_TYPE=awr   # Permitted values: [statspack|awr]

#### Settings for SQL*Net connectivity:
ADMIN_SQLNET_SERVICE="ORCLPDB"
SQLNET_SERVICE_BASE="ORCLPDB"
DBA_PRIV_USER="system"
SYSDBA_PASSWD="manager"

EXTERNAL_SCRIPT=''

DO_HOTSPOT=FALSE
HOTSPOT_MB=8
HOTSPOT_OFFSET_MB=16
HOTSPOT_FREQUENCY=3

HOT_SCHEMA_FREQUENCY=0

THINK_TM_FREQUENCY=0
THINK_TM_MIN=.1
THINK_TM_MAX=.5

MY_TUNING=on

export UPDATE_PCT SCAN_PCT RUN_TIME WORK_LOOP SCALE WORK_UNIT REDO_STRESS THREADS_PER_SCHEMA
"#;

fn write_conf(dir: &Path, text: &str) -> String {
    let p = dir.join("slob.conf");
    std::fs::write(&p, text).unwrap();
    s(&p).to_string()
}

fn class_ios(v: &serde_json::Value, class: &str) -> u64 {
    v["classes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["class"] == class)
        .map_or(0, |c| c["ios"].as_u64().unwrap())
}

#[test]
fn a_slob_conf_sets_the_mix_and_names_what_it_does_not_use() {
    let tmp = scratch();
    let conf = write_conf(tmp.path(), CONF);
    let out = tmp.path().join("run.json");
    let o = dbio(&[
        "run",
        "--slob-conf",
        &conf,
        "--target",
        s(&tmp.path().join("ds")),
        "--seed",
        "7",
        "--json",
        s(&out),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    // The table, before the run, then the notice and the warning.
    assert!(
        err.contains("UPDATE_PCT=40") && err.contains("--update-pct 40"),
        "{err}"
    );
    assert!(err.contains("--loops 2500 (I/Os per user)"), "{err}");
    assert!(
        err.contains(
            "not about I/O, ignored: LOAD_PARALLEL_DEGREE, DATABASE_STATISTICS_TYPE, \
             ADMIN_SQLNET_SERVICE, SQLNET_SERVICE_BASE, DBA_PRIV_USER, SYSDBA_PASSWD, \
             EXTERNAL_SCRIPT"
        ),
        "{err}"
    );
    assert!(
        err.contains("warning: ") && err.contains("MY_TUNING (line 36: not a SLOB 2.5 variable)"),
        "{err}"
    );
    assert!(
        err.find("UPDATE_PCT=40") < err.find("creating data set"),
        "{err}"
    );

    let v = json(&out);
    assert_eq!(v["config"]["update_pct"], 40);
    assert_eq!(
        v["config"]["users"], 2,
        "THREADS_PER_SCHEMA=2 for one schema"
    );
    assert_eq!(v["config"]["loops"], 2500);
    // WORK_LOOP x WORK_UNIT I/Os per session, exactly.
    assert_eq!(v["ios"], 2 * 2500);
    assert_eq!(v["config"]["dataset_bytes"], 2048 * 8192);
    // Of the single-block reads and redo writes (one per update), UPDATE_PCT
    // are redo writes. About 3,500 of them: the share's standard deviation is
    // under 0.01, so 0.36..0.44 holds for 40% and cannot for dbio's default 25%.
    let reads = class_ios(&v, "single-block-read") as f64;
    let redo = class_ios(&v, "redo-write") as f64;
    let share = redo / (reads + redo);
    assert!(reads + redo > 3000.0, "{reads} {redo}");
    assert!((0.36..=0.44).contains(&share), "update share {share:.3}");
    assert!(class_ios(&v, "dbwr-write") > 0);
    assert_eq!(class_ios(&v, "multiblock-read"), 0, "SCAN_PCT=0");
}

#[test]
fn options_on_the_command_line_win_over_the_file() {
    let tmp = scratch();
    let conf = write_conf(tmp.path(), CONF);
    let out = tmp.path().join("null.json");
    let o = dbio(&[
        "run",
        "--slob-conf",
        &conf,
        "--engine",
        "null",
        "--target",
        s(&tmp.path().join("x")),
        "--update-pct",
        "10",
        "--loops",
        "100",
        "--users",
        "3",
        "--json",
        s(&out),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("--update-pct 40: not taken, the command line's --update-pct wins"),
        "{err}"
    );
    let v = json(&out);
    assert_eq!(v["config"]["update_pct"], 10);
    assert_eq!(v["config"]["loops"], 100);
    // --users counts schemas, each with THREADS_PER_SCHEMA sessions and SCALE of data.
    assert_eq!(v["config"]["users"], 6);
    assert_eq!(v["ios"], 600);
}

#[test]
fn a_bad_value_is_one_line_naming_file_line_and_variable() {
    let tmp = scratch();
    let conf = write_conf(tmp.path(), &CONF.replace("SCAN_PCT=0", "SCAN_PCT=ten"));
    let o = dbio(&["run", "--slob-conf", &conf, "--engine", "null"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(
        err.trim_end(),
        format!("dbio: {conf}: line 4: SCAN_PCT=\"ten\": not a whole number from 0 to 100")
    );
    let o = dbio(&["run", "--slob-conf", s(&tmp.path().join("none.conf"))]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("none.conf: No such file"));
}
