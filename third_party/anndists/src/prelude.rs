// gathers modules to include

pub use crate::dist::distances::Distance;
