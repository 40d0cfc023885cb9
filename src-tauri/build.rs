/// The app's commands, declared in its manifest so that each needs a permission
/// (`allow-<name>`) granted by a capability (capabilities/default.json) before a webview
/// may call it. Without an app manifest, Tauri lets any webview script call every command.
const COMMANDS: &[&str] = include!("src/command_names.rs");

fn main() {
    println!("cargo:rerun-if-changed=src/command_names.rs");
    // tauri.conf.json lives at the repository root (see README "Desktop app").
    let attributes = tauri_build::Attributes::new()
        .config_path("../tauri.conf.json")
        .app_manifest(tauri_build::AppManifest::new().commands(COMMANDS));
    tauri_build::try_build(attributes).expect("tauri build script failed");
}
