//! Load test of the loopback HTTP server: N concurrent clients (default 4) add memories
//! and search for a while (default 60 s), each over its own keep-alive HTTP connection to
//! the REST API. Reports errors, writes acknowledged versus writes found in the store
//! afterwards (lost writes), and search/add latency percentiles.
//!
//! cargo run --release -p somna-server --example load -- [--secs 60] [--clients 4] [--db PATH]
//!
//! Without --db, a fresh store in a temporary directory; the real model from the usual place.

use serde_json::{json, Value};
use somna_engine::{paths, Config, Job, ListQuery, MemoryFilter, Somna};
use somna_server::Ops;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

const TOPICS: &[&str] = &[
    "the lighthouse lamp",
    "a trip to Lisbon",
    "the marathon training plan",
    "my sister's wedding",
    "the Rust borrow checker",
    "sourdough starter",
    "the night train to Vienna",
    "a broken bicycle chain",
];

#[derive(Default)]
struct ClientReport {
    acked: Vec<i64>,
    add_ms: Vec<f64>,
    search_ms: Vec<f64>,
    errors: Vec<String>,
}

fn arg(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

fn pct(v: &mut [f64], p: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    v[((v.len() - 1) as f64 * p).round() as usize]
}

async fn client(n: usize, base: String, token: String, until: Instant) -> ClientReport {
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(1)
        .build()
        .expect("http client");
    let mut r = ClientReport::default();
    let mut i = 0usize;
    while Instant::now() < until {
        let topic = TOPICS[(n + i) % TOPICS.len()];
        let add = json!({
            "conversation": format!("load-{n}"),
            "messages": [{"speaker": format!("client{n}"), "text": format!("Client {n} note {i}: today I thought about {topic} again.")}],
            "extract_facts": false
        });
        let t = Instant::now();
        match http
            .post(format!("{base}/api/v1/memories"))
            .bearer_auth(&token)
            .json(&add)
            .send()
            .await
        {
            Ok(resp) if resp.status().is_success() => {
                let v: Value = resp.json().await.unwrap_or(Value::Null);
                match v["episodes"].as_array() {
                    Some(ids) if ids.len() == 1 => r.acked.push(ids[0].as_i64().unwrap_or(-1)),
                    _ => r.errors.push(format!("add: unexpected answer {v}")),
                }
                r.add_ms.push(t.elapsed().as_secs_f64() * 1e3);
            }
            Ok(resp) => r.errors.push(format!("add: HTTP {}", resp.status())),
            Err(e) => r.errors.push(format!("add: {e}")),
        }
        let q = json!({"query": format!("what did client {n} think about {}?", TOPICS[i % TOPICS.len()]), "k": 10});
        let t = Instant::now();
        match http
            .post(format!("{base}/api/v1/search"))
            .bearer_auth(&token)
            .json(&q)
            .send()
            .await
        {
            Ok(resp) if resp.status().is_success() => {
                let _: Value = resp.json().await.unwrap_or(Value::Null);
                r.search_ms.push(t.elapsed().as_secs_f64() * 1e3);
            }
            Ok(resp) => r.errors.push(format!("search: HTTP {}", resp.status())),
            Err(e) => r.errors.push(format!("search: {e}")),
        }
        i += 1;
    }
    r
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let secs: u64 = arg("--secs").map_or(Ok(60), |s| s.parse())?;
    let clients: usize = arg("--clients").map_or(Ok(4), |s| s.parse())?;
    let tmp = tempfile::tempdir()?;
    let db = arg("--db").map_or_else(|| tmp.path().join("load.db"), Into::into);
    let engine = Arc::new(Somna::open(
        &Config::new(&db, paths::model_dir()),
        &Job::default(),
    )?);
    let before: Vec<u64> = (0..clients)
        .map(|n| count(&engine, n))
        .collect::<anyhow::Result<_>>()?;
    let token = "load-test-token".to_string();
    let server = somna_server::serve(
        Ops::new(engine.clone(), "load"),
        SocketAddr::from(([127, 0, 0, 1], 0)),
        &token,
    )
    .await?;
    let base = format!("http://{}", server.addr);
    println!(
        "{clients} clients on {base} for {secs} s (store {})",
        db.display()
    );

    let started = Instant::now();
    let until = started + Duration::from_secs(secs);
    let tasks: Vec<_> = (0..clients)
        .map(|n| tokio::spawn(client(n, base.clone(), token.clone(), until)))
        .collect();
    let mut all = ClientReport::default();
    let mut per_client = Vec::new();
    for t in tasks {
        let r = t.await?;
        per_client.push(r.acked.len());
        all.acked.extend(r.acked);
        all.add_ms.extend(r.add_ms);
        all.search_ms.extend(r.search_ms);
        all.errors.extend(r.errors);
    }
    let elapsed = started.elapsed().as_secs_f64();
    server.stop().await?;

    // Lost writes: every acknowledged id must be in the store, and each client's
    // conversation must hold exactly its acknowledged writes.
    let mut lost = 0u64;
    for (n, acked) in per_client.iter().enumerate() {
        let now = count(&engine, n)?;
        lost += (before[n] + *acked as u64).saturating_sub(now);
        if now != before[n] + *acked as u64 {
            println!(
                "client {n}: {acked} acknowledged, {} in the store",
                now - before[n]
            );
        }
    }
    let missing = all
        .acked
        .iter()
        .filter(|id| engine.get(**id).is_err())
        .count();
    println!(
        "duration {elapsed:.1} s · writes acknowledged {} ({:.1}/s) · lost {lost} · acknowledged ids missing {missing} · errors {}",
        all.acked.len(),
        all.acked.len() as f64 / elapsed,
        all.errors.len()
    );
    println!(
        "search: {} requests · p50 {:.1} ms · p99 {:.1} ms · max {:.1} ms",
        all.search_ms.len(),
        pct(&mut all.search_ms, 0.5),
        pct(&mut all.search_ms, 0.99),
        pct(&mut all.search_ms, 1.0)
    );
    println!(
        "add:    {} requests · p50 {:.1} ms · p99 {:.1} ms · max {:.1} ms",
        all.add_ms.len(),
        pct(&mut all.add_ms, 0.5),
        pct(&mut all.add_ms, 0.99),
        pct(&mut all.add_ms, 1.0)
    );
    for e in all.errors.iter().take(10) {
        println!("error: {e}");
    }
    if !all.errors.is_empty() || lost > 0 || missing > 0 {
        anyhow::bail!("load test failed");
    }
    Ok(())
}

fn count(engine: &Somna, n: usize) -> anyhow::Result<u64> {
    Ok(engine
        .list(&ListQuery {
            filter: MemoryFilter {
                conversation: Some(format!("load-{n}")),
                ..Default::default()
            },
            limit: 1,
            ..Default::default()
        })?
        .total)
}
