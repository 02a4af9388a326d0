//! Comparisons of dbio results: summaries over repeats, the impact of one configuration
//! against a baseline, and whether a difference stands out of the noise.

pub mod statistics;
