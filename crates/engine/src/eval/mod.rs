//! Evaluation: ranking metrics and the LoCoMo retrieval evaluation.

pub mod locomo;
pub mod metrics;
