//! `dbio report`: render a saved result again.

use std::path::PathBuf;

use crate::common::OutputArgs;

#[derive(clap::Args)]
#[command(
    about = "Render a saved result (JSON) again, as a table, CSV, Markdown or HTML",
    long_about = "Read a result written with --json by `dbio run` or `dbio calibrate`, print its \
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
    let result = dbio_report::load(&args.result)?;
    print!("{}", dbio_report::terminal(&result));
    dbio_report::write_outputs(&result, &args.output.outputs())?;
    Ok(())
}
