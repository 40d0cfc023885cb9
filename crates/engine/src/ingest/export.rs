//! Somna's own JSON export: every memory (with its embedding), link, message and history
//! entry, with ids preserved, so an export imported into an empty store is the same store.

use crate::memory::Memory;
pub use crate::store::ExportedMessage;
use crate::store::{CoAccess, HistoryEntry, Link};
use serde::{Deserialize, Serialize};

pub const EXPORT_FORMAT: &str = "somna-export";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExportedMemory {
    #[serde(flatten)]
    pub memory: Memory,
    /// Stored so an import needs no model and loses nothing.
    pub embedding: Option<Vec<f32>>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExportDoc {
    pub format: String,
    pub version: u32,
    pub exported_at: i64,
    pub memories: Vec<ExportedMemory>,
    pub links: Vec<Link>,
    pub messages: Vec<ExportedMessage>,
    pub history: Vec<HistoryEntry>,
    #[serde(default)]
    pub co_access: Vec<CoAccess>,
}
