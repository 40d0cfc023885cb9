//! Lexical search over `memories_fts` (FTS5, porter stemming, BM25). SQLite-specific: a
//! second backend ranks with its own full-text index behind the same methods.
//!
//! Any user string is a valid query: it is split into word tokens, each token is quoted
//! (so FTS5 operators, column filters, quotes and parentheses in the input are plain text),
//! and tokens are OR-ed so BM25 ranks partial matches.

use super::sql::{Dialect, Value};
use super::{MemoryFilter, Tx};
use crate::Result;

/// Words too common to help ranking; dropped unless the query has nothing else.
const STOPWORDS: &[&str] = &[
    "a", "about", "an", "and", "are", "as", "at", "be", "been", "but", "by", "can", "could", "did",
    "do", "does", "for", "from", "had", "has", "have", "how", "i", "if", "in", "into", "is", "it",
    "its", "me", "my", "of", "on", "or", "our", "she", "he", "so", "than", "that", "the", "their",
    "them", "then", "there", "these", "they", "this", "to", "was", "we", "were", "what", "when",
    "where", "which", "who", "whom", "why", "will", "with", "would", "you", "your", "her", "his",
    "him", "any", "some", "also", "just", "not", "no", "yes", "ever",
];

/// The distinct word tokens of `input` worth matching: lower-cased, stopwords and one-letter
/// words dropped unless nothing else is left.
pub fn query_tokens(input: &str) -> Vec<String> {
    let tokens: Vec<String> = input
        .split(|c: char| !c.is_alphanumeric())
        .filter(|t| !t.is_empty())
        .map(str::to_lowercase)
        .collect();
    // One-letter words carry nothing, and "Carol's" would otherwise match every "let's".
    let content: Vec<&String> = tokens
        .iter()
        .filter(|t| !STOPWORDS.contains(&t.as_str()))
        .filter(|t| t.chars().count() > 1 || t.chars().all(|c| c.is_ascii_digit()))
        .collect();
    let chosen: Vec<&String> = if content.is_empty() {
        tokens.iter().collect()
    } else {
        content
    };
    let mut seen = std::collections::HashSet::new();
    chosen
        .into_iter()
        .filter(|t| seen.insert(t.as_str()))
        .cloned()
        .collect()
}

fn quote(token: &str) -> String {
    format!("\"{}\"", token.replace('"', "\"\""))
}

/// Turns arbitrary user text into a safe FTS5 MATCH expression, or `None` if the text
/// has no word characters at all.
pub fn fts_query(input: &str) -> Option<String> {
    let tokens = query_tokens(input);
    (!tokens.is_empty()).then(|| {
        tokens
            .iter()
            .map(|t| quote(t))
            .collect::<Vec<_>>()
            .join(" OR ")
    })
}

/// Stores with at least this many memories prune very common query words.
const PRUNE_FROM_ROWS: i64 = 20_000;
/// A word in more than this share of documents is dropped from a large store's query
/// (unless no other word is left): its IDF is a tenth of a rare word's, so it barely moves
/// the ranking, but BM25 would have to score every document containing it.
const PRUNE_DOC_SHARE: f64 = 0.10;

impl Tx<'_> {
    /// BM25 matches of `query` among memories passing `filter`: (id, score) with score > 0,
    /// higher is better, best first, at most `limit`. With the default filter, memories
    /// the filter hides (deleted, forgotten) may be among them; callers re-check.
    pub fn lexical_search(
        &self,
        query: &str,
        filter: &MemoryFilter,
        limit: usize,
    ) -> Result<Vec<(i64, f64)>> {
        if self.conn().dialect() == Dialect::Postgres {
            return self.lexical_search_pg(query_tokens(query), filter, limit);
        }
        let tokens = self.prune_common(query_tokens(query))?;
        if tokens.is_empty() {
            return Ok(Vec::new());
        }
        let expr = tokens
            .iter()
            .map(|t| quote(t))
            .collect::<Vec<_>>()
            .join(" OR ");
        // Column weights: text, who (0: the actor signal covers it), what (a copy of text),
        // when, where, why, how.
        const SCORE: &str = "-bm25(memories_fts, 1.0, 0.0, 0.0, 0.5, 0.5, 0.5, 0.5)";
        let mut params = vec![Value::Text(expr)];
        let sql = if filter.is_default_visibility() {
            format!(
                "SELECT rowid, {SCORE} AS s FROM memories_fts WHERE memories_fts MATCH ?
                 ORDER BY s DESC LIMIT ?"
            )
        } else {
            let (cond, filter_params) = filter.to_sql(Dialect::Sqlite);
            params.extend(filter_params);
            format!(
                "SELECT m.id, {SCORE} AS s
                 FROM memories_fts JOIN memories m ON m.id = memories_fts.rowid
                 WHERE memories_fts MATCH ? AND {cond}
                 ORDER BY s DESC LIMIT ?"
            )
        };
        params.push(Value::Integer(super::sql::count(limit)));
        let mut stmt = self.conn().prepare_cached(&sql)?;
        let rows = stmt.query_map(super::sql::params_from_iter(params), |r| {
            Ok((r.get::<i64>(0)?, r.get::<f64>(1)?))
        })?;
        rows.collect::<Result<_>>()
    }

    /// The Postgres twin of [`Tx::lexical_search`]: the generated `fts` column (the text
    /// weighted A; when, where, why and how B) under its GIN index finds the memories that
    /// hold any query word, and each is scored as BM25 scores it (k1 = 1.2, b = 0.75) with
    /// one occurrence per word: the sum over its matching words of the word's IDF (FTS5's,
    /// from the word's document count), a match only in the B fields counting half (FTS5's
    /// column weights 1.0 and 0.5), over a length normalisation by the memory's number of
    /// lexemes. Postgres's own `ts_rank_cd` has no IDF: a rare word that tells two
    /// near-identical memories apart counted no more than "the", and the exact wording of
    /// a memory did not find it first. The tokens are word characters only, so each is a
    /// valid `tsquery` of any input.
    fn lexical_search_pg(
        &self,
        tokens: Vec<String>,
        filter: &MemoryFilter,
        limit: usize,
    ) -> Result<Vec<(i64, f64)>> {
        let super::Db::Postgres(pg) = self.db else {
            return Err(crate::Error::Internal(
                "the Postgres lexical search ran on another database".into(),
            ));
        };
        // Each word's document count serves both the pruning and the IDF: read once.
        let rows = self.document_count()?;
        let frequencies = self.document_frequencies(&tokens)?;
        let counted = prune(tokens.into_iter().zip(frequencies).collect(), rows);
        let tokens: Vec<&str> = counted.iter().map(|(t, _)| t.as_str()).collect();
        let documents = rows as f64;
        let mut terms = Vec::new();
        let mut params = Vec::new();
        for (t, df) in &counted {
            let df = *df as f64;
            if df == 0.0 {
                continue;
            }
            // FTS5's IDF: a word in half the memories or more tells nothing (a floor of
            // 1e-6, as FTS5's, keeps it from counting against a memory).
            let idf = ((documents - df + 0.5) / (df + 0.5)).ln().max(1e-6);
            terms.push(
                "CASE WHEN m.fts @@ to_tsquery('english', ?) THEN CAST(? AS DOUBLE PRECISION)
                      WHEN m.fts @@ to_tsquery('english', ?) THEN CAST(? AS DOUBLE PRECISION)
                      ELSE 0 END",
            );
            params.extend([
                Value::Text(format!("{t}:A")),
                Value::Real(idf),
                Value::Text(format!("{t}:B")),
                Value::Real(idf * 0.5),
            ]);
        }
        if terms.is_empty() {
            return Ok(Vec::new());
        }
        params.push(Value::Real(pg.mean_lexemes()?));
        params.push(Value::Text(tokens.join(" | ")));
        let (cond, filter_params) = filter.to_sql(Dialect::Postgres);
        params.extend(filter_params);
        params.push(Value::Integer(super::sql::count(limit)));
        let sql = format!(
            "SELECT m.id, ({}) * 2.2
                 / (1.0 + 1.2 * (0.25 + 0.75 * length(m.fts) / CAST(? AS DOUBLE PRECISION))) AS s
             FROM memories m
             WHERE m.fts @@ to_tsquery('english', ?) AND {cond}
             ORDER BY s DESC, m.id LIMIT ?",
            terms.join(" + ")
        );
        let mut stmt = self.conn().prepare_cached(&sql)?;
        let rows = stmt.query_map(super::sql::params_from_iter(params), |r| {
            Ok((r.get::<i64>(0)?, r.get::<f64>(1)?))
        })?;
        rows.filter(|r| r.as_ref().map_or(true, |(_, s)| *s > 0.0))
            .collect()
    }

    /// In a large store, drops tokens found in more than `PRUNE_DOC_SHARE` of documents,
    /// keeping at least the rarest one.
    fn prune_common(&self, tokens: Vec<String>) -> Result<Vec<String>> {
        let rows = self.document_count()?;
        if rows < PRUNE_FROM_ROWS || tokens.len() < 2 {
            return Ok(tokens);
        }
        let frequencies = self.document_frequencies(&tokens)?;
        Ok(prune(tokens.into_iter().zip(frequencies).collect(), rows)
            .into_iter()
            .map(|(t, _)| t)
            .collect())
    }

    /// How many memories the store has held (the highest id: cheap, and close enough for
    /// document frequencies).
    fn document_count(&self) -> Result<i64> {
        self.conn()
            .query_row("SELECT COALESCE(MAX(id), 0) FROM memories", [], |r| {
                r.get(0)
            })
    }

    /// How many memories hold each token.
    fn document_frequencies(&self, tokens: &[String]) -> Result<Vec<i64>> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(conn.pick(
            "SELECT count(*) FROM memories_fts WHERE memories_fts MATCH ?1",
            "SELECT count(*) FROM memories WHERE fts @@ to_tsquery('english', ?1)",
        ))?;
        tokens
            .iter()
            .map(|t| {
                let term = match conn.dialect() {
                    Dialect::Sqlite => quote(t),
                    Dialect::Postgres => t.clone(),
                };
                stmt.query_row([term], |r| r.get(0))
            })
            .collect()
    }
}

/// `counted` (token, document count) without the tokens found in more than
/// `PRUNE_DOC_SHARE` of a large store's `rows` documents, keeping at least the rarest.
fn prune(counted: Vec<(String, i64)>, rows: i64) -> Vec<(String, i64)> {
    if rows < PRUNE_FROM_ROWS || counted.len() < 2 {
        return counted;
    }
    let limit = (rows as f64 * PRUNE_DOC_SHARE) as i64;
    let rarest = counted.iter().map(|c| c.1).min().unwrap_or(0);
    counted
        .into_iter()
        .filter(|(_, df)| *df <= limit || *df == rarest)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_every_token_and_drops_syntax() {
        assert_eq!(
            fts_query("NEAR(foo bar) AND \"baz\" OR -qux*").unwrap(),
            "\"near\" OR \"foo\" OR \"bar\" OR \"baz\" OR \"qux\""
        );
        assert_eq!(
            fts_query("who:me col:value ^start").unwrap(),
            "\"col\" OR \"value\" OR \"start\""
        );
        assert_eq!(fts_query("\"\"\"").as_deref(), None);
        assert_eq!(fts_query("").as_deref(), None);
        assert_eq!(fts_query("   ***  ").as_deref(), None);
    }

    #[test]
    fn keeps_stopwords_when_nothing_else_is_left() {
        assert_eq!(
            fts_query("what is it").unwrap(),
            "\"what\" OR \"is\" OR \"it\""
        );
        assert_eq!(fts_query("what is Kafka").unwrap(), "\"kafka\"");
        assert_eq!(
            fts_query("Carol's umbrella").unwrap(),
            "\"carol\" OR \"umbrella\""
        );
    }

    #[test]
    fn very_common_words_are_pruned_only_in_large_stores() {
        use crate::memory::{Kind, NewMemory};
        let mut store = crate::store::Store::open_in_memory().unwrap();
        let fill = |store: &mut crate::store::Store, from: usize, to: usize| {
            store
                .transaction(|tx| {
                    for i in from..to {
                        let text = if i == 7 {
                            "common zebra"
                        } else {
                            "common filler"
                        };
                        tx.insert_memory(&NewMemory::new(Kind::Episode, text), 1.0, 0)?;
                    }
                    Ok(())
                })
                .unwrap();
        };
        let filter = MemoryFilter::default();
        fill(&mut store, 0, 1000);
        // Small store: every matching word counts.
        assert_eq!(
            store
                .read()
                .lexical_search("common zebra", &filter, 50)
                .unwrap()
                .len(),
            50
        );
        fill(&mut store, 1000, PRUNE_FROM_ROWS as usize);
        // Large store: "common" (in every document) is dropped, the rare word is kept.
        let hits = store
            .read()
            .lexical_search("common zebra", &filter, 50)
            .unwrap();
        assert_eq!(hits.len(), 1);
        assert_eq!(hits[0].0, 8);
        // A query of only common words keeps the rarest of them.
        assert_eq!(
            store
                .read()
                .lexical_search("common filler", &filter, 50)
                .unwrap()
                .len(),
            50
        );
    }

    #[test]
    fn handles_unicode_words() {
        assert_eq!(
            fts_query("Müller über café 東京").unwrap(),
            "\"müller\" OR \"über\" OR \"café\" OR \"東京\""
        );
    }
}
