//! Writes every format of the hand-built sample results into a directory,
//! to look at the renderers: `cargo run -p dbio-report --example sample_report -- DIR`.

use std::path::PathBuf;

use dbio_report::{sample, terminal, write_outputs, AnyResult, Outputs};

fn main() {
    let dir = PathBuf::from(std::env::args().nth(1).unwrap_or_else(|| ".".into()));
    for (name, result) in [
        ("run", AnyResult::Run(sample::run())),
        ("calibrate", AnyResult::Calibrate(sample::calibrate())),
    ] {
        println!("{}", terminal(&result));
        let outputs = Outputs {
            json: Some(dir.join(format!("{name}.json"))),
            csv: Some(dir.join(format!("{name}.csv"))),
            md: Some(dir.join(format!("{name}.md"))),
            html: Some(dir.join(format!("{name}.html"))),
        };
        if let Err(e) = write_outputs(&result, &outputs) {
            eprintln!("sample_report: {e}");
            std::process::exit(2);
        }
    }
}
