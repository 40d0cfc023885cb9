//! Lexical search over `memories_fts` (FTS5, porter stemming, BM25). SQLite-specific: a
//! second backend ranks with its own full-text index behind the same methods.
//!
//! Any user string is a valid query: it is split into word tokens, each token is quoted
//! (so FTS5 operators, column filters, quotes and parentheses in the input are plain text),
//! and tokens are OR-ed so BM25 ranks partial matches.

use super::lexicon;
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
    /// the filter hides (deleted, forgotten) may be among them; callers re-check. A large
    /// SQLite store ranks them in memory when its index there is current (`lexicon.rs`:
    /// FTS5's scores, without FTS5's cost per match).
    pub fn lexical_search(
        &self,
        query: &str,
        filter: &MemoryFilter,
        limit: usize,
    ) -> Result<Vec<(i64, f64)>> {
        self.lexical(query, filter, limit, true)
    }

    /// FTS5's own ranking of `query`, never the in-memory index: what
    /// [`Tx::lexical_search`] answers on a SQLite store while that index is missing or
    /// stale, for benchmarks and checks that compare the two (on Postgres, the same as
    /// `lexical_search`).
    pub fn lexical_search_fts5(
        &self,
        query: &str,
        filter: &MemoryFilter,
        limit: usize,
    ) -> Result<Vec<(i64, f64)>> {
        self.lexical(query, filter, limit, false)
    }

    /// [`Tx::lexical_search`], ranking in memory where it can if `in_memory`.
    fn lexical(
        &self,
        query: &str,
        filter: &MemoryFilter,
        limit: usize,
        in_memory: bool,
    ) -> Result<Vec<(i64, f64)>> {
        if self.conn().dialect() == Dialect::Postgres {
            return self.lexical_search_pg(query_tokens(query), filter, limit);
        }
        let tokens = query_tokens(query);
        if tokens.is_empty() {
            return Ok(Vec::new());
        }
        let rows = self.document_count()?;
        let memory = if in_memory {
            self.in_memory(filter, rows, &tokens)?
        } else {
            None
        };
        if let Some((index, terms)) = memory {
            // The same words as FTS5's query below (each word's count of documents is its
            // term's), ranked as FTS5 ranks them (`lexicon.rs`).
            let counted = terms
                .into_iter()
                .map(|t| {
                    let documents = index.documents(&t);
                    (t, documents)
                })
                .collect();
            let terms: Vec<String> = prune(counted, rows).into_iter().map(|t| t.0).collect();
            return Ok(index.rank(&terms, limit));
        }
        self.fts5_search(tokens, rows, filter, limit)
    }

    /// FTS5's BM25 matches of `tokens` (a query's, not empty) in a store of `rows`.
    fn fts5_search(
        &self,
        tokens: Vec<String>,
        rows: i64,
        filter: &MemoryFilter,
        limit: usize,
    ) -> Result<Vec<(i64, f64)>> {
        let tokens = self.prune_common(tokens, rows)?;
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
    ///
    /// Scoring every memory that holds a common word is what costs; so the memories are
    /// found by their rarer words first, and the common words are added only if they
    /// could change the result (MaxScore: see [`common_words_matter`]). The result is the
    /// one scoring every candidate gives.
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
        let frequencies = self.document_frequencies_pg(&tokens, rows)?;
        let documents = rows as f64;
        // (token, document count, IDF), rarest first; FTS5's IDF: a word in half the
        // memories or more tells nothing (a floor of 1e-6, as FTS5's, keeps it from
        // counting against one).
        let mut words: Vec<Word> = prune(tokens.into_iter().zip(frequencies).collect(), rows)
            .into_iter()
            .filter(|(_, df)| *df > 0)
            .map(|(token, df)| Word {
                idf: ((documents - df as f64 + 0.5) / (df as f64 + 0.5))
                    .ln()
                    .max(1e-6),
                token,
                documents: df,
            })
            .collect();
        if words.is_empty() || limit == 0 {
            return Ok(Vec::new());
        }
        words.sort_by_key(|w| w.documents);
        let mean = pg.mean_lexemes(rows)?;
        // The rarest words whose memories number at most a fiftieth of the store (at
        // least one word) find the candidates; if the rest could lift a memory that holds
        // none of those into the result, every word finds them.
        let budget = (rows / 50).max(1000);
        let mut finding = 0;
        let mut found = 0;
        for w in &words {
            if finding > 0 && found + w.documents > budget {
                break;
            }
            found += w.documents;
            finding += 1;
        }
        // Even the rarest word is in too many memories to score them all: the memories
        // holding both of the two rarest come first, and are the result if no memory
        // lacking one of them could reach their lowest score.
        if words.len() >= 2 && words[0].documents > budget {
            let both = format!("{} & {}", words[0].token, words[1].token);
            let hits = self.bm25_pg(&words, &both, mean, filter, limit)?;
            if let (true, Some(last)) = (hits.len() == limit, hits.last()) {
                let weaker = usize::from(words[1].idf < words[0].idf);
                let mut lacking: Vec<&Word> = words.iter().collect();
                lacking.remove(weaker);
                if !common_words_matter(&lacking, mean, last.1) {
                    return Ok(hits);
                }
            }
        }
        let any = |n: usize| {
            let tokens: Vec<&str> = words[..n].iter().map(|w| w.token.as_str()).collect();
            tokens.join(" | ")
        };
        let hits = self.bm25_pg(&words, &any(finding), mean, filter, limit)?;
        let floor = if hits.len() == limit {
            hits.last().map_or(0.0, |h| h.1)
        } else {
            0.0
        };
        let rest: Vec<&Word> = words[finding..].iter().collect();
        if finding == words.len() || !common_words_matter(&rest, mean, floor) {
            return Ok(hits);
        }
        self.bm25_pg(&words, &any(words.len()), mean, filter, limit)
    }

    /// The BM25 scores (see [`Tx::lexical_search_pg`]) by every word of `words` of the
    /// memories that match `finding` (a `tsquery` of some of those words), best first.
    fn bm25_pg(
        &self,
        words: &[Word],
        finding: &str,
        mean: f64,
        filter: &MemoryFilter,
        limit: usize,
    ) -> Result<Vec<(i64, f64)>> {
        let mut terms = Vec::new();
        let mut params = Vec::new();
        for Word { token: t, idf, .. } in words {
            // Uncorrelated subqueries: each `tsquery` is parsed once, not once a row.
            terms.push(
                "CASE WHEN m.fts @@ (SELECT to_tsquery('english', ?))
                      THEN CAST(? AS DOUBLE PRECISION)
                      WHEN m.fts @@ (SELECT to_tsquery('english', ?))
                      THEN CAST(? AS DOUBLE PRECISION)
                      ELSE 0 END",
            );
            params.extend([
                Value::Text(format!("{t}:A")),
                Value::Real(*idf),
                Value::Text(format!("{t}:B")),
                Value::Real(idf * 0.5),
            ]);
        }
        params.push(Value::Real(mean));
        params.push(Value::Text(finding.to_string()));
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

    /// The store's in-memory index and the term of each of `tokens`, when a search of
    /// `rows` memories under `filter` can rank with it: a large SQLite store, the default
    /// filter, a read (not a write transaction, whose own changes the index lacks), the
    /// index of the version of `memories_fts` this read sees, and one term a token (a word
    /// FTS5 splits in two is a phrase, which only FTS5 matches).
    fn in_memory(
        &self,
        filter: &MemoryFilter,
        rows: i64,
        tokens: &[String],
    ) -> Result<Option<(std::sync::Arc<lexicon::Index>, Vec<String>)>> {
        let (Some(lexicon), super::Db::Sqlite(conn), None) = (self.lexicon, self.db, self.pending)
        else {
            return Ok(None);
        };
        if rows < lexicon::LEXICON_FROM_ROWS || !filter.is_default_visibility() {
            return Ok(None);
        }
        let Some(index) = lexicon.fresh(&lexicon::version(conn)?) else {
            return Ok(None);
        };
        let tokenizer = somna_fts5::Tokenizer::new(conn, lexicon::TOKENIZER)?;
        let mut terms = Vec::with_capacity(tokens.len());
        for token in tokens {
            match <[String; 1]>::try_from(tokenizer.terms(token)?) {
                Ok([term]) => terms.push(term),
                Err(_) => return Ok(None),
            }
        }
        Ok(Some((index, terms)))
    }

    /// In a large store (`rows` memories), drops tokens found in more than
    /// `PRUNE_DOC_SHARE` of documents, keeping at least the rarest one.
    fn prune_common(&self, tokens: Vec<String>, rows: i64) -> Result<Vec<String>> {
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
    pub(super) fn document_count(&self) -> Result<i64> {
        self.conn()
            .query_row("SELECT COALESCE(MAX(id), 0) FROM memories", [], |r| {
                r.get(0)
            })
    }

    /// How many memories hold each token, in a store of `rows` memories. In a large store
    /// a word among the column's most common elements in the planner's statistics
    /// (`pg_stats.most_common_elems` of `fts`, kept by ANALYZE) is counted from them:
    /// counting it exactly visits every memory holding it. Every other word is counted
    /// exactly, which is cheap because it is rarer than all of those.
    fn document_frequencies_pg(&self, tokens: &[String], rows: i64) -> Result<Vec<i64>> {
        if tokens.is_empty() {
            return Ok(Vec::new());
        }
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(
            "WITH words AS (
                 SELECT w, o FROM json_array_elements_text(CAST(?1 AS json))
                     WITH ORDINALITY AS t(w, o)),
             common AS (
                 SELECT e.lexeme, e.freq
                 FROM pg_stats s,
                      unnest(CAST(CAST(s.most_common_elems AS text) AS text[]),
                             s.most_common_elem_freqs) AS e(lexeme, freq)
                 WHERE ?2 = 1 AND s.schemaname = current_schema()
                   AND s.tablename = 'memories' AND s.attname = 'fts'
                   AND e.lexeme IS NOT NULL)
             SELECT COALESCE(
                 (SELECT CAST(max(c.freq) * ?3 AS BIGINT) FROM common c
                  WHERE c.lexeme = ANY (tsvector_to_array(to_tsvector('english', words.w)))),
                 (SELECT count(*) FROM memories WHERE fts @@ to_tsquery('english', words.w)))
             FROM words ORDER BY o",
        )?;
        let large = i64::from(rows >= PRUNE_FROM_ROWS);
        let words = serde_json::to_string(tokens).unwrap_or_default();
        let counts = stmt.query_map(
            super::sql::params_from_iter([
                Value::Text(words),
                Value::Integer(large),
                Value::Integer(rows),
            ]),
            |r| r.get::<i64>(0),
        )?;
        counts.collect()
    }

    /// How many memories hold each token (SQLite; see `document_frequencies_pg`).
    fn document_frequencies(&self, tokens: &[String]) -> Result<Vec<i64>> {
        let mut stmt = self
            .conn()
            .prepare_cached("SELECT count(*) FROM memories_fts WHERE memories_fts MATCH ?1")?;
        tokens
            .iter()
            .map(|t| stmt.query_row([quote(t)], |r| r.get(0)))
            .collect()
    }
}

/// A query word of the Postgres lexical search.
struct Word {
    token: String,
    /// How many memories hold it.
    documents: i64,
    idf: f64,
}

/// BM25's length normalisation (k1 = 1.2, b = 0.75) of a memory of `lexemes` lexemes in a
/// store whose memories have `mean` on average: what one matching word's IDF is
/// multiplied by.
fn bm25_weight(lexemes: f64, mean: f64) -> f64 {
    2.2 / (1.0 + 1.2 * (0.25 + 0.75 * lexemes / mean))
}

/// Whether a memory holding only words of `rest` (none of the words that found the
/// candidates) could score above `floor`, the lowest score of the result: if not, the
/// candidates hold the whole result (MaxScore). A memory holding `n` of those words has at
/// least `n` lexemes, so its score is at most the `n` largest IDFs at that length's weight.
fn common_words_matter(rest: &[&Word], mean: f64, floor: f64) -> bool {
    let mut idfs: Vec<f64> = rest.iter().map(|w| w.idf).collect();
    idfs.sort_by(|a, b| b.total_cmp(a));
    let mut sum = 0.0;
    idfs.iter().enumerate().any(|(i, idf)| {
        sum += idf;
        sum * bm25_weight((i + 1) as f64, mean) >= floor
    })
}

/// `counted` (token, document count) without the tokens found in more than
/// `PRUNE_DOC_SHARE` of a large store's `rows` documents, keeping at least the rarest.
fn prune<T>(counted: Vec<(T, i64)>, rows: i64) -> Vec<(T, i64)> {
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
    fn common_words_matter_only_when_they_could_reach_the_lowest_score() {
        let word = |idf: f64| Word {
            token: String::new(),
            documents: 0,
            idf,
        };
        // One common word of IDF 0.5 adds at most 0.5 × the weight of a one-lexeme memory.
        let most = 0.5 * bm25_weight(1.0, 8.0);
        assert!(!common_words_matter(&[&word(0.5)], 8.0, most + 0.01));
        assert!(common_words_matter(&[&word(0.5)], 8.0, most - 0.01));
        // Two: a memory holding both has at least two lexemes.
        let both = 1.0 * bm25_weight(2.0, 8.0);
        assert!(both > most);
        assert!(!common_words_matter(
            &[&word(0.5), &word(0.5)],
            8.0,
            both + 0.01
        ));
        assert!(common_words_matter(
            &[&word(0.5), &word(0.5)],
            8.0,
            both - 0.01
        ));
        // Nothing found by the rarer words (a floor of 0): they always might.
        assert!(common_words_matter(&[&word(1e-6)], 8.0, 0.0));
        // A longer memory weighs a word less.
        assert!(bm25_weight(20.0, 8.0) < bm25_weight(8.0, 8.0));
        assert!((bm25_weight(8.0, 8.0) - 1.0).abs() < 1e-12);
    }

    #[test]
    fn handles_unicode_words() {
        assert_eq!(
            fts_query("Müller über café 東京").unwrap(),
            "\"müller\" OR \"über\" OR \"café\" OR \"東京\""
        );
    }
}
