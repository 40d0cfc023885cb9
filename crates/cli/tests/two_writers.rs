//! Two processes writing to one store at once: two `somna serve` on the same SQLite file,
//! each with two clients that add a memory and then search (a search records accesses, a
//! write too) over REST, as fast as they can for 20 s (`SOMNA_TWO_WRITERS_SECS` overrides).
//! Every request must succeed (no "database is locked") and every acknowledged memory must
//! be in the store afterwards, each client's conversation holding exactly what it was told
//! was stored. Uses the real model (as every CLI test does).

use std::collections::HashSet;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const SERVERS: usize = 2;
const CLIENTS_PER_SERVER: usize = 2;

/// A `somna serve` that is killed when dropped.
struct Server {
    child: Child,
    addr: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve(db: &Path, home: &Path) -> Server {
    let mut child = Command::new(env!("CARGO_BIN_EXE_somna"))
        .arg("--json")
        .arg("--db")
        .arg(db)
        .args(["serve", "--port", "0"])
        .env("SOMNA_HOME", home)
        .env("SOMNA_MODEL_DIR", somna_engine::paths::model_dir())
        .stdout(Stdio::piped())
        .spawn()
        .expect("start somna serve");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("read the address");
    let info: serde_json::Value = match serde_json::from_str(&line) {
        Ok(v) => v,
        Err(_) => {
            let status = child.wait().expect("wait");
            panic!("somna serve did not start ({status}): {line:?}");
        }
    };
    let addr = info["address"]
        .as_str()
        .expect("address")
        .trim_start_matches("http://")
        .to_string();
    Server { child, addr }
}

/// One POST over its own connection: (HTTP status, body).
fn post(
    addr: &str,
    token: &str,
    path: &str,
    body: &serde_json::Value,
) -> Result<(u16, String), String> {
    let body = body.to_string();
    let mut s = TcpStream::connect(addr).map_err(|e| format!("connect: {e}"))?;
    s.set_read_timeout(Some(Duration::from_secs(120)))
        .map_err(|e| e.to_string())?;
    write!(
        s,
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .map_err(|e| format!("send: {e}"))?;
    let mut raw = Vec::new();
    s.read_to_end(&mut raw)
        .map_err(|e| format!("receive: {e}"))?;
    let raw = String::from_utf8_lossy(&raw);
    let (head, rest) = raw.split_once("\r\n\r\n").ok_or("no HTTP header")?;
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| format!("bad status line: {head}"))?;
    let chunked = head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked");
    Ok((
        status,
        if chunked {
            dechunk(rest)
        } else {
            rest.to_string()
        },
    ))
}

fn dechunk(mut s: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = s.split_once("\r\n") {
        let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if n == 0 || rest.len() < n {
            break;
        }
        out.push_str(&rest[..n]);
        s = rest[n..].trim_start_matches("\r\n");
    }
    out
}

#[derive(Default)]
struct Report {
    acked: Vec<i64>,
    adds: usize,
    searches: usize,
    failures: Vec<String>,
}

/// Adds then searches until `until`, in conversation `conversation`.
fn client(addr: String, token: String, conversation: String, until: Instant) -> Report {
    let mut r = Report::default();
    let mut i = 0;
    while Instant::now() < until {
        let add = serde_json::json!({
            "conversation": conversation,
            // With the message's own id, as an agent relaying its chat sends it: the store
            // looks the id up before it inserts (a read before the write).
            "messages": [{
                "speaker": "Ada",
                "text": format!("{conversation} note {i}: the lighthouse lamp needs a new wick before winter."),
                "external_id": format!("{conversation}-{i}"),
            }],
            "extract_facts": false,
        });
        r.adds += 1;
        match post(&addr, &token, "/api/v1/memories", &add) {
            Ok((200..=299, body)) => {
                let v: serde_json::Value = serde_json::from_str(&body).unwrap_or_default();
                match v["episodes"].as_array().map(|a| a.as_slice()) {
                    Some([id]) => r.acked.push(id.as_i64().unwrap_or(-1)),
                    _ => r.failures.push(format!("add: unexpected answer {body}")),
                }
            }
            Ok((status, body)) => r.failures.push(format!("add: HTTP {status}: {body}")),
            Err(e) => r.failures.push(format!("add: {e}")),
        }
        let search = serde_json::json!({"query": format!("what about the lighthouse lamp, note {i}?"), "k": 10});
        r.searches += 1;
        match post(&addr, &token, "/api/v1/search", &search) {
            Ok((200..=299, _)) => {}
            Ok((status, body)) => r.failures.push(format!("search: HTTP {status}: {body}")),
            Err(e) => r.failures.push(format!("search: {e}")),
        }
        i += 1;
    }
    r
}

#[test]
fn two_servers_on_one_store_lose_and_fail_no_write() {
    let secs: u64 = std::env::var("SOMNA_TWO_WRITERS_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("somna.db");
    // Both servers start from the same empty store; the first creates the token file
    // that the second then reads.
    let first = serve(&db, dir.path());
    let second = serve(&db, dir.path());
    let token = std::fs::read_to_string(dir.path().join("server-token"))
        .unwrap()
        .trim()
        .to_string();

    let until = Instant::now() + Duration::from_secs(secs);
    let servers = [&first, &second];
    let clients: Vec<_> = (0..SERVERS * CLIENTS_PER_SERVER)
        .map(|n| {
            let (addr, token) = (servers[n % SERVERS].addr.clone(), token.clone());
            let conversation = format!("writer-{n}");
            std::thread::spawn(move || client(addr, token, conversation, until))
        })
        .collect();
    let reports: Vec<Report> = clients.into_iter().map(|c| c.join().unwrap()).collect();
    drop((first, second));

    let adds: usize = reports.iter().map(|r| r.adds).sum();
    let searches: usize = reports.iter().map(|r| r.searches).sum();
    let failures: Vec<&String> = reports.iter().flat_map(|r| &r.failures).collect();
    let acked: Vec<i64> = reports.iter().flat_map(|r| r.acked.clone()).collect();
    eprintln!(
        "{secs} s, {SERVERS} servers × {CLIENTS_PER_SERVER} clients: {adds} adds, {searches} searches, {} acknowledged, {} failed",
        acked.len(),
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "{} of {} requests failed, e.g.:\n{}",
        failures.len(),
        adds + searches,
        failures
            .iter()
            .take(5)
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert!(adds >= 8, "too few writes ({adds}) to show anything");
    assert_eq!(
        acked.iter().collect::<HashSet<_>>().len(),
        acked.len(),
        "an id acknowledged twice"
    );

    // Lost writes: every acknowledged id is stored, and each conversation holds exactly
    // its client's acknowledged adds.
    let conn =
        rusqlite::Connection::open_with_flags(&db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap();
    conn.busy_timeout(Duration::from_secs(5)).unwrap();
    let stored: HashSet<i64> = conn
        .prepare("SELECT id FROM memories WHERE deleted_at IS NULL")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    let lost: Vec<i64> = acked
        .iter()
        .copied()
        .filter(|id| !stored.contains(id))
        .collect();
    assert!(lost.is_empty(), "acknowledged but not stored: {lost:?}");
    for (n, r) in reports.iter().enumerate() {
        let in_store: i64 = conn
            .query_row(
                "SELECT COUNT(*) FROM memories WHERE conversation = ?1 AND kind = 'episode'",
                [format!("writer-{n}")],
                |row| row.get(0),
            )
            .unwrap();
        assert_eq!(in_store, r.acked.len() as i64, "client {n}");
    }
}
