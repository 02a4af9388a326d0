//! The database I/O classes and the Oracle wait events they stand for.

/// How many classes there are.
pub const COUNT: usize = 6;

/// One class of database I/O.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum IoClass {
    /// Random single-block (8 KiB) reads: index lookups into the buffer cache.
    SingleBlockRead,
    /// Multiblock reads up to 1 MiB into the buffer cache (full scans).
    MultiblockRead,
    /// Large asynchronous reads that bypass the buffer cache.
    DirectRead,
    /// Random block writes in batches by the database writer.
    DbwrWrite,
    /// Sequential synchronous writes to the redo log by the log writer.
    RedoWrite,
    /// Large asynchronous writes that bypass the buffer cache (direct-path
    /// loads, sorts spilling to disk): direct-read's shape, written. Last, so
    /// that the other classes keep their indexes in raw files.
    DirectWrite,
}

impl IoClass {
    /// Every class, in the fixed order results use.
    pub const ALL: [IoClass; COUNT] = [
        IoClass::SingleBlockRead,
        IoClass::MultiblockRead,
        IoClass::DirectRead,
        IoClass::DbwrWrite,
        IoClass::RedoWrite,
        IoClass::DirectWrite,
    ];

    /// Position in [`IoClass::ALL`] (the recorder's class index).
    pub fn index(self) -> usize {
        self as usize
    }

    /// The name `--workload` takes and results show.
    pub fn name(self) -> &'static str {
        match self {
            IoClass::SingleBlockRead => "single-block-read",
            IoClass::MultiblockRead => "multiblock-read",
            IoClass::DirectRead => "direct-read",
            IoClass::DbwrWrite => "dbwr-write",
            IoClass::RedoWrite => "redo-write",
            IoClass::DirectWrite => "direct-write",
        }
    }

    /// The Oracle wait event this class shows up as.
    pub fn wait_event(self) -> &'static str {
        match self {
            IoClass::SingleBlockRead => "db file sequential read",
            IoClass::MultiblockRead => "db file scattered read",
            IoClass::DirectRead => "direct path read",
            IoClass::DbwrWrite => "db file parallel write",
            IoClass::RedoWrite => "log file parallel write",
            IoClass::DirectWrite => "direct path write",
        }
    }

    pub fn is_write(self) -> bool {
        matches!(
            self,
            IoClass::DbwrWrite | IoClass::RedoWrite | IoClass::DirectWrite
        )
    }

    /// Parses a class name; a few short aliases are accepted too.
    pub fn parse(s: &str) -> Option<IoClass> {
        let s = s.trim().to_ascii_lowercase().replace('_', "-");
        IoClass::ALL
            .into_iter()
            .find(|c| c.name() == s)
            .or(match s.as_str() {
                "sbr" | "random-read" => Some(IoClass::SingleBlockRead),
                "mbr" | "scan" => Some(IoClass::MultiblockRead),
                "dpr" => Some(IoClass::DirectRead),
                "dpw" => Some(IoClass::DirectWrite),
                "dbwr" => Some(IoClass::DbwrWrite),
                "redo" | "lgwr" => Some(IoClass::RedoWrite),
                _ => None,
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for (i, c) in IoClass::ALL.into_iter().enumerate() {
            assert_eq!(c.index(), i);
            assert_eq!(IoClass::parse(c.name()), Some(c));
        }
        assert_eq!(
            IoClass::parse("single_block_read"),
            Some(IoClass::SingleBlockRead)
        );
        assert_eq!(IoClass::parse("nope"), None);
        assert!(IoClass::RedoWrite.is_write() && !IoClass::DirectRead.is_write());
        assert!(IoClass::DirectWrite.is_write());
        assert_eq!(IoClass::parse("dpw"), Some(IoClass::DirectWrite));
    }
}
