//! Links the runtime's unwinder statically, so `somna-appimage-runtime` needs only glibc.
//!
//! Rust programs on linux-gnu load `libgcc_s.so.1` for unwinding. The runtime is the first
//! thing that runs on a user's machine, so it links GCC's static unwinder (`libgcc_eh.a`)
//! whole instead: its definitions take the place of the shared ones, and `--as-needed`
//! leaves `libgcc_s` out of the binary's dependencies (the tests check this with `ldd`).
fn main() {
    println!(
        "cargo:rustc-link-arg-bin=somna-appimage-runtime=-Wl,--push-state,--whole-archive,-lgcc_eh,--pop-state"
    );
}
