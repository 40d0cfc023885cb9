//! Queries on `messages`, the raw conversation log.

use super::sql::{params, OptionalExtension};
use super::{Change, Tx};
use crate::Result;
use serde::{Deserialize, Serialize};

/// One message of a conversation, as given to `add` or found by an importer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// "user", "assistant", "system", "tool", or a speaker's role in an imported dialogue.
    pub role: String,
    /// Who said it (a name); defaults to the role.
    pub speaker: Option<String>,
    pub text: String,
    pub session: Option<String>,
    pub occurred_at: Option<i64>,
    /// The message's identity in its source (a LoCoMo `dia_id`, a content hash for chat
    /// JSONL; stores written before content hashes hold `line:<n>` for chat JSONL):
    /// re-importing the same source skips messages already stored.
    pub external_id: Option<String>,
    #[serde(default)]
    pub metadata: serde_json::Value,
}

/// A stored message with its id, conversation, memory and time (the export format's row).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExportedMessage {
    pub id: i64,
    pub conversation: String,
    #[serde(flatten)]
    pub message: Message,
    pub memory_id: Option<i64>,
    pub created_at: i64,
}

impl Tx<'_> {
    /// FIFO cap (seed 002): drops the oldest messages of `conversation` from the log until
    /// their texts total at most `max_chars`. Returns how many were dropped. The memories
    /// made from them stay.
    pub fn prune_messages(&self, conversation: &str, max_chars: usize) -> Result<usize> {
        self.note(Change::Messages {
            conversations: vec![conversation.to_string()],
        })?;
        self.conn().execute(
            "DELETE FROM messages WHERE id IN (
                SELECT id FROM (
                    SELECT id, SUM(length(text)) OVER (ORDER BY id DESC) AS kept
                    FROM messages WHERE conversation = ?1)
                WHERE kept > ?2)",
            params![conversation, max_chars as i64],
        )
    }

    /// Stores a message; returns `None` if a message with the same external id exists.
    pub fn insert_message(&self, conversation: &str, m: &Message, now: i64) -> Result<Option<i64>> {
        if let Some(ext) = &m.external_id {
            let exists: Option<i64> = self
                .conn()
                .prepare_cached(
                    "SELECT id FROM messages WHERE conversation = ?1 AND external_id = ?2",
                )?
                .query_row(params![conversation, ext], |r| r.get(0))
                .optional()?;
            if exists.is_some() {
                return Ok(None);
            }
        }
        self.note(Change::Messages {
            conversations: vec![conversation.to_string()],
        })?;
        let metadata = if m.metadata.is_null() {
            "{}".to_string()
        } else {
            serde_json::to_string(&m.metadata)?
        };
        self.conn()
            .prepare_cached(
                "INSERT INTO messages (conversation, session, role, speaker, text, occurred_at,
                    external_id, metadata, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) RETURNING id",
            )?
            .query_row(
                params![
                    conversation,
                    m.session,
                    m.role,
                    m.speaker,
                    m.text,
                    m.occurred_at,
                    m.external_id,
                    metadata,
                    now
                ],
                |r| r.get(0),
            )
            .map(Some)
    }

    /// Whether `conversation` holds a message with this external id.
    pub fn message_exists(&self, conversation: &str, external_id: &str) -> Result<bool> {
        self.conn()
            .prepare_cached("SELECT 1 FROM messages WHERE conversation = ?1 AND external_id = ?2")?
            .exists(params![conversation, external_id])
    }

    /// Whether `conversation` holds a message whose external id starts with `prefix`
    /// (one range step on the `(conversation, external_id)` index).
    pub fn has_external_id_prefix(&self, conversation: &str, prefix: &str) -> Result<bool> {
        // Every id starting with `prefix` sorts in [prefix, prefix + U+10FFFF).
        let end = format!("{prefix}\u{10ffff}");
        self.conn()
            .prepare_cached(
                "SELECT 1 FROM messages
                 WHERE conversation = ?1 AND external_id >= ?2 AND external_id < ?3 LIMIT 1",
            )?
            .exists(params![conversation, prefix, end])
    }

    /// The message of `conversation` with this external id.
    pub fn message_by_external_id(
        &self,
        conversation: &str,
        external_id: &str,
    ) -> Result<Option<Message>> {
        self.conn()
            .prepare_cached(
                "SELECT role, speaker, text, session, occurred_at, external_id, metadata
                 FROM messages WHERE conversation = ?1 AND external_id = ?2",
            )?
            .query_row(params![conversation, external_id], message_row)
            .optional()
    }

    /// Records that message `message_id` became memory `memory_id`; announces the
    /// message's conversation.
    pub fn link_message(&self, message_id: i64, memory_id: i64) -> Result<()> {
        self.writing()?;
        let conversations: Vec<String> = self
            .conn()
            .prepare_cached(
                "UPDATE messages SET memory_id = ?2 WHERE id = ?1 RETURNING conversation",
            )?
            .query_map(params![message_id, memory_id], |r| r.get(0))?
            .collect::<Result<_>>()?;
        if !conversations.is_empty() {
            self.note(Change::Messages { conversations })?;
        }
        Ok(())
    }

    pub fn message_count(&self, conversation: &str) -> Result<i64> {
        self.conn().query_row(
            "SELECT COUNT(*) FROM messages WHERE conversation = ?1",
            [conversation],
            |r| r.get(0),
        )
    }

    /// The last `n` messages of a conversation, oldest first.
    pub fn recent_messages(&self, conversation: &str, n: usize) -> Result<Vec<Message>> {
        let mut stmt = self.conn().prepare(
            "SELECT role, speaker, text, session, occurred_at, external_id, metadata FROM messages
             WHERE conversation = ?1 ORDER BY id DESC LIMIT ?2",
        )?;
        let rows = stmt.query_map(params![conversation, super::sql::count(n)], message_row)?;
        let mut out: Vec<Message> = rows.collect::<Result<_>>()?;
        out.reverse();
        Ok(out)
    }

    /// Conversations with their message counts.
    pub fn conversations(&self) -> Result<Vec<(String, i64)>> {
        let mut stmt = self.conn().prepare(
            "SELECT conversation, COUNT(*) FROM messages GROUP BY conversation ORDER BY conversation",
        )?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
        rows.collect::<Result<_>>()
    }
}

impl Tx<'_> {
    /// Every message with its id, conversation, memory id and creation time (for export).
    pub fn all_messages(&self) -> Result<Vec<ExportedMessage>> {
        let mut stmt = self.conn().prepare(
            "SELECT id, conversation, role, speaker, text, session, occurred_at, external_id,
                    metadata, memory_id, created_at
             FROM messages ORDER BY id",
        )?;
        let rows = stmt.query_map([], |r| {
            let md: String = r.get(8)?;
            Ok(ExportedMessage {
                id: r.get(0)?,
                conversation: r.get(1)?,
                message: Message {
                    role: r.get(2)?,
                    speaker: r.get(3)?,
                    text: r.get(4)?,
                    session: r.get(5)?,
                    occurred_at: r.get(6)?,
                    external_id: r.get(7)?,
                    metadata: serde_json::from_str(&md).unwrap_or_default(),
                },
                memory_id: r.get(9)?,
                created_at: r.get(10)?,
            })
        })?;
        rows.collect::<Result<_>>()
    }

    /// Inserts an exported message as it was (id and all).
    pub fn restore_message(&self, m: &ExportedMessage) -> Result<()> {
        self.note(Change::Messages {
            conversations: vec![m.conversation.clone()],
        })?;
        self.conn().execute(
            "INSERT INTO messages (id, conversation, session, role, speaker, text, occurred_at,
                external_id, metadata, memory_id, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
            params![
                m.id,
                m.conversation,
                m.message.session,
                m.message.role,
                m.message.speaker,
                m.message.text,
                m.message.occurred_at,
                m.message.external_id,
                serde_json::to_string(&m.message.metadata)?,
                m.memory_id,
                m.created_at
            ],
        )?;
        Ok(())
    }
}

/// A `messages` row selected as `role, speaker, text, session, occurred_at, external_id,
/// metadata`.
fn message_row(r: &super::sql::Row<'_>) -> Result<Message> {
    let md: String = r.get(6)?;
    Ok(Message {
        role: r.get(0)?,
        speaker: r.get(1)?,
        text: r.get(2)?,
        session: r.get(3)?,
        occurred_at: r.get(4)?,
        external_id: r.get(5)?,
        metadata: serde_json::from_str(&md).unwrap_or_default(),
    })
}
