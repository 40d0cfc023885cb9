pub mod constants;
pub mod find_ab_params;
pub mod fuzzy_simplicial_set;
pub mod make_epochs_per_sample;
pub mod raise_disconnected_warning;
pub mod smooth_knn_dist;

pub use fuzzy_simplicial_set::SparseMat;
