use super::*;
use std::collections::HashMap;

/// Writes a small result for each run; can stop or fail at a given run.
#[derive(Default)]
struct Fake {
    ran: Vec<(usize, Vec<String>)>,
    hooks: Vec<(String, usize)>,
    stop_at: Option<usize>,
    fail_at: Option<usize>,
    stop: Option<&'static AtomicBool>,
}

impl Executor for Fake {
    fn before(&mut self, command: &str, run: &PlannedRun) -> Result<(), HookError> {
        self.hooks.push((command.to_string(), run.index));
        Ok(())
    }
    fn run(&mut self, run: &PlannedRun, args: &[String], result: &Path) -> Outcome {
        self.ran.push((run.index, args.to_vec()));
        if self.stop_at == Some(run.index) {
            self.stop.unwrap().store(true, Ordering::SeqCst);
            std::fs::write(result, r#"{"kind":"run","interrupted":true}"#).unwrap();
            return Outcome::Interrupted;
        }
        if self.fail_at == Some(run.index) {
            return Outcome::Failed("exit status 2: dbio: bad option".into());
        }
        std::fs::write(result, r#"{"kind":"run","interrupted":false}"#).unwrap();
        Outcome::Done
    }
}

fn plan_text() -> String {
    r#"
        users = [1, 4]
        repeats = 2
        time = "1s"
        warmup = "500ms"
        [[config]]
        name = "a"
        before = "hook-a"
        outstanding = 1
        [[config]]
        name = "b"
        outstanding = 8
        "#
    .to_string()
}

fn plan() -> CheckedPlan {
    Plan::from_toml(&plan_text(), "test")
        .unwrap()
        .check()
        .unwrap()
}

fn no_progress() -> impl FnMut(&Progress) {
    |_: &Progress| {}
}

#[test]
fn a_sweep_runs_every_run_once_with_its_labels() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let mut m = Manifest::create(&out, &plan()).unwrap();
    let stop = AtomicBool::new(false);
    let mut fake = Fake::default();
    let mut seen = Vec::new();
    let f = execute(&out, &mut m, &mut fake, &stop, &mut |p: &Progress| {
        seen.push((p.done, p.total, p.run.index))
    })
    .unwrap();
    assert_eq!((f.done, f.total, f.interrupted), (8, 8, false));
    assert_eq!(seen, (0..8).map(|i| (i, 8, i)).collect::<Vec<_>>());
    let (_, args) = &fake.ran[2];
    assert_eq!(
        args.join(" "),
        "--outstanding 1 --users 4 --warmup 500ms --time 1000ms \
         --label config=a --label users=4 --label repeat=1"
    );
    // The hook runs whenever the configuration changes to "a".
    assert_eq!(
        fake.hooks,
        [
            ("hook-a".into(), 0),
            ("hook-a".into(), 2),
            ("hook-a".into(), 5),
            ("hook-a".into(), 7)
        ]
    );
    let back = Manifest::load(&out).unwrap();
    assert!(back
        .runs
        .iter()
        .all(|r| r.status == Status::Done && out.join(&r.file).exists()));
    // Starting again in the same place is refused: that is what --resume is for.
    let e = Manifest::create(&out, &plan()).unwrap_err().to_string();
    assert!(e.contains("--resume"), "{e}");
}

#[test]
fn an_interrupted_sweep_resumes_without_redoing_or_losing_a_run() {
    static STOP: AtomicBool = AtomicBool::new(false);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let mut m = Manifest::create(&out, &plan()).unwrap();
    let mut fake = Fake {
        stop_at: Some(3),
        stop: Some(&STOP),
        ..Fake::default()
    };
    let f = execute(&out, &mut m, &mut fake, &STOP, &mut no_progress()).unwrap();
    assert_eq!((f.done, f.interrupted), (3, true));
    assert!(
        !out.join(m.runs[3].file.clone()).exists(),
        "an interrupted result does not count"
    );
    // A crash after run 4's result landed but before the manifest said so.
    std::fs::create_dir_all(out.join("runs/b")).unwrap();
    std::fs::write(
        out.join(&m.runs[4].file),
        r#"{"kind":"run","interrupted":false}"#,
    )
    .unwrap();
    STOP.store(false, Ordering::SeqCst);
    let mut m = Manifest::load(&out).unwrap();
    assert_eq!(m.runs[3].status, Status::Interrupted);
    let mut again = Fake::default();
    let f = execute(&out, &mut m, &mut again, &STOP, &mut no_progress()).unwrap();
    assert_eq!((f.done, f.interrupted), (8, false));
    let mut count: HashMap<usize, usize> = HashMap::new();
    for (i, _) in fake.ran.iter().chain(&again.ran) {
        *count.entry(*i).or_default() += 1;
    }
    // Run 3 ran twice (interrupted, then for real); run 4 never again; every other once.
    for i in 0..8 {
        let want = match i {
            3 => 2,
            4 => 0,
            _ => 1,
        };
        assert_eq!(count.get(&i).copied().unwrap_or(0), want, "run {i}");
    }
}

#[test]
fn a_failed_run_stops_the_sweep_and_is_retried_on_resume() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let mut m = Manifest::create(&out, &plan()).unwrap();
    let stop = AtomicBool::new(false);
    let mut fake = Fake {
        fail_at: Some(1),
        ..Fake::default()
    };
    let e = execute(&out, &mut m, &mut fake, &stop, &mut no_progress()).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "run 2 (b, 1 user, repeat 1) failed: exit status 2: dbio: bad option (fix it and \
             continue with `dbio sweep --resume --out {}`, with the corrected --config or --plan \
             if its options were wrong)",
            out.display()
        )
    );
    let mut m = Manifest::load(&out).unwrap();
    assert_eq!(m.runs[1].status, Status::Failed);
    // A corrected plan: b (no results yet) may change; a (one result) may not, nor may
    // the runs.
    let corrected = |text: &str| {
        Plan::from_toml(&plan_text().replace("outstanding = 8", text), "fix")
            .unwrap()
            .check()
            .unwrap()
    };
    assert_eq!(
        m.replan(&out, &corrected("outstanding = 4")).unwrap(),
        ["b"]
    );
    assert_eq!(
        Manifest::load(&out).unwrap().plan.configs[1].options["outstanding"].as_integer(),
        Some(4)
    );
    let e = m
        .replan(
            &out,
            &Plan::from_toml(
                &plan_text().replace("outstanding = 1", "outstanding = 2"),
                "fix",
            )
            .unwrap()
            .check()
            .unwrap(),
        )
        .unwrap_err()
        .to_string();
    assert!(e.contains("config \"a\" has 1 result already"), "{e}");
    let e = m
        .replan(
            &out,
            &Plan::from_toml(&plan_text().replace("repeats = 2", "repeats = 3"), "fix")
                .unwrap()
                .check()
                .unwrap(),
        )
        .unwrap_err()
        .to_string();
    assert!(e.contains("changes the runs"), "{e}");
    let f = execute(
        &out,
        &mut m,
        &mut Fake::default(),
        &stop,
        &mut no_progress(),
    )
    .unwrap();
    assert_eq!(f.done, 8);
}

#[test]
fn a_sweep_writes_only_where_it_owns_everything() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("precious.dbf"), b"x").unwrap();
    let e = Manifest::create(dir.path(), &plan())
        .unwrap_err()
        .to_string();
    assert!(e.contains("not empty"), "{e}");
    let e = Manifest::load(dir.path()).unwrap_err().to_string();
    assert!(e.contains("holds no sweep"), "{e}");
    std::fs::write(dir.path().join(MANIFEST), b"{\"kind\":\"run\"}").unwrap();
    let e = Manifest::load(dir.path()).unwrap_err().to_string();
    assert!(e.contains("not a sweep manifest"), "{e}");
}
