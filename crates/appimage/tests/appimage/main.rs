//! The AppImage runtime and builder, run as a user would: the real binaries on a small
//! AppDir built in a temporary directory.

mod build;
mod corrupt;
mod extract;
mod fixture;
mod start;
