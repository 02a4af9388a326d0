//! `dbio report`: render a saved result again, of whichever kind dbio wrote it.

use std::path::PathBuf;

use anyhow::bail;
use dbio_report::saved::{load_saved, Saved};

use crate::common::{self, OutputArgs};

#[derive(clap::Args)]
#[command(
    about = "Render a saved result (JSON) again, as a table, CSV, Markdown or HTML",
    long_about = "Read a result written with --json by `dbio run`, `dbio calibrate`, `dbio age`, \
        `dbio matrix`, `dbio compare` or `dbio replay`, print it, and write it again in other \
        formats (each kind in the forms its command writes: a replay has no CSV, an age \
        result no Markdown; a matrix's --csv is the prefix of its three grids). A file that \
        is no result (a PostgreSQL capture, AWR observations, a sweep's manifest) is named \
        for what it is.\n\nExamples:\n  dbio report run.json --html run.html\n  dbio report \
        replay.json --html replay.html --md replay.md"
)]
pub struct Args {
    /// The result file (JSON) to read
    #[arg(value_name = "RESULT.json")]
    result: PathBuf,
    #[command(flatten)]
    output: OutputArgs,
}

/// Refuses a format a kind does not have, before anything is written.
fn refuse(flag: &str, given: bool, kind: &str, forms: &str) -> anyhow::Result<()> {
    if given {
        bail!("{flag}: {kind} has {forms} forms");
    }
    Ok(())
}

pub fn main(args: Args) -> anyhow::Result<()> {
    args.output.check()?;
    let o = &args.output;
    let wrote = match load_saved(&args.result)? {
        Saved::Result(result) => {
            print!("{}", dbio_report::terminal(&result));
            dbio_report::write_outputs(&result, &o.outputs())?
        }
        Saved::Age(age) => {
            refuse(
                "--md",
                o.md.is_some(),
                "an age result",
                "JSON, CSV and HTML",
            )?;
            print!("{}", dbio_report::age::age_terminal(&age));
            dbio_report::age::write_age(
                &age,
                &dbio_report::age::AgeOutputs {
                    json: o.json.clone(),
                    csv: o.csv.clone(),
                    html: o.html.clone(),
                },
            )?
        }
        Saved::Matrix(m) => {
            print!("{}", dbio_report::matrix::matrix_terminal(&m));
            dbio_report::matrix::write_matrix(
                &m,
                &dbio_report::matrix::MatrixOutputs {
                    json: o.json.clone(),
                    csv_prefix: o.csv.clone(),
                    md: o.md.clone(),
                    html: o.html.clone(),
                },
            )?
        }
        Saved::Comparison(c) => {
            print!(
                "{}",
                dbio_report::comparison::comparison_terminal(&c, Default::default())
            );
            dbio_report::comparison::write_comparison(&c, &o.outputs())?
        }
        Saved::Replay(r) => {
            refuse(
                "--csv",
                o.csv.is_some(),
                "a replay",
                "JSON, Markdown and HTML",
            )?;
            print!("{}", dbio_report::replay::terminal(&r));
            let version = env!("CARGO_PKG_VERSION");
            let mut wrote = Vec::new();
            for (path, text) in [
                (&o.json, dbio_report::replay::json(&r)),
                (&o.md, dbio_report::replay::markdown(&r)),
                (&o.html, dbio_report::replay::html(&r, version)),
            ] {
                if let Some(p) = path {
                    dbio_report::write_atomic(p, text.as_bytes())?;
                    wrote.push(p.clone());
                }
            }
            wrote
        }
    };
    common::wrote(wrote);
    Ok(())
}
