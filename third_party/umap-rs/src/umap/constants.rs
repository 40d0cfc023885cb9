// Constants used throughout the UMAP algorithm

/// Tolerance for the smooth k-nearest neighbor distance approximation
pub const SMOOTH_K_TOLERANCE: f32 = 1e-5;

/// Minimum scale factor for k-nearest neighbor distances
pub const MIN_K_DIST_SCALE: f32 = 1e-3;
