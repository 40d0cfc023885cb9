//! Evaluation: ranking metrics, the LoCoMo retrieval evaluation, seed 000's memory methods
//! and tables, and the golden-query regression suite.

pub mod folds;
pub mod golden;
pub mod locomo;
pub mod memory;

pub use crate::metrics;
