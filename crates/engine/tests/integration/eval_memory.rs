//! `eval memory` on a tiny LoCoMo-format conversation: the five methods without an LLM, and
//! the LLM setting against a local chat-completions server with canned answers.

use crate::common::Fixture;
use somna_engine::eval::memory::{self, MemoryEvalOptions, MemoryEvalReport, Method};
use somna_engine::sleep::chat::ChatConfig;
use somna_engine::{Job, SleepConfig};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

fn data() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/locomo-tiny.json")
}

fn options() -> MemoryEvalOptions {
    MemoryEvalOptions {
        k: 4,
        sleep: SleepConfig {
            schema_min_support: 2,
            ..Default::default()
        },
        ..Default::default()
    }
}

fn row1<'a>(r: &'a MemoryEvalReport, m: Method, setting: &str) -> &'a memory::Table1Row {
    r.table1
        .iter()
        .find(|t| t.method == m && t.setting == setting)
        .unwrap()
}

fn row2<'a>(
    r: &'a MemoryEvalReport,
    m: Method,
    setting: &str,
    probe: &str,
) -> &'a memory::Table2Row {
    r.table2
        .iter()
        .find(|t| t.method == m && t.setting == setting && t.probe == probe)
        .unwrap()
}

#[test]
fn five_methods_without_an_llm() {
    let f = Fixture::real();
    let r = memory::run(&f.engine, &data(), &options(), &Job::default()).unwrap();
    assert_eq!(
        (r.questions, r.answerable, r.multi_session, r.adversarial),
        (7, 6, 2, 1)
    );
    assert_eq!(r.table1.len(), 5);
    assert_eq!(r.table2.len(), 5 * memory::PROBES.len());
    let sleep = r.sleep.as_ref().unwrap();
    assert!(sleep.summaries > 0, "{sleep:?}");

    // No memory hands the agent nothing.
    let none = row1(&r, Method::NoMemory, "context");
    assert_eq!(
        (
            none.long_horizon_qa,
            none.recall_at_k,
            none.mean_packed_items
        ),
        (0.0, 0.0, 0.0)
    );
    // Every memory method finds most answers in a 20-turn conversation with k = 4.
    for m in [
        Method::Rag,
        Method::Episodic,
        Method::Summaries,
        Method::Sleep,
    ] {
        let t = row1(&r, m, "context");
        assert!(t.recall_at_k >= 0.6, "{m:?}: {t:?}");
        assert!(t.long_horizon_qa >= 0.5, "{m:?}: {t:?}");
        assert!(t.mean_packed_items > 0.0 && t.mean_packed_items <= 4.0);
        // Turns and extractive summaries come from the conversation.
        if matches!(m, Method::Rag | Method::Episodic) {
            assert_eq!(t.hallucination_rate, 0.0, "{m:?}");
        }
    }
    // Methods that do not sleep are unchanged by the cycle; summaries add coverage of the
    // multi-session questions' evidence.
    for p in memory::PROBES {
        let t = row2(&r, Method::Rag, "context", p);
        assert_eq!((t.before, t.delta), (t.after, 0.0));
    }
    let before_schemas = row2(&r, Method::Sleep, "context", "schema_utilization").before;
    assert_eq!(before_schemas, 0.0, "no schema exists before the cycle");
    // Per-question results name packed memories that exist, and before/after both exist.
    assert!(r
        .per_question
        .iter()
        .any(|q| q.method == Method::Sleep && q.phase == "after"));
    let packed: Vec<i64> = r
        .per_question
        .iter()
        .flat_map(|q| q.packed_ids.clone())
        .collect();
    for id in packed.iter().take(50) {
        f.engine.get(*id).unwrap();
    }

    // Files: the JSON round-trips and the CSVs have a header and one line per row.
    let out = f.dir.path().join("out");
    let files = memory::write_outputs(&r, &out).unwrap();
    let back: MemoryEvalReport =
        serde_json::from_str(&std::fs::read_to_string(&files.results).unwrap()).unwrap();
    assert_eq!(back.table1.len(), 5);
    let t1 = std::fs::read_to_string(&files.table1).unwrap();
    assert!(t1.starts_with("method,setting,long_horizon_qa"));
    assert_eq!(t1.lines().count(), 6);
    let t2 = std::fs::read_to_string(&files.table2).unwrap();
    assert_eq!(t2.lines().count(), 1 + 5 * memory::PROBES.len());
    assert!(memory::format_tables(&r).contains("cross_episode_integration"));
}

#[test]
fn a_cancelled_evaluation_stops() {
    let f = Fixture::hash();
    let job = Job::default();
    job.cancel.cancel();
    let e = memory::run(&f.engine, &data(), &options(), &job).unwrap_err();
    assert!(matches!(e, somna_engine::Error::Cancelled), "{e}");
}

/// Gold answers of the fixture, by question.
const ANSWERS: [(&str, &str); 6] = [
    ("make in her first pottery class", "a blue bowl"),
    ("Where does Ann take", "Elm Street"),
    ("name of Bob's dog", "Biscuit"),
    ("Which city", "Lisbon"),
    ("looked after", "his sister"),
    ("over the months", "a vase"),
];

/// A chat-completions server that answers a question only when a word of its answer is in
/// the memories it was given ("UNKNOWN" otherwise, "fish" to the unanswerable question), and
/// judges an answer correct when it shares a word with the gold answer. Every reply reports
/// usage of 10 prompt and 2 completion tokens.
fn server() -> (String, Arc<Mutex<usize>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let count = Arc::new(Mutex::new(0));
    let seen = count.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut len = 0;
            loop {
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                if line == "\r\n" || line.is_empty() {
                    break;
                }
                if let Some(v) = line.to_lowercase().strip_prefix("content-length:") {
                    len = v.trim().parse().unwrap();
                }
            }
            let mut body = vec![0; len];
            reader.read_exact(&mut body).unwrap();
            let body: serde_json::Value = serde_json::from_slice(&body).unwrap();
            *seen.lock().unwrap() += 1;
            let system = body["messages"][0]["content"].as_str().unwrap();
            let user = body["messages"][1]["content"].as_str().unwrap();
            let reply = if system.contains("grade") {
                let gold = user
                    .split("Gold answer: ")
                    .nth(1)
                    .unwrap()
                    .lines()
                    .next()
                    .unwrap();
                let cand = user.split("Candidate answer: ").nth(1).unwrap();
                let shares = gold
                    .split_whitespace()
                    .filter(|w| w.len() > 3)
                    .any(|w| cand.to_lowercase().contains(&w.to_lowercase()));
                if shares { "CORRECT" } else { "WRONG" }.to_string()
            } else {
                let (memories, question) = user.split_once("\n\nQuestion: ").unwrap();
                if question.contains("cat") {
                    "fish".to_string()
                } else {
                    ANSWERS
                        .iter()
                        .find(|(q, _)| question.contains(q))
                        .filter(|(_, a)| {
                            a.split_whitespace()
                                .filter(|w| w.len() > 3)
                                .any(|w| memories.contains(w))
                        })
                        .map_or("UNKNOWN".to_string(), |(_, a)| a.to_string())
                }
            };
            let text = serde_json::json!({
                "choices": [{"message": {"role": "assistant", "content": reply}}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 2},
            })
            .to_string();
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{text}",
                text.len()
            );
        }
    });
    (url, count)
}

#[test]
fn llm_answers_are_judged_against_the_gold_answer() {
    let f = Fixture::real();
    let (base_url, requests) = server();
    let opts = MemoryEvalOptions {
        methods: vec![Method::NoMemory, Method::Rag, Method::Sleep],
        llm: Some(ChatConfig {
            base_url,
            model: "canned".into(),
            api_key: None,
            timeout_secs: 10,
        }),
        ..options()
    };
    let r = memory::run(&f.engine, &data(), &opts, &Job::default()).unwrap();
    assert_eq!(r.llm_model.as_deref(), Some("canned"));
    // Without memories every answerable question is UNKNOWN (an abstention, not a
    // hallucination); "fish" for the unanswerable one is the only hallucination: 1 of 7.
    let none = row1(&r, Method::NoMemory, "llm");
    assert_eq!(none.long_horizon_qa, 0.0);
    assert!(
        (none.hallucination_rate - 1.0 / 7.0).abs() < 1e-9,
        "{none:?}"
    );
    // With memories most answers are in the context and judged correct.
    for m in [Method::Rag, Method::Sleep] {
        let t = row1(&r, m, "llm");
        assert!(t.long_horizon_qa >= 0.5, "{m:?}: {t:?}");
        assert!(t.long_horizon_qa <= 1.0);
        let q = r
            .per_question
            .iter()
            .find(|q| q.method == m && q.category == 5)
            .unwrap();
        assert_eq!(q.llm.as_ref().unwrap().verdict, "asserted");
    }
    let t2 = row2(&r, Method::Sleep, "llm", "cue_based_recall");
    assert!(t2.before > 0.0 && t2.questions == 6, "{t2:?}");
    // Usage: every call counted once, tokens from the server's `usage`; identical prompts
    // (the same context for the same question) were answered from the cache.
    let u = &r.llm_usage;
    assert_eq!(u.calls as usize, *requests.lock().unwrap());
    assert_eq!(
        (u.prompt_tokens, u.completion_tokens),
        (10 * u.calls, 2 * u.calls)
    );
    assert!(u.cached > 0, "{u:?}");
    // Both settings are in both tables.
    assert!(r.table1.iter().any(|t| t.setting == "context"));
    assert_eq!(r.table1.len(), 6);
}
