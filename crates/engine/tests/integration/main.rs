//! The engine's integration tests, one binary with a module per topic. Tests that need
//! real semantics (`common::bert()`, `Fixture::real()`) load all-MiniLM-L6-v2 from
//! `paths::model_dir()` (SOMNA_MODEL_DIR or ~/.local/share/somna/model) once per run;
//! the others use the fast hashing embedder.

mod causal;
mod changes;
mod cluster;
mod common;
mod crud;
mod curation;
mod eval_memory;
mod foreign;
mod golden;
mod imports;
mod index_tamper;
mod labels;
mod parity;
mod policies;
mod postgres;
mod priority;
mod reconcile;
mod retrieval;
mod robustness;
mod sleep;
mod sleep_events;
mod sync;
mod timetravel;
mod whatif;
