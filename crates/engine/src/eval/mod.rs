//! Evaluation: ranking metrics and the LoCoMo retrieval evaluation.

pub mod locomo;
pub mod memory;
pub mod metrics;
