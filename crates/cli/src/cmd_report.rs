//! `dbio report`: render a saved result again.

use std::path::PathBuf;

use crate::common::{self, OutputArgs};

#[derive(clap::Args)]
#[command(
    about = "Render a saved result (JSON) again, as a table, CSV, Markdown or HTML",
    long_about = "Read a result written with --json by `dbio run`, `dbio calibrate` or `dbio age`, print its \
        table, and write it again in other formats.\n\nExample: dbio report run.json --html run.html"
)]
pub struct Args {
    /// The result file (JSON) to read
    #[arg(value_name = "RESULT.json")]
    result: PathBuf,
    #[command(flatten)]
    output: OutputArgs,
}

pub fn main(args: Args) -> anyhow::Result<()> {
    args.output.check()?;
    if let Some(age) = dbio_report::age::load_age(&args.result)? {
        print!("{}", dbio_report::age::age_terminal(&age));
        anyhow::ensure!(
            args.output.md.is_none(),
            "--md: an age result has JSON, CSV and HTML forms"
        );
        let o = &args.output;
        common::wrote(dbio_report::age::write_age(
            &age,
            &dbio_report::age::AgeOutputs {
                json: o.json.clone(),
                csv: o.csv.clone(),
                html: o.html.clone(),
            },
        )?);
        return Ok(());
    }
    let result = dbio_report::load(&args.result)?;
    print!("{}", dbio_report::terminal(&result));
    common::wrote(dbio_report::write_outputs(&result, &args.output.outputs())?);
    Ok(())
}
