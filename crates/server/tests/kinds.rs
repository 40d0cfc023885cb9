//! HTTP statuses and MCP error codes follow the error's kind: every kind through the same
//! conversion the routes and tools use, and the kinds a client can cause through the real
//! REST routes and MCP tools (a bad argument, an unknown id, a cycle while one runs).

use axum::body::Body;
use axum::extract::connect_info::MockConnectInfo;
use axum::http::{Request, StatusCode};
use axum::response::IntoResponse;
use serde_json::{json, Value};
use somna_engine::embed::HashEmbedder;
use somna_engine::{Config, Error, Job, ProgressEvent, SleepOptions, Somna};
use somna_server::http::app;
use somna_server::{OpError, Ops};
use std::net::SocketAddr;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;

const TOKEN: &str = "test-token-0123456789";

/// One engine error of each kind, with the HTTP status and MCP code it must get.
fn one_of_each_kind() -> Vec<(Error, u16, i32)> {
    vec![
        (
            Error::InvalidInput("k must be 1 to 200 (got 0)".into()),
            422,
            -32602,
        ),
        (Error::NotFound { id: 7 }, 404, -32002),
        (
            Error::UndoBlocked {
                cycle: 1,
                later: vec![2],
            },
            409,
            -32009,
        ),
        (Error::CycleRunning, 409, -32009),
        (Error::Cancelled, 499, -32010),
        (
            Error::ModelMissing {
                dir: "/nowhere".into(),
            },
            503,
            -32011,
        ),
        (Error::Internal("broken".into()), 500, -32603),
    ]
}

#[tokio::test]
async fn every_error_kind_gets_its_http_status_and_keeps_its_code() {
    for (e, status, _) in one_of_each_kind() {
        let code = e.code();
        let resp = OpError::from(e).into_response();
        assert_eq!(resp.status().as_u16(), status, "{code}");
        let bytes = axum::body::to_bytes(resp.into_body(), 1 << 20)
            .await
            .unwrap();
        let body: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(body["error"]["code"], code);
        assert!(body["error"]["message"]
            .as_str()
            .is_some_and(|m| !m.is_empty()));
    }
}

#[test]
fn every_error_kind_gets_its_mcp_code_and_names_its_code_and_kind() {
    for (e, _, mcp) in one_of_each_kind() {
        let (code, kind) = (e.code(), e.kind().as_str());
        let err = rmcp::ErrorData::from(OpError::from(e));
        assert_eq!(err.code.0, mcp, "{code}");
        let data = err.data.expect("data");
        assert_eq!(data["code"], code);
        assert_eq!(data["kind"], kind);
    }
}

fn engine(dir: &tempfile::TempDir) -> Arc<Somna> {
    let cfg = Config::new(dir.path().join("s.db"), dir.path().join("model"));
    Arc::new(Somna::open_with(&cfg, Arc::new(HashEmbedder::new(384)), &Job::default()).unwrap())
}

fn router(engine: Arc<Somna>) -> axum::Router {
    let peer: SocketAddr = "127.0.0.1:50000".parse().unwrap();
    app(Ops::new(engine, "test"), TOKEN, CancellationToken::new()).layer(MockConnectInfo(peer))
}

async fn send(
    app: &axum::Router,
    method: &str,
    uri: &str,
    headers: &[(&str, &str)],
    body: Option<Value>,
) -> (StatusCode, axum::http::HeaderMap, String) {
    let mut req = Request::builder()
        .method(method)
        .uri(uri)
        .header("host", "127.0.0.1")
        .header("authorization", format!("Bearer {TOKEN}"));
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let req = match body {
        Some(b) => req
            .header("content-type", "application/json")
            .body(Body::from(b.to_string()))
            .unwrap(),
        None => req.body(Body::empty()).unwrap(),
    };
    let resp = app.clone().oneshot(req).await.unwrap();
    let (status, headers) = (resp.status(), resp.headers().clone());
    let bytes = axum::body::to_bytes(resp.into_body(), 1 << 24)
        .await
        .unwrap();
    (
        status,
        headers,
        String::from_utf8_lossy(&bytes).into_owned(),
    )
}

/// A minimal MCP client over streamable HTTP: initialize, then one tool call per request.
struct Mcp {
    app: axum::Router,
    session: String,
}

const ACCEPT: (&str, &str) = ("accept", "application/json, text/event-stream");

/// The JSON-RPC message with `id` in an SSE or JSON body.
fn message(body: &str, id: i64) -> Value {
    std::iter::once(body)
        .chain(body.lines().filter_map(|l| l.strip_prefix("data:")))
        .filter_map(|l| serde_json::from_str::<Value>(l.trim()).ok())
        .find(|v| v["id"] == id)
        .unwrap_or_else(|| panic!("no message {id} in {body}"))
}

impl Mcp {
    async fn connect(app: axum::Router) -> Self {
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "kinds-test", "version": "0"}}});
        let (s, headers, body) = send(&app, "POST", "/mcp", &[ACCEPT], Some(init)).await;
        assert_eq!(s, StatusCode::OK, "{body}");
        let session = headers["mcp-session-id"].to_str().unwrap().to_string();
        let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let hs = [ACCEPT, ("mcp-session-id", session.as_str())];
        let (s, _, body) = send(&app, "POST", "/mcp", &hs, Some(note)).await;
        assert!(s.is_success(), "{s} {body}");
        Self { app, session }
    }

    /// Calls `tool`; the JSON-RPC error, if the call failed.
    async fn error_of(&self, id: i64, tool: &str, args: Value) -> Option<Value> {
        let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": tool, "arguments": args}});
        let hs = [ACCEPT, ("mcp-session-id", self.session.as_str())];
        let (s, _, body) = send(&self.app, "POST", "/mcp", &hs, Some(call)).await;
        assert_eq!(s, StatusCode::OK, "{body}");
        message(&body, id).get("error").cloned()
    }
}

/// Starts a sleep cycle on another thread and returns once it is running; it finishes
/// when the returned sender is dropped or sent to.
fn hold_a_cycle(engine: &Arc<Somna>) -> (mpsc::Sender<()>, std::thread::JoinHandle<()>) {
    let (started_tx, started) = mpsc::channel::<()>();
    let (release, released) = mpsc::channel::<()>();
    let gate = Mutex::new(Some((started_tx, released)));
    let job = Job {
        progress: Arc::new(move |_: ProgressEvent| {
            if let Some((tx, rx)) = gate.lock().unwrap().take() {
                let _ = tx.send(());
                let _ = rx.recv();
            }
        }),
        cancel: Default::default(),
    };
    let e = engine.clone();
    let handle = std::thread::spawn(move || {
        let opts = SleepOptions {
            trigger: "test".into(),
            ..SleepOptions::default()
        };
        let _ = e.sleep(&opts, &job);
    });
    started
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("the cycle reports progress");
    (release, handle)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_routes_and_tools_answer_each_kind_a_client_can_cause() {
    let dir = tempfile::tempdir().unwrap();
    let engine = engine(&dir);
    let app = router(engine.clone());
    let mcp = Mcp::connect(app.clone()).await;

    // Invalid: 422 and invalid params.
    let (s, _, body) = send(
        &app,
        "POST",
        "/api/v1/search",
        &[],
        Some(json!({"query": "x", "k": 0})),
    )
    .await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    let e = mcp
        .error_of(1, "search_memory", json!({"query": "x", "k": 0}))
        .await
        .unwrap();
    assert_eq!(e["code"], -32602, "{e}");
    assert_eq!(e["data"]["kind"], "invalid");
    // Arguments that do not fit the tool's schema are refused the same way, not answered
    // with a tool result flagged isError.
    for (id, tool, args) in [
        (11, "search_memory", json!({"query": "x", "bogus": 1})),
        (12, "search_memory", json!({"query": "x", "k": "ten"})),
        (13, "get_memory", json!({})),
        (14, "list_memories", json!({"limit": 5, "colour": "blue"})),
    ] {
        let e = mcp
            .error_of(id, tool, args.clone())
            .await
            .unwrap_or_else(|| panic!("{tool} {args} was not refused"));
        assert_eq!(e["code"], -32602, "{tool} {args}: {e}");
        assert_eq!(e["data"]["code"], "invalid_input", "{e}");
        assert!(
            e["message"]
                .as_str()
                .unwrap()
                .starts_with("invalid arguments"),
            "{e}"
        );
    }

    // Not found: 404 and resource not found.
    let (s, _, body) = send(&app, "GET", "/api/v1/memories/999999", &[], None).await;
    assert_eq!(s, StatusCode::NOT_FOUND, "{body}");
    let e = mcp
        .error_of(2, "get_memory", json!({"id": 999999}))
        .await
        .unwrap();
    assert_eq!(e["code"], -32002, "{e}");
    assert_eq!(e["data"]["code"], "not_found");

    // Conflict: a cycle while another runs on the store.
    let messages: Vec<Value> = (0..8)
        .map(|i| json!({"speaker": "Ada", "text": format!("the ferry to the island number {i} leaves at noon")}))
        .collect();
    let (s, _, body) = send(
        &app,
        "POST",
        "/api/v1/memories",
        &[],
        Some(json!({"conversation": "c", "messages": messages})),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{body}");
    let (release, cycle) = hold_a_cycle(&engine);
    let (s, _, body) = send(&app, "POST", "/api/v1/sleep", &[], Some(json!({}))).await;
    assert_eq!(s, StatusCode::CONFLICT, "{body}");
    assert!(body.contains("cycle_running"), "{body}");
    let e = mcp.error_of(3, "run_sleep_cycle", json!({})).await.unwrap();
    assert_eq!(e["code"], -32009, "{e}");
    assert_eq!(e["data"]["code"], "cycle_running");
    drop(release);
    cycle.join().unwrap();

    // Once it ended, the same call succeeds.
    assert!(mcp
        .error_of(4, "run_sleep_cycle", json!({"dry_run": true}))
        .await
        .is_none());
}
