//! The retrieval regression suite's types, where the evaluation tools look for them. The
//! data and scoring are in `crate::golden`; running the suite is the façade's
//! (`Somna::golden_run` in `engine/golden.rs`), since it searches.

pub use crate::golden::{GoldenOptions, GoldenOutcome, GoldenRun};
