//! A compression backend over any OpenAI-compatible chat-completions endpoint (a local
//! Ollama or llama.cpp server): seed 000's compression and schema prompts with JSON
//! output, parsed leniently and validated. A context-length error triggers seed 002's
//! emergency truncation (drop the oldest half of the episodes) and one retry. Any other
//! failure is an error, and the cycle falls back to the extractive backend for that batch.
//!
//! Requests go through ureq over `http://` (a local server) or `https://` (a hosted
//! OpenAI-compatible API; rustls with the Mozilla root certificates).

use crate::compress::{Batch, Compression, Compressor, Corpus, SchemaDraft, SummaryView};
use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::time::Duration;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatConfig {
    /// e.g. `http://localhost:11434/v1` (requests go to `<base_url>/chat/completions`).
    pub base_url: String,
    pub model: String,
    pub api_key: Option<String>,
    pub timeout_secs: u64,
}

impl ChatConfig {
    /// From `SOMNA_LLM_BASE_URL`, `SOMNA_LLM_MODEL` and `SOMNA_LLM_API_KEY` (or
    /// `OPENAI_API_KEY`); `None` unless a base URL and a model are set.
    pub fn from_env() -> Option<Self> {
        let get = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        Some(Self {
            base_url: get("SOMNA_LLM_BASE_URL")?,
            model: get("SOMNA_LLM_MODEL")?,
            api_key: get("SOMNA_LLM_API_KEY").or_else(|| get("OPENAI_API_KEY")),
            timeout_secs: get("SOMNA_LLM_TIMEOUT_SECS")
                .and_then(|t| t.parse().ok())
                .unwrap_or(60),
        })
    }
}

pub struct ChatCompressor {
    config: ChatConfig,
    name: String,
}

impl ChatCompressor {
    pub fn new(config: ChatConfig) -> Self {
        let name = format!("chat:{}", config.model);
        Self { config, name }
    }

    /// One chat completion; returns the assistant message's content.
    fn complete(&self, system: &str, user: &str) -> Result<String> {
        let body = serde_json::json!({
            "model": self.config.model,
            "temperature": 0,
            "response_format": {"type": "json_object"},
            "messages": [
                {"role": "system", "content": system},
                {"role": "user", "content": user},
            ],
        });
        let url = format!(
            "{}/chat/completions",
            self.config.base_url.trim_end_matches('/')
        );
        let (status, text) = post_json(
            &url,
            self.config.api_key.as_deref(),
            &body.to_string(),
            Duration::from_secs(self.config.timeout_secs.max(1)),
        )?;
        if status != 200 {
            let lower = text.to_lowercase();
            if lower.contains("context_length") || lower.contains("context length") {
                return Err(Error::InvalidInput(CONTEXT_OVERFLOW.into()));
            }
            return Err(chat_error(format!(
                "HTTP {status}: {}",
                text.chars().take(200).collect::<String>()
            )));
        }
        let v: serde_json::Value = serde_json::from_str(&text)
            .map_err(|e| chat_error(format!("response is not JSON: {e}")))?;
        v["choices"][0]["message"]["content"]
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| chat_error("no choices[0].message.content in the response".into()))
    }
}

const CONTEXT_OVERFLOW: &str = "chat backend: context length exceeded";

fn chat_error(m: String) -> Error {
    Error::InvalidInput(format!("chat backend: {m}"))
}

const COMPRESS_PROMPT: &str = "You consolidate episodes of a conversation into one memory. \
Reply with a JSON object only: {\"summary\": string (2-4 sentences, third person, names and \
dates kept), \"key_concepts\": [string], \"themes\": [string], \"relationships\": [string], \
\"confidence\": number between 0 and 1}.";

const SCHEMA_PROMPT: &str = "You find the recurring pattern in related memory summaries. \
Reply with a JSON object only: {\"name\": string (a short title), \"description\": string \
(1-2 sentences), \"core_concepts\": [string], \"examples\": [string], \"confidence\": number \
between 0 and 1}.";

#[derive(Deserialize)]
struct CompressionJson {
    summary: String,
    #[serde(default)]
    key_concepts: Vec<String>,
    #[serde(default)]
    themes: Vec<String>,
    #[serde(default)]
    relationships: Vec<String>,
    #[serde(default)]
    confidence: Option<f64>,
}

const NAME_PROMPT: &str = "You name clusters of related memories. For each numbered \
cluster, give a short name (2 to 4 words, a noun phrase a person understands, such as \
'Sourdough baking' or 'Mother's dementia care'), distinct from the other clusters' names. \
The keywords after each number were picked by a statistic and may help. Reply with a JSON \
object only: {\"names\": [string, one per cluster, in order]}.";

/// Longest cluster name taken from a model (characters).
const MAX_NAME: usize = 48;
/// Member texts shown per cluster, and characters per text.
const NAME_SAMPLES: usize = 6;
const NAME_SAMPLE_CHARS: usize = 200;

#[derive(Deserialize)]
struct NamesJson {
    names: Vec<String>,
}

/// The cluster-naming prompt: each cluster's keywords and a few member texts.
fn names_prompt(samples: &[Vec<String>], hints: &[String]) -> String {
    let mut out = String::new();
    for (i, (texts, hint)) in samples.iter().zip(hints).enumerate() {
        out.push_str(&format!("{}. keywords: {hint}\n", i + 1));
        for t in texts.iter().take(NAME_SAMPLES) {
            let t: String = t.split_whitespace().collect::<Vec<_>>().join(" ");
            out.push_str(&format!(
                "   - {}\n",
                t.chars().take(NAME_SAMPLE_CHARS).collect::<String>()
            ));
        }
    }
    out
}

/// The model's names, checked: one line, 1 to [`MAX_NAME`] characters, unique; any other
/// falls back to the cluster's hint.
fn checked_names(names: Vec<String>, hints: &[String]) -> Result<Vec<String>> {
    if names.len() != hints.len() {
        return Err(chat_error(format!(
            "{} names for {} clusters",
            names.len(),
            hints.len()
        )));
    }
    let mut seen = std::collections::HashSet::new();
    Ok(names
        .into_iter()
        .zip(hints)
        .map(|(n, hint)| {
            let n = n.split_whitespace().collect::<Vec<_>>().join(" ");
            let n = n
                .trim_matches(|c: char| c == '"' || c == '\'' || c == '.')
                .to_string();
            let ok = !n.is_empty() && n.chars().count() <= MAX_NAME;
            if ok && seen.insert(n.to_lowercase()) {
                n
            } else {
                hint.clone()
            }
        })
        .collect())
}

#[derive(Deserialize)]
struct SchemaJson {
    name: String,
    description: String,
    #[serde(default)]
    core_concepts: Vec<String>,
    #[serde(default)]
    examples: Vec<String>,
    #[serde(default)]
    confidence: Option<f64>,
}

/// The JSON object in a model's reply (code fences and chatter around it are ignored).
fn json_object<T: serde::de::DeserializeOwned>(reply: &str) -> Result<T> {
    let start = reply.find('{');
    let end = reply.rfind('}');
    match (start, end) {
        (Some(s), Some(e)) if s < e => serde_json::from_str(&reply[s..=e])
            .map_err(|err| chat_error(format!("malformed JSON reply: {err}"))),
        _ => Err(chat_error("the reply holds no JSON object".into())),
    }
}

fn confidence(c: Option<f64>) -> f64 {
    c.filter(|c| c.is_finite()).unwrap_or(0.5).clamp(0.0, 1.0)
}

fn episodes_prompt(batch: &Batch, skip: usize) -> String {
    batch.episodes[skip..]
        .iter()
        .map(|e| {
            format!(
                "[{}] {}: {}",
                e.when.as_deref().unwrap_or("?"),
                e.who.as_deref().unwrap_or("?"),
                e.text
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

impl Compressor for ChatCompressor {
    fn name(&self) -> &str {
        &self.name
    }

    fn compress(&self, batch: &Batch, _corpus: &Corpus) -> Result<Compression> {
        let mut note = None;
        let reply = match self.complete(COMPRESS_PROMPT, &episodes_prompt(batch, 0)) {
            Err(Error::InvalidInput(m)) if m == CONTEXT_OVERFLOW => {
                // Seed 002: drop the oldest half and retry once.
                let skip = batch.episodes.len() / 2;
                note = Some(format!(
                    "context length exceeded: retried with the newest {} of {} episodes",
                    batch.episodes.len() - skip,
                    batch.episodes.len()
                ));
                self.complete(COMPRESS_PROMPT, &episodes_prompt(batch, skip))?
            }
            other => other?,
        };
        let parsed: CompressionJson = json_object(&reply)?;
        if parsed.summary.trim().is_empty() {
            return Err(chat_error("empty summary".into()));
        }
        Ok(Compression {
            summary: parsed.summary.trim().to_string(),
            key_concepts: parsed.key_concepts,
            themes: parsed.themes,
            relationships: parsed.relationships,
            confidence: confidence(parsed.confidence),
            note,
        })
    }

    fn schema(
        &self,
        core: &[String],
        members: &[&SummaryView],
        _corpus: &Corpus,
    ) -> Result<SchemaDraft> {
        let mut user = format!("Shared concepts: {}\n\nSummaries:\n", core.join(", "));
        for m in members {
            user.push_str(&format!("- {}\n", m.text));
        }
        let parsed: SchemaJson = json_object(&self.complete(SCHEMA_PROMPT, &user)?)?;
        if parsed.name.trim().is_empty() || parsed.description.trim().is_empty() {
            return Err(chat_error("empty schema name or description".into()));
        }
        Ok(SchemaDraft {
            name: parsed.name.trim().to_string(),
            description: parsed.description.trim().to_string(),
            core_concepts: if parsed.core_concepts.is_empty() {
                core.to_vec()
            } else {
                parsed.core_concepts
            },
            examples: parsed.examples,
            confidence: confidence(parsed.confidence),
        })
    }

    fn name_clusters(
        &self,
        samples: &[Vec<String>],
        hints: &[String],
    ) -> Result<Option<Vec<String>>> {
        if samples.is_empty() {
            return Ok(Some(Vec::new()));
        }
        let parsed: NamesJson =
            json_object(&self.complete(NAME_PROMPT, &names_prompt(samples, hints))?)?;
        checked_names(parsed.names, hints).map(Some)
    }
}

/// Refuses an endpoint URL the client cannot speak to (anything but `http://` and `https://`).
pub fn check_base_url(url: &str) -> Result<()> {
    if url.starts_with("http://") || url.starts_with("https://") {
        return Ok(());
    }
    Err(chat_error(format!(
        "the endpoint must be an http:// or https:// URL (a local server such as \
         http://localhost:11434/v1, or a hosted OpenAI-compatible API), not {url}"
    )))
}

/// POSTs a JSON body to an `http://` or `https://` URL (ureq, rustls with the Mozilla
/// roots); returns the status and the body. Statuses other than 2xx are returned, not
/// errors, so callers can read the server's message.
fn post_json(
    url: &str,
    api_key: Option<&str>,
    body: &str,
    timeout: Duration,
) -> Result<(u16, String)> {
    check_base_url(url)?;
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(timeout))
        .http_status_as_error(false)
        .build()
        .into();
    let mut request = agent
        .post(url)
        .header("Accept", "application/json")
        .content_type("application/json");
    if let Some(key) = api_key {
        request = request.header("Authorization", format!("Bearer {key}"));
    }
    let mut response = request
        .send(body)
        .map_err(|e| chat_error(format!("{url}: {e}")))?;
    let status = response.status().as_u16();
    let text = response
        .body_mut()
        .read_to_string()
        .map_err(|e| chat_error(format!("{url}: reading the response: {e}")))?;
    Ok((status, text))
}

/// A chat reply's text and, when the server reported `usage`, its token counts.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatReply {
    pub content: String,
    pub prompt_tokens: Option<u64>,
    pub completion_tokens: Option<u64>,
}

/// One plain-text chat completion (temperature 0) over [`post_json`], for callers other
/// than compression (the memory evaluation's answers and judgements).
pub(crate) fn complete(config: &ChatConfig, system: &str, user: &str) -> Result<ChatReply> {
    let body = serde_json::json!({
        "model": config.model,
        "temperature": 0,
        "messages": [
            {"role": "system", "content": system},
            {"role": "user", "content": user},
        ],
    });
    let url = format!("{}/chat/completions", config.base_url.trim_end_matches('/'));
    let (status, text) = post_json(
        &url,
        config.api_key.as_deref(),
        &body.to_string(),
        Duration::from_secs(config.timeout_secs.max(1)),
    )?;
    if status != 200 {
        return Err(chat_error(format!(
            "HTTP {status}: {}",
            text.chars().take(200).collect::<String>()
        )));
    }
    let v: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| chat_error(format!("response is not JSON: {e}")))?;
    let content = v["choices"][0]["message"]["content"]
        .as_str()
        .ok_or_else(|| chat_error("no choices[0].message.content in the response".into()))?;
    Ok(ChatReply {
        content: content.to_string(),
        prompt_tokens: v["usage"]["prompt_tokens"].as_u64(),
        completion_tokens: v["usage"]["completion_tokens"].as_u64(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_is_found_inside_fences_and_chatter() {
        let r: CompressionJson =
            json_object("Sure!\n```json\n{\"summary\": \"Ann paints.\", \"confidence\": 7}\n```")
                .unwrap();
        assert_eq!(r.summary, "Ann paints.");
        assert_eq!(confidence(r.confidence), 1.0);
        assert!(json_object::<CompressionJson>("{\"summary\": ").is_err());
        assert!(json_object::<CompressionJson>("no json here").is_err());
    }

    /// A server that reads one request's head and answers with `reply` (raw bytes).
    fn one_shot(reply: &'static [u8]) -> std::net::SocketAddr {
        use std::io::{BufRead, BufReader, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().unwrap();
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|n| n > 0) && line != "\r\n" {
                line.clear();
            }
            let _ = stream.write_all(reply);
        });
        addr
    }

    #[test]
    fn chunked_bodies_are_joined_and_error_statuses_returned() {
        let addr = one_shot(
            b"HTTP/1.1 503 Busy\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n\
              4\r\nWiki\r\n5\r\npedia\r\n0\r\n\r\n",
        );
        let (status, body) = post_json(
            &format!("http://{addr}/v1"),
            Some("k"),
            "{}",
            Duration::from_secs(5),
        )
        .unwrap();
        assert_eq!((status, body.as_str()), (503, "Wikipedia"));
    }

    #[test]
    fn https_urls_are_spoken_to_over_tls() {
        // The first byte a client sends on an https:// URL is a TLS handshake record (0x16);
        // this server then closes, so the request fails, naming the URL.
        use std::io::Read;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("https://{}/v1", listener.local_addr().unwrap());
        let first = std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().unwrap();
            let mut byte = [0u8; 1];
            stream.read_exact(&mut byte).unwrap();
            byte[0]
        });
        let e = post_json(&url, None, "{}", Duration::from_secs(5))
            .unwrap_err()
            .to_string();
        assert_eq!(first.join().unwrap(), 0x16, "not a TLS handshake");
        assert!(e.contains(&url), "{e}");
    }

    #[test]
    fn other_schemes_are_refused_by_name() {
        let e = post_json("ftp://example.org/v1", None, "{}", Duration::from_secs(1))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("http:// or https://") && e.contains("ftp://example.org/v1"),
            "{e}"
        );
    }

    #[test]
    fn cluster_names_are_checked_and_fall_back_to_the_hints() {
        let hints: Vec<String> = ["sourdough · rye", "marathon", "beagle", "allotment"]
            .map(String::from)
            .to_vec();
        let names = checked_names(
            vec![
                " \"Sourdough baking\" ".into(),
                "".into(),
                "sourdough baking".into(),
                "x".repeat(60),
            ],
            &hints,
        )
        .unwrap();
        // Kept (trimmed), empty, a duplicate, too long: the last three are the hints.
        assert_eq!(
            names,
            vec!["Sourdough baking", "marathon", "beagle", "allotment"]
        );
        assert!(checked_names(vec!["one".into()], &hints).is_err());
    }

    #[test]
    fn clusters_are_named_by_the_endpoint() {
        let content = r#"{\"names\": [\"Sourdough baking\", \"Marathon training\"]}"#;
        let body = format!(r#"{{"choices":[{{"message":{{"content":"{content}"}}}}]}}"#);
        let reply = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        let addr = one_shot(Box::leak(reply.into_bytes().into_boxed_slice()));
        let chat = ChatCompressor::new(ChatConfig {
            base_url: format!("http://{addr}/v1"),
            model: "m".into(),
            api_key: None,
            timeout_secs: 5,
        });
        let samples = vec![
            vec!["Fed the starter with rye.".to_string()],
            vec!["Ran 30 km today.".to_string()],
        ];
        let hints = vec!["rye · starter".to_string(), "long run".to_string()];
        let names = chat.name_clusters(&samples, &hints).unwrap().unwrap();
        assert_eq!(names, vec!["Sourdough baking", "Marathon training"]);
        // The extractive backend keeps its own labels.
        assert!(crate::compress::Extractive::default()
            .name_clusters(&samples, &hints)
            .unwrap()
            .is_none());
    }
}
