//! `dbio frag`: extents per file from FIEMAP, and the fill level of the
//! file systems holding them.

use std::path::PathBuf;

use dbio_diag::frag::{copy_on_write, frag, FragReport, FRAGMENTED_MIN, FRAGMENTED_PER_GIB};
use dbio_report::{fmt_bytes, Table};

#[derive(clap::Args)]
#[command(
    about = "Fragmentation of data files: extents and fragments per file, from FIEMAP, and a verdict",
    long_about = "Fragmentation of data files: for each file (a directory stands for the files \
        in it, such as a dbio data set, leaving out its manifest and verify map), the extents \
        FIEMAP reports, the fragments counted as filefrag counts them (physically contiguous \
        extents are one), fragments per GiB (for files of 1 GiB or more), the largest and \
        median extent, shared and compressed extents; then per file system its type and fill \
        level; then a verdict: ok, or which files are fragmented (more than 16 fragments and \
        more than 64 per GiB, i.e. under 16 MiB each on average). Exit code 0 either way. Copy-on-write file systems (btrfs, ZFS) fragment under random \
        overwrites, the more the fuller they are: `chattr +C` (btrfs, on an empty file or \
        its directory) keeps data files in place.\n\nExample: dbio frag /data/dbio"
)]
pub struct Args {
    /// Files, or directories whose files to look at [default: the default data set]
    #[arg(value_name = "PATH")]
    paths: Vec<PathBuf>,
    /// Print the report as JSON instead of tables
    #[arg(long)]
    json: bool,
}

pub fn main(args: Args) -> anyhow::Result<()> {
    let paths = if args.paths.is_empty() {
        vec![crate::common::default_target()]
    } else {
        args.paths
    };
    let report = frag(&paths)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", render(&report));
    }
    Ok(())
}

/// The report as terminal tables.
pub fn render(r: &FragReport) -> String {
    let mut t = Table::new(&[
        "<File",
        "Size",
        "Extents",
        "Fragments",
        "Frag/GiB",
        "Largest",
        "Median",
        "Shared",
        "Encoded",
        "<State",
    ]);
    for f in &r.files {
        t.row(vec![
            f.path.clone(),
            fmt_bytes(f.size),
            f.extents.to_string(),
            f.fragments.to_string(),
            per_gib(f.fragments_per_gib),
            fmt_bytes(f.largest_extent),
            fmt_bytes(f.median_extent),
            f.shared.to_string(),
            f.encoded.to_string(),
            if f.fragmented { "fragmented" } else { "ok" }.into(),
        ]);
    }
    let mut out = t.text("");
    let mut fs = Table::new(&[
        "<File system",
        "<Type",
        "<Device",
        "Size",
        "Used %",
        "Files",
        "Fragments",
        "Frag/GiB",
    ]);
    for x in &r.filesystems {
        fs.row(vec![
            x.mount_point.clone(),
            x.fs_type.clone(),
            x.source.clone(),
            fmt_bytes(x.size),
            format!("{:.1}", x.fill_pct),
            x.files.to_string(),
            x.fragments.to_string(),
            per_gib(x.fragments_per_gib),
        ]);
    }
    out.push('\n');
    out.push_str(&fs.text(""));
    if !r.left_out.is_empty() {
        out.push_str(&format!(
            "left out (a data set's manifest or verify map, not data): {}\n",
            r.left_out.join(", ")
        ));
    }
    for f in &r.files {
        for n in &f.notes {
            out.push_str(&format!("note: {}: {n}\n", f.path));
        }
    }
    for x in &r.filesystems {
        if copy_on_write(&x.fs_type) {
            out.push_str(&format!(
                "note: {} is {} (copy on write): random overwrites add extents unless the files have chattr +C{}\n",
                x.mount_point,
                x.fs_type,
                if x.fill_pct > 80.0 {
                    "; above 80% full it fragments faster"
                } else {
                    ""
                }
            ));
        }
    }
    let rule = format!(
        "more than {FRAGMENTED_MIN} fragments and more than {FRAGMENTED_PER_GIB:.0} per GiB, i.e. \
         under {} MiB each on average",
        1024.0 / FRAGMENTED_PER_GIB
    );
    out.push_str(&match r.fragmented.len() {
        _ if r.files.is_empty() => "verdict: no data files to look at\n".to_string(),
        0 => format!(
            "verdict: ok: none of {} fragmented ({rule})\n",
            plural_files(r.files.len())
        ),
        n => format!(
            "verdict: fragmented: {n} of {} ({rule}): {}\n",
            plural_files(r.files.len()),
            r.fragmented.join(", ")
        ),
    });
    out
}

fn plural_files(n: usize) -> String {
    dbio_report::fmt_count(n as u64, "file")
}

/// Fragments per GiB where they mean something (1 GiB or more), else "-".
fn per_gib(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{v:.1}"))
}
