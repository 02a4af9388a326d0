//! Mistakes and damage a user meets, each refused with one line that names the file
//! or the configuration and says what can be done: `dbio verify` of a data set whose
//! manifest or verify map is damaged, and a `dbio sweep` plan with an option
//! `dbio run` does not know (refused before `--out` is made).

mod support;

use std::fs;
use std::process::Output;

use support::{dbio, s, scratch};

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The one line of a refusal (exit code 2).
fn refused(o: &Output) -> String {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "{err}");
    lines[0].to_string()
}

#[test]
fn verify_of_a_damaged_manifest_says_what_can_be_done() {
    let dir = scratch();
    let ds = dir.path().join("ds");
    fs::create_dir(&ds).unwrap();
    let manifest = ds.join("dbio-dataset.json");
    fs::write(&manifest, b"{ not json").unwrap();
    let line = refused(&dbio(&["verify", s(&ds)]));
    assert!(line.contains(s(&manifest)), "{line}");
    assert!(line.contains("not a dbio data-set manifest"), "{line}");
    // Not advice to give verify an option it does not have.
    assert!(!line.contains("(use --force-overwrite)"), "{line}");
    assert!(
        line.contains("dbio run --verify --force-overwrite"),
        "{line}"
    );
}

#[test]
fn verify_of_a_damaged_map_reports_it_as_damaged() {
    let dir = scratch();
    let ds = dir.path().join("ds");
    let o = dbio(&[
        "run",
        "--target",
        s(&ds),
        "--size",
        "8MiB",
        "--time",
        "200ms",
        "--verify",
        "--json",
        s(&dir.path().join("r.json")),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let map = ds.join("dbio-verify.map");
    // Cut short: the header is there, the generations are not.
    let len = fs::metadata(&map).unwrap().len();
    fs::OpenOptions::new()
        .write(true)
        .open(&map)
        .unwrap()
        .set_len(len - 4)
        .unwrap();
    let line = refused(&dbio(&["verify", s(&ds)]));
    assert!(
        line.contains(&format!("{}: verify map is corrupt", map.display())),
        "{line}"
    );
    assert!(!line.contains("without --verify"), "{line}");
    // Damaged at the start: another header.
    let mut bytes = fs::read(&map).unwrap();
    bytes[0] ^= 0xff;
    fs::write(&map, &bytes).unwrap();
    let line = refused(&dbio(&["verify", s(&ds)]));
    assert!(line.contains("verify map is corrupt"), "{line}");
}

#[test]
fn a_sweep_option_run_does_not_know_fails_before_out_is_made() {
    let dir = scratch();
    let out = dir.path().join("sweep");
    let opts = format!("--target {} --size 8MiB", s(&dir.path().join("ds")));
    let line = refused(&dbio(&[
        "sweep",
        "--out",
        s(&out),
        "--users",
        "1",
        "--time",
        "200ms",
        "--options",
        &opts,
        "--config",
        "q1=--outstanding 1",
        "--config",
        "typo=--outstandng 8",
    ]));
    assert_eq!(
        line,
        "dbio: plan: config \"typo\": option --outstandng: `dbio run` has no such option"
    );
    assert!(!out.exists(), "--out was made");
    // A value the option refuses is named too.
    let line = refused(&dbio(&[
        "sweep",
        "--out",
        s(&out),
        "--time",
        "200ms",
        "--options",
        &opts,
        "--config",
        "zero=--outstanding 0",
    ]));
    assert!(
        line.starts_with("dbio: plan: config \"zero\": invalid value '0' for '--outstanding <N>'"),
        "{line}"
    );
    assert!(!out.exists(), "--out was made");
}

/// A mistake on the command line points to the help of the command it was
/// made in, the deepest one named; a missing path is named once.
#[test]
fn errors_point_to_the_commands_help_and_name_a_path_once() {
    let line = refused(&dbio(&["awr", "--no-such-option"]));
    assert!(line.ends_with("(see dbio awr --help)"), "{line}");
    let line = refused(&dbio(&["nfs", "ls", "--no-such-option"]));
    assert!(line.ends_with("(see dbio nfs ls --help)"), "{line}");
    let line = refused(&dbio(&["no-such-command"]));
    assert!(line.ends_with("(see dbio --help)"), "{line}");
    let dir = scratch();
    let missing = dir.path().join("missing");
    for args in [
        vec!["doctor", "--target", s(&missing)],
        vec!["frag", s(&missing)],
    ] {
        let line = refused(&dbio(&args));
        assert_eq!(line.matches(s(&missing)).count(), 1, "{args:?}: {line}");
        assert!(line.contains("No such file or directory"), "{line}");
    }
}
