// gathers modules to include and re-exorts all of anndists!

pub use crate::api::*;
pub use crate::hnsw::*;

#[allow(unused)]
pub use crate::filter::*;

pub use crate::hnswio::*;

pub use anndists::dist::distances::*;
