//! A table that only grows, up to a bound fixed when it is made, and is read without a
//! lock: the router's channels and paths, to which pNFS data servers are added while
//! I/O runs on the ones already there.

use std::ops::Index;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

/// Rows `0..len()`, each set once and never moved or removed.
pub struct Table<T> {
    rows: Box<[OnceLock<T>]>,
    len: AtomicUsize,
    /// Serialises pushes; readers never take it.
    push: Mutex<()>,
}

impl<T> Table<T> {
    /// A table of `rows` (in order) with room for `more` rows after them.
    pub fn new(rows: impl IntoIterator<Item = T>, more: usize) -> Table<T> {
        let rows: Vec<T> = rows.into_iter().collect();
        let len = rows.len();
        let cells: Box<[OnceLock<T>]> = rows
            .into_iter()
            .map(OnceLock::from)
            .chain((0..more).map(|_| OnceLock::new()))
            .collect();
        Table {
            rows: cells,
            len: AtomicUsize::new(len),
            push: Mutex::new(()),
        }
    }

    /// Rows set so far.
    pub fn len(&self) -> usize {
        self.len.load(Ordering::Acquire)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn get(&self, i: usize) -> Option<&T> {
        if i < self.len() {
            self.rows[i].get()
        } else {
            None
        }
    }

    /// Adds a row; its index, or the row back when the table is full.
    pub fn push(&self, row: T) -> Result<usize, T> {
        let _one = self.push.lock().unwrap_or_else(|e| e.into_inner());
        let i = self.len.load(Ordering::Relaxed);
        let Some(cell) = self.rows.get(i) else {
            return Err(row);
        };
        cell.set(row)?;
        // Readers that see the new length see the row.
        self.len.store(i + 1, Ordering::Release);
        Ok(i)
    }

    pub fn iter(&self) -> impl Iterator<Item = &T> + '_ {
        self.rows[..self.len()].iter().filter_map(OnceLock::get)
    }
}

impl<T> Index<usize> for Table<T> {
    type Output = T;

    fn index(&self, i: usize) -> &T {
        match self.get(i) {
            Some(row) => row,
            None => panic!("row {i} of a table of {}", self.len()),
        }
    }
}

impl<'a, T> IntoIterator for &'a Table<T> {
    type Item = &'a T;
    type IntoIter = Box<dyn Iterator<Item = &'a T> + 'a>;

    fn into_iter(self) -> Self::IntoIter {
        Box::new(self.iter())
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for Table<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grows_to_its_bound_and_keeps_rows_in_place() {
        let t = Table::new(["a", "b"], 2);
        assert_eq!(t.len(), 2);
        let first: *const &str = &t[0];
        assert_eq!(t.push("c"), Ok(2));
        assert_eq!(t.push("d"), Ok(3));
        assert_eq!(t.push("e"), Err("e"));
        assert_eq!(t.iter().copied().collect::<Vec<_>>(), ["a", "b", "c", "d"]);
        assert!(std::ptr::eq(first, &t[0]));
        assert_eq!(t.get(4), None);
    }

    #[test]
    fn readers_see_rows_pushed_by_other_threads() {
        let t = std::sync::Arc::new(Table::new(Vec::<u32>::new(), 1000));
        let w = {
            let t = t.clone();
            std::thread::spawn(move || {
                for i in 0..1000 {
                    t.push(i).unwrap();
                }
            })
        };
        // Every row below the length a reader sees is set.
        for _ in 0..10_000 {
            let n = t.len();
            assert_eq!(t.iter().count(), n);
        }
        w.join().unwrap();
        assert_eq!(t.iter().sum::<u32>(), 499_500);
    }
}
