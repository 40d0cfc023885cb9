pub mod clip;
pub mod parallel_vec;
