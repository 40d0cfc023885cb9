pub mod optimize_layout_euclidean;
pub mod optimize_layout_generic;
