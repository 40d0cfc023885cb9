//! How the webview renders where there is no GPU.
//!
//! WebKitGTK composites the page with OpenGL ("accelerated compositing"). Without a GPU
//! that OpenGL is Mesa's software rasteriser on the CPU, and the page's rendering update
//! after each change (a search filling the X-ray table, a frame of the 3D view) was
//! composited there, on the main thread: the webview perf script's busy probe measured 116
//! to 122 blocks over 50 ms in 31 s of a sleep cycle and an import, the longest 155 ms.
//! With compositing off, WebKit paints the page with its CPU painter and the WebGL canvas
//! still draws: 45 blocks over 50 ms, the longest 97 ms, and no rendering update over 50 ms
//! (README, "Main-thread blocking while the engine works"). A machine with a GPU keeps
//! WebKit's default; so does anyone who sets the variable themselves or sets
//! `SOMNA_WEBKIT_COMPOSITING=1`.

use std::path::Path;

/// WebKitGTK's switch for the compositing mode.
const VAR: &str = "WEBKIT_DISABLE_COMPOSITING_MODE";

/// Set to 1, WebKit's default compositing is kept even without a GPU.
pub const KEEP: &str = "SOMNA_WEBKIT_COMPOSITING";

/// Turns WebKit's accelerated compositing off when this machine has no GPU render node and
/// the user has set neither [`VAR`] nor [`KEEP`]. Returns whether it did. Call before any
/// thread starts.
pub fn cpu_compositing_without_gpu() -> bool {
    if std::env::var_os(VAR).is_some()
        || std::env::var_os(KEEP).is_some_and(|v| v == "1")
        || has_render_node(Path::new("/dev/dri"))
    {
        return false;
    }
    std::env::set_var(VAR, "1");
    true
}

/// Whether `dri` (the DRM device folder) holds a render node (`renderD128`, …): a GPU
/// OpenGL can draw on. Virtual machines, containers and Xvfb sessions usually have none.
fn has_render_node(dri: &Path) -> bool {
    std::fs::read_dir(dri).is_ok_and(|entries| {
        entries
            .flatten()
            .any(|e| e.file_name().to_string_lossy().starts_with("renderD"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_render_node_means_a_gpu_and_nothing_else_does() {
        let dir = tempfile::tempdir().unwrap();
        let dri = dir.path().join("dri");
        assert!(!has_render_node(&dri), "no DRM folder at all");
        std::fs::create_dir(&dri).unwrap();
        std::fs::write(dri.join("card0"), "").unwrap();
        assert!(
            !has_render_node(&dri),
            "a display card without a render node"
        );
        std::fs::write(dri.join("renderD128"), "").unwrap();
        assert!(has_render_node(&dri));
    }
}
