use std::path::Path;
use std::time::Duration;

use super::*;

/// A slob.conf in SLOB 2.5.4's layout: the settings block, the SQL*Net
/// block with its comments, the external script, the advanced hot spot,
/// hot schema and think time blocks, and the closing `export` of every name.
const SLOB25: &str = r#"#### SLOB 2.5.4.0 slob.conf

UPDATE_PCT=20
SCAN_PCT=0
RUN_TIME=300
WORK_LOOP=0
SCALE=80M
SCAN_TABLE_SZ=1M
WORK_UNIT=64
REDO_STRESS=LITE
LOAD_PARALLEL_DEGREE=2

THREADS_PER_SCHEMA=1

DATABASE_STATISTICS_TYPE=awr   # Permitted values: [statspack|awr]

#### Settings for SQL*Net connectivity:
#### Uncomment the following if needed:
ADMIN_SQLNET_SERVICE="ORCLPDB"
SQLNET_SERVICE_BASE="ORCLPDB"
#SQLNET_SERVICE_MAX="if needed, replace with a non-zero integer"
#
#### Note: Admin connections to the instance are, by default, made as SYSTEM
#            with the default password of "manager". If you wish to use another
#            privileged account (as would be the case with most DBaaS), then
#            change DBA_PRIV_USER and SYSDBA_PASSWD accordingly.
#### Uncomment the following if needed:
DBA_PRIV_USER="system"
SYSDBA_PASSWD="manager"

#### The EXTERNAL_SCRIPT parameter is used by the external script calling feature of runit.sh.
#### Please see SLOB Documentation at https://kevinclosson.net/slob for more information

EXTERNAL_SCRIPT=''

#########################
#### Advanced settings:
#### The following are Hot Spot related parameters.
#### By default Hot Spot functionality is disabled (DO_HOTSPOT=FALSE).

DO_HOTSPOT=FALSE
HOTSPOT_MB=8
HOTSPOT_OFFSET_MB=16
HOTSPOT_FREQUENCY=3

#### The following controls operations on Hot Schema
#### Default Value: 0. Default setting disables Hot Schema

HOT_SCHEMA_FREQUENCY=0

#### The following parameters control think time between SLOB
#### operations (SQL Executions).
#### Setting the frequency to 0 disables think time.

THINK_TM_FREQUENCY=0
THINK_TM_MIN=.1
THINK_TM_MAX=.5

#########################

export UPDATE_PCT SCAN_PCT RUN_TIME WORK_LOOP SCALE SCAN_TABLE_SZ WORK_UNIT REDO_STRESS LOAD_PARALLEL_DEGREE THREADS_PER_SCHEMA DATABASE_STATISTICS_TYPE ADMIN_SQLNET_SERVICE SQLNET_SERVICE_BASE SQLNET_SERVICE_MAX SYSDBA_PASSWD DBA_PRIV_USER EXTERNAL_SCRIPT DO_HOTSPOT HOTSPOT_MB HOTSPOT_OFFSET_MB HOTSPOT_FREQUENCY HOT_SCHEMA_FREQUENCY THINK_TM_FREQUENCY THINK_TM_MIN THINK_TM_MAX
"#;

fn parse(text: &str) -> Result<SlobConf, SlobError> {
    SlobConf::parse_str(Path::new("slob.conf"), text)
}

fn knobs(c: &SlobConf) -> Vec<Knob> {
    c.settings.iter().map(|s| s.knob.clone()).collect()
}

#[test]
fn slob25_layout_maps_every_variable() {
    let c = parse(SLOB25).unwrap();
    assert_eq!(
        knobs(&c),
        vec![
            Knob::UpdatePct(20),
            Knob::ScanPct(0),
            Knob::Time(Duration::from_secs(300)),
            Knob::Loops(None),
            Knob::Scale(Scale::Bytes(80 << 20)),
            Knob::Multiblock(Scale::Bytes(1 << 20)),
            Knob::WorkUnit(64),
            Knob::RedoStress(RedoStress::Lite),
            Knob::SessionsPerSchema(1),
            Knob::Hotspot(None),
            Knob::Off("off, as in dbio"),
            Knob::Think(None),
        ]
    );
    assert_eq!(
        c.not_io,
        [
            "LOAD_PARALLEL_DEGREE",
            "DATABASE_STATISTICS_TYPE",
            "ADMIN_SQLNET_SERVICE",
            "SQLNET_SERVICE_BASE",
            "DBA_PRIV_USER",
            "SYSDBA_PASSWD",
            "EXTERNAL_SCRIPT",
        ]
    );
    assert!(c.unsupported.is_empty(), "{:?}", c.unsupported);
    assert_eq!(c.unsupported_warning(), None);
    let notice = c.not_io_notice().unwrap();
    assert!(
        notice.starts_with("slob.conf: not about I/O, ignored: LOAD_PARALLEL_DEGREE,"),
        "{notice}"
    );
    // Lines and the file's own spelling, for the table.
    let update = &c.settings[0];
    assert_eq!((update.slob.as_str(), update.line), ("UPDATE_PCT=20", 3));
    let row = c
        .settings
        .iter()
        .find(|s| matches!(s.knob, Knob::Hotspot(_)))
        .unwrap();
    assert_eq!(
        row.slob,
        "DO_HOTSPOT=FALSE HOTSPOT_MB=8 HOTSPOT_OFFSET_MB=16 HOTSPOT_FREQUENCY=3"
    );
    assert_eq!(row.line, 41);
}

#[test]
fn quotes_comments_export_and_defaults_are_read_as_bash_does() {
    let c = parse(
        "# a comment\n\
         export UPDATE_PCT=\"35\"   # quoted, exported\n\
         SCAN_PCT='10'\n\
         pct=5\n\
         RUN_TIME=${RUN_TIME:-45}\n\
         REDO_STRESS=heavy; THREADS_PER_SCHEMA=${pct}\n\
         SCALE=\"1 G\"\n\
         \n\
         SCAN_TABLE_SZ=16\n",
    )
    .unwrap();
    assert_eq!(
        knobs(&c),
        vec![
            Knob::UpdatePct(35),
            Knob::ScanPct(10),
            Knob::Time(Duration::from_secs(45)),
            Knob::Scale(Scale::Bytes(1 << 30)),
            Knob::Multiblock(Scale::Blocks(16)),
            Knob::RedoStress(RedoStress::Heavy),
            Knob::SessionsPerSchema(5),
        ]
    );
    // The helper variable is named, not silently skipped.
    assert_eq!(
        c.unsupported,
        vec![Unsupported {
            name: "pct".into(),
            line: 4,
            why: "not a SLOB 2.5 variable"
        }]
    );
    // 16 blocks of 8 KiB; a bigger table is read 1 MiB at a time.
    assert_eq!(multiblock_bytes(Scale::Blocks(16), 8192), 128 << 10);
    assert_eq!(multiblock_bytes(Scale::Bytes(64 << 20), 8192), 1 << 20);
    assert_eq!(multiblock_bytes(Scale::Bytes(100), 8192), 8192);
}

#[test]
fn the_last_assignment_counts_and_empty_means_unset() {
    let c = parse("UPDATE_PCT=10\nUPDATE_PCT=30\nSCAN_PCT=\nRUN_TIME=''\n").unwrap();
    assert_eq!(knobs(&c), vec![Knob::UpdatePct(30)]);
    assert_eq!(c.settings[0].line, 2);
}

#[test]
fn run_time_and_work_loop_both_set_give_time_and_loops() {
    // SLOB stops a fixed-iteration run at RUN_TIME too: whichever comes first.
    let c = parse("RUN_TIME=60\nWORK_LOOP=1000\nWORK_UNIT=32\n").unwrap();
    assert_eq!(
        knobs(&c),
        vec![
            Knob::Time(Duration::from_secs(60)),
            Knob::Loops(Some(32_000)),
            Knob::WorkUnit(32),
        ]
    );
    assert_eq!(c.settings[1].slob, "WORK_LOOP=1000 WORK_UNIT=32");
    // Without WORK_UNIT, runit.sh's default of 256 blocks per statement.
    let c = parse("WORK_LOOP=10\n").unwrap();
    assert_eq!(knobs(&c), vec![Knob::Loops(Some(10 * 256))]);
}

#[test]
fn hot_spot_and_think_time_map_with_slob_defaults() {
    let c = parse(
        "DO_HOTSPOT=TRUE\nHOTSPOT_MB=8\nHOTSPOT_OFFSET_MB=16\nHOTSPOT_FREQUENCY=3\n\
         WORK_UNIT=64\nTHINK_TM_FREQUENCY=7\nTHINK_TM_MAX=2\n",
    )
    .unwrap();
    let k = knobs(&c);
    assert!(k.contains(&Knob::Hotspot(Some(SlobHotspot {
        mb: 8,
        offset_mb: 16,
        frequency: 3
    }))));
    // Every 7 statements of 64 blocks: every 448 I/Os; THINK_TM_MIN's default.
    assert!(k.contains(&Knob::Think(Some(Think {
        min: Duration::from_millis(100),
        max: Duration::from_secs(2),
        frequency: 448
    }))));
    let think = k.iter().find(|k| matches!(k, Knob::Think(_))).unwrap();
    assert_eq!(
        think.describe(8192, 1),
        "--think-frequency 448 --think-min 100ms --think-max 2000ms"
    );
}

#[test]
fn unsupported_and_unknown_variables_are_named_with_their_lines() {
    let c = parse(
        "UPDATE_PCT=25\nHOT_SCHEMA_FREQUENCY=4\nDO_UPDATE_HOTSPOT=TRUE\nFOO_BAR=1\n\
         THINK_TM_MODULUS=7\n",
    )
    .unwrap();
    let names: Vec<(&str, usize)> = c
        .unsupported
        .iter()
        .map(|u| (u.name.as_str(), u.line))
        .collect();
    assert_eq!(
        names,
        [
            ("HOT_SCHEMA_FREQUENCY", 2),
            ("DO_UPDATE_HOTSPOT", 3),
            ("FOO_BAR", 4),
            ("THINK_TM_MODULUS", 5)
        ]
    );
    let w = c.unsupported_warning().unwrap();
    assert!(
        w.contains("FOO_BAR (line 4: not a SLOB 2.5 variable)")
            && w.contains("DO_UPDATE_HOTSPOT (line 3: a SLOB 2.2 variable"),
        "{w}"
    );
    assert_eq!(c.not_io_notice(), None);
}

#[test]
fn bad_values_are_errors_naming_file_line_and_variable() {
    let err = |text: &str| parse(text).unwrap_err().to_string();
    assert_eq!(
        err("\nUPDATE_PCT=abc\n"),
        "slob.conf: line 2: UPDATE_PCT=\"abc\": not a whole number from 0 to 100"
    );
    assert_eq!(
        err("SCAN_PCT=101\n"),
        "slob.conf: line 1: SCAN_PCT=\"101\": out of range: from 0 to 100"
    );
    assert!(err("A=1\nB=2\nWORK_UNIT=2\n").starts_with("slob.conf: line 3: WORK_UNIT=\"2\""));
    assert!(err("SCALE=10X\n").contains("line 1: SCALE=\"10X\": a number of blocks"));
    assert!(err("REDO_STRESS=MEDIUM\n").contains("REDO_STRESS=\"MEDIUM\": LITE or HEAVY"));
    assert!(err("THINK_TM_MIN=fast\n").contains("line 1: THINK_TM_MIN=\"fast\""));
    assert!(err("DO_HOTSPOT=yes\n").contains("DO_HOTSPOT=\"yes\": TRUE or FALSE"));
    assert!(err("RUN_TIME=-5\n").contains("RUN_TIME=\"-5\""));
    assert!(
        err("DO_HOTSPOT=TRUE\nHOTSPOT_FREQUENCY=0\n").contains("line 2: HOTSPOT_FREQUENCY=\"0\"")
    );
    assert!(
        err("THINK_TM_FREQUENCY=3\nTHINK_TM_MIN=2\nTHINK_TM_MAX=1\n")
            .starts_with("slob.conf: line 2: THINK_TM_MIN=\"2\": above THINK_TM_MAX")
    );
    assert!(
        err("UPDATE_PCT=$(cat pct)\n").contains("line 1: UPDATE_PCT=\"(command substitution)\"")
    );
    // Values the shell would compute only matter where dbio needs them.
    assert!(parse("SYSDBA_PASSWD=$(cat /secret)\n").is_ok());
    // Lines dbio cannot read are refused with their number.
    assert_eq!(
        err("UPDATE_PCT=1\nsource other.conf\n"),
        "slob.conf: line 2: `source other.conf` is not an assignment: \
         dbio reads VAR=value lines (and export) only"
    );
}

#[test]
fn a_missing_file_is_named() {
    let e = SlobConf::parse(Path::new("/nonexistent/slob.conf")).unwrap_err();
    assert!(e.to_string().starts_with("/nonexistent/slob.conf: "), "{e}");
}

#[test]
fn knobs_describe_themselves_in_dbio_terms() {
    assert_eq!(
        Knob::Scale(Scale::Blocks(10_000)).describe(8192, 2),
        "--size 156.2 MiB (78.1 MiB per schema x 2)"
    );
    assert_eq!(
        Knob::SessionsPerSchema(4).describe(8192, 2),
        "--users 8 (2 schemas x 4)"
    );
    assert_eq!(Knob::Loops(Some(640)).options(), ["--loops"]);
    assert_eq!(
        classes(20, 10),
        [
            IoClass::SingleBlockRead,
            IoClass::MultiblockRead,
            IoClass::DbwrWrite,
            IoClass::RedoWrite
        ]
    );
    assert_eq!(classes(0, 0), [IoClass::SingleBlockRead]);
}

#[test]
fn any_bytes_give_a_conf_or_an_error_never_a_panic() {
    // Shell punctuation, names, digits and bytes that are not UTF-8.
    let alphabet: &[&[u8]] = &[
        b"$",
        b"{",
        b"}",
        b"(",
        b")",
        b"'",
        b"\"",
        b"\\",
        b"`",
        b"#",
        b";",
        b"=",
        b":-",
        b":=",
        b" ",
        b"\n",
        b"export ",
        b"UPDATE_PCT",
        b"SCALE",
        b"DO_HOTSPOT",
        b"TRUE",
        b"8",
        b"M",
        b".",
        b"\xff",
        b"\xc3",
        b"\xa9",
        b"x",
    ];
    let mut rng = dbio_workload::content::Rng::new(22);
    for _ in 0..20_000 {
        let mut text = Vec::new();
        for _ in 0..rng.between(1, 40) {
            text.extend_from_slice(alphabet[rng.below(alphabet.len() as u64) as usize]);
        }
        let _ = parse(&String::from_utf8_lossy(&text));
    }
}
