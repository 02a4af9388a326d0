//! `dbio frag`: extents per file from FIEMAP, and the fill level of the
//! file systems holding them.

use std::path::PathBuf;

use dbio_diag::frag::{copy_on_write, frag, FragReport, FRAGMENTED_MIN, FRAGMENTED_PER_GIB};
use dbio_report::{fmt_bytes, Table};

#[derive(clap::Args)]
#[command(
    about = "Fragmentation of data files: extents per file and per GiB, from FIEMAP",
    long_about = "Fragmentation of data files: for each file (a directory stands for the files \
        in it, such as a dbio data set), the extents FIEMAP reports, the fragments counted as \
        filefrag counts them (physically contiguous extents are one), fragments per GiB, the \
        largest and median extent, shared and compressed extents; then per file system its \
        type and fill level. Copy-on-write file systems (btrfs, ZFS) fragment under random \
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
    ]);
    for f in &r.files {
        t.row(vec![
            f.path.clone(),
            fmt_bytes(f.size),
            f.extents.to_string(),
            f.fragments.to_string(),
            format!("{:.1}", f.fragments_per_gib),
            fmt_bytes(f.largest_extent),
            fmt_bytes(f.median_extent),
            f.shared.to_string(),
            f.encoded.to_string(),
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
        ]);
    }
    out.push('\n');
    out.push_str(&fs.text(""));
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
    out
}
