//! The HTTP server: the guard (no token, wrong token, non-loopback peer), the REST routes
//! and the OpenAPI document, over a store with the hashing embedder.

use axum::body::Body;
use axum::extract::connect_info::MockConnectInfo;
use axum::http::{Request, StatusCode};
use serde_json::{json, Value};
use somna_engine::embed::HashEmbedder;
use somna_engine::{Config, Job, Somna};
use somna_server::http::app;
use somna_server::Ops;
use std::net::SocketAddr;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;

const TOKEN: &str = "test-token-0123456789";

fn ops(dir: &tempfile::TempDir) -> Ops {
    let cfg = Config::new(dir.path().join("s.db"), dir.path().join("model"));
    let engine = Somna::open_with(&cfg, Arc::new(HashEmbedder::new(384)), &Job::default()).unwrap();
    Ops::new(Arc::new(engine), "test")
}

fn router(ops: Ops, peer: &str) -> axum::Router {
    let peer: SocketAddr = peer.parse().unwrap();
    app(ops, TOKEN, CancellationToken::new()).layer(MockConnectInfo(peer))
}

async fn send(
    app: &axum::Router,
    method: &str,
    uri: &str,
    token: Option<&str>,
    body: Option<Value>,
) -> (StatusCode, Value) {
    let mut req = Request::builder()
        .method(method)
        .uri(uri)
        .header("host", "127.0.0.1");
    if let Some(t) = token {
        req = req.header("authorization", format!("Bearer {t}"));
    }
    let req = match body {
        Some(b) => req
            .header("content-type", "application/json")
            .body(Body::from(b.to_string()))
            .unwrap(),
        None => req.body(Body::empty()).unwrap(),
    };
    let resp = app.clone().oneshot(req).await.unwrap();
    let status = resp.status();
    let bytes = axum::body::to_bytes(resp.into_body(), 1 << 24)
        .await
        .unwrap();
    let v = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    (status, v)
}

#[tokio::test]
async fn requests_without_the_token_or_with_another_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let app = router(ops(&dir), "127.0.0.1:50000");
    for uri in ["/openapi.json", "/api/v1/memories/1", "/mcp"] {
        let (s, v) = send(&app, "GET", uri, None, None).await;
        assert_eq!(s, StatusCode::UNAUTHORIZED, "{uri}");
        assert_eq!(v["error"]["code"], "unauthorized");
        let (s, v) = send(&app, "GET", uri, Some("not-the-token-xxxxxxx"), None).await;
        assert_eq!(s, StatusCode::UNAUTHORIZED, "{uri}");
        assert_eq!(v["error"]["message"], "wrong bearer token");
    }
    let (s, _) = send(
        &app,
        "POST",
        "/api/v1/memories",
        None,
        Some(json!({"conversation": "c", "messages": [{"text": "hi"}]})),
    )
    .await;
    assert_eq!(s, StatusCode::UNAUTHORIZED);
    let (s, _) = send(&app, "GET", "/openapi.json", Some(TOKEN), None).await;
    assert_eq!(s, StatusCode::OK);
}

#[tokio::test]
async fn requests_from_a_non_loopback_peer_are_refused_even_with_the_token() {
    let dir = tempfile::tempdir().unwrap();
    for peer in ["192.168.1.20:40000", "[2001:db8::1]:40000", "10.0.0.1:1"] {
        let app = router(ops(&dir), peer);
        for uri in ["/openapi.json", "/api/v1/memories/1", "/mcp"] {
            let (s, v) = send(&app, "GET", uri, Some(TOKEN), None).await;
            assert_eq!(s, StatusCode::FORBIDDEN, "{peer} {uri}");
            assert_eq!(v["error"]["code"], "forbidden");
        }
    }
    // IPv6 loopback is served.
    let app = router(ops(&dir), "[::1]:40000");
    let (s, _) = send(&app, "GET", "/openapi.json", Some(TOKEN), None).await;
    assert_eq!(s, StatusCode::OK);
}

#[tokio::test]
async fn a_connection_without_a_known_peer_address_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let app = app(ops(&dir), TOKEN, CancellationToken::new());
    let (s, _) = send(&app, "GET", "/openapi.json", Some(TOKEN), None).await;
    assert_eq!(s, StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn binding_a_non_loopback_address_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let err = somna_server::serve(ops(&dir), "0.0.0.0:0".parse().unwrap(), TOKEN)
        .await
        .err()
        .expect("refused");
    assert!(err.to_string().contains("loopback"), "{err}");
}

/// Adds two memories in the conversation "rest" through the REST route; their ids.
async fn add_two(app: &axum::Router) -> Vec<i64> {
    let t = Some(TOKEN);
    let (s, added) = send(
        app,
        "POST",
        "/api/v1/memories",
        t,
        Some(json!({
            "conversation": "rest",
            "messages": [
                {"speaker": "Ada", "text": "the lighthouse keeper repaints the tower"},
                {"speaker": "Bo", "text": "the ferry leaves at noon"}
            ]
        })),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{added}");
    let ids: Vec<i64> = added["episodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_i64().unwrap())
        .collect();
    assert_eq!(ids.len(), 2);
    ids
}

#[tokio::test]
async fn rest_routes_add_search_get_update_and_show_history() {
    let dir = tempfile::tempdir().unwrap();
    let app = router(ops(&dir), "127.0.0.1:50000");
    let t = Some(TOKEN);
    let ids = add_two(&app).await;

    let (s, found) = send(
        &app,
        "POST",
        "/api/v1/search",
        t,
        Some(json!({"query": "lighthouse tower", "k": 3})),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{found}");
    assert_eq!(found["hits"][0]["id"], ids[0]);
    assert!(found["hits"][0]["score"].as_f64().unwrap() > 0.0);

    let (s, got) = send(
        &app,
        "GET",
        &format!("/api/v1/memories/{}", ids[0]),
        t,
        None,
    )
    .await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(
        got["memory"]["text"],
        "the lighthouse keeper repaints the tower"
    );

    let (s, upd) = send(
        &app,
        "PATCH",
        &format!("/api/v1/memories/{}", ids[0]),
        t,
        Some(json!({"text": "the keeper paints the boat"})),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{upd}");
    assert_eq!(upd["text"], "the keeper paints the boat");

    let (s, hist) = send(
        &app,
        "GET",
        &format!("/api/v1/memories/{}/history", ids[0]),
        t,
        None,
    )
    .await;
    assert_eq!(s, StatusCode::OK);
    let events: Vec<&str> = hist["history"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["event"].as_str().unwrap())
        .collect();
    assert_eq!(events, ["add", "update"]);
}

#[tokio::test]
async fn rest_routes_go_back_in_time_with_as_of() {
    let dir = tempfile::tempdir().unwrap();
    let app = router(ops(&dir), "127.0.0.1:50000");
    let t = Some(TOKEN);
    let ids = add_two(&app).await;
    std::thread::sleep(std::time::Duration::from_millis(5));
    let before = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    std::thread::sleep(std::time::Duration::from_millis(5));
    let (s, _) = send(
        &app,
        "PATCH",
        &format!("/api/v1/memories/{}", ids[0]),
        t,
        Some(json!({"text": "the keeper paints the boat"})),
    )
    .await;
    assert_eq!(s, StatusCode::OK);
    let (s, _) = send(
        &app,
        "DELETE",
        &format!("/api/v1/memories/{}", ids[1]),
        t,
        None,
    )
    .await;
    assert_eq!(s, StatusCode::OK);

    let (s, got) = send(
        &app,
        "GET",
        &format!("/api/v1/memories/{}?as_of={before}", ids[0]),
        t,
        None,
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{got}");
    assert_eq!(got["as_of"], before);
    assert_eq!(
        got["memory"]["text"],
        "the lighthouse keeper repaints the tower"
    );

    let (s, page) = send(
        &app,
        "POST",
        "/api/v1/memories/list",
        t,
        Some(json!({"as_of": before})),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{page}");
    assert_eq!(page["as_of"], before);

    let (s, found) = send(
        &app,
        "POST",
        "/api/v1/search",
        t,
        Some(json!({"query": "lighthouse tower", "k": 3, "as_of": before})),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{found}");
    assert_eq!(found["as_of"], before);
    assert_eq!(
        found["hits"][0]["text"],
        "the lighthouse keeper repaints the tower"
    );

    let (s, now) = send(&app, "POST", "/api/v1/memories/list", t, Some(json!({}))).await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(
        now["total"].as_u64().unwrap() + 1,
        page["total"].as_u64().unwrap(),
        "the deleted memory was there then"
    );
    let (s, line) = send(&app, "GET", "/api/v1/timeline", t, None).await;
    assert_eq!(s, StatusCode::OK, "{line}");
    assert_eq!(line["ticks"][0]["kind"], "import");
}

#[tokio::test]
async fn rest_routes_find_a_memorys_neighbours_and_refuse_a_bad_k() {
    let dir = tempfile::tempdir().unwrap();
    let app = router(ops(&dir), "127.0.0.1:50000");
    let t = Some(TOKEN);
    let ids = add_two(&app).await;

    // The other memory is the first one's only neighbour, with its text and a similarity.
    let (s, near) = send(
        &app,
        "GET",
        &format!("/api/v1/memories/{}/similar?k=5", ids[0]),
        t,
        None,
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{near}");
    assert_eq!(near["id"], ids[0]);
    let list = near["similar"].as_array().unwrap();
    assert_eq!(list.len(), 1, "{near}");
    assert_eq!(list[0]["memory"]["id"], ids[1]);
    assert!(list[0]["similarity"].is_number());
    let (s, _) = send(&app, "GET", "/api/v1/memories/999999/similar", t, None).await;
    assert_eq!(s, StatusCode::NOT_FOUND);
    let (s, bad) = send(
        &app,
        "GET",
        &format!("/api/v1/memories/{}/similar?k=0", ids[0]),
        t,
        None,
    )
    .await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{bad}");
}

#[tokio::test]
async fn rest_routes_list_and_hard_delete_memories() {
    let dir = tempfile::tempdir().unwrap();
    let app = router(ops(&dir), "127.0.0.1:50000");
    let t = Some(TOKEN);
    let ids = add_two(&app).await;

    let (s, page) = send(
        &app,
        "POST",
        "/api/v1/memories/list",
        t,
        Some(json!({"filters": {"conversation": "rest"}, "limit": 10})),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{page}");
    assert_eq!(page["total"], 2);

    let (s, del) = send(
        &app,
        "DELETE",
        &format!("/api/v1/memories/{}?hard=true", ids[1]),
        t,
        None,
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{del}");
    assert_eq!(del, json!({"id": ids[1], "hard": true}));
    let (s, err) = send(
        &app,
        "GET",
        &format!("/api/v1/memories/{}", ids[1]),
        t,
        None,
    )
    .await;
    assert_eq!(s, StatusCode::NOT_FOUND);
    assert_eq!(err["error"]["code"], "not_found");
}

#[tokio::test]
async fn rest_routes_run_a_dry_sleep_cycle() {
    let dir = tempfile::tempdir().unwrap();
    let app = router(ops(&dir), "127.0.0.1:50000");
    let t = Some(TOKEN);

    let (s, cycle) = send(
        &app,
        "POST",
        "/api/v1/sleep",
        t,
        Some(json!({"dry_run": true})),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{cycle}");
    assert_eq!(cycle["status"], "dry_run");
}

#[tokio::test]
async fn rest_routes_refuse_bad_arguments_with_422_naming_the_problem() {
    let dir = tempfile::tempdir().unwrap();
    let app = router(ops(&dir), "127.0.0.1:50000");
    let t = Some(TOKEN);

    let (s, err) = send(
        &app,
        "POST",
        "/api/v1/search",
        t,
        Some(json!({"query": "x", "k": 0})),
    )
    .await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        err["error"]["message"]
            .as_str()
            .unwrap()
            .contains("k must be"),
        "{err}"
    );
    let (s, err) = send(
        &app,
        "POST",
        "/api/v1/search",
        t,
        Some(json!({"query": "x", "colour": "red"})),
    )
    .await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        err["error"]["message"].as_str().unwrap().contains("colour"),
        "{err}"
    );
}

#[tokio::test]
async fn rest_routes_merge_pin_find_duplicates_and_undo_a_curation() {
    let dir = tempfile::tempdir().unwrap();
    let app = router(ops(&dir), "127.0.0.1:50000");
    let t = Some(TOKEN);
    let ids = add_two(&app).await;

    let (s, preview) = send(
        &app,
        "POST",
        "/api/v1/curate/merge",
        t,
        Some(json!({"ids": ids, "text": "Ada and Bo: the tower and the ferry", "preview": true})),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{preview}");
    assert_eq!(preview["status"], "preview");
    assert!(preview["id"].is_null());
    let (s, merged) = send(
        &app,
        "POST",
        "/api/v1/curate/merge",
        t,
        Some(json!({"ids": ids, "text": "Ada and Bo: the tower and the ferry"})),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{merged}");
    let new_id = merged["merged"]["id"].as_i64().unwrap();
    let (_, source) = send(
        &app,
        "GET",
        &format!("/api/v1/memories/{}", ids[0]),
        t,
        None,
    )
    .await;
    assert_eq!(source["memory"]["state"], "archived");

    // The merge's own result can be pinned; its undo then waits for the pin's.
    let (s, pin) = send(
        &app,
        "POST",
        "/api/v1/curate/pin",
        t,
        Some(json!({"ids": [new_id]})),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{pin}");
    let (_, got) = send(&app, "GET", &format!("/api/v1/memories/{new_id}"), t, None).await;
    assert_eq!(got["memory"]["pinned"], true);
    let merge_id = merged["id"].as_i64().unwrap();
    let (s, blocked) = send(
        &app,
        "POST",
        &format!("/api/v1/curate/{merge_id}/undo"),
        t,
        None,
    )
    .await;
    assert_eq!(s, StatusCode::CONFLICT, "{blocked}");
    assert_eq!(blocked["error"]["code"], "undo_blocked");
    let pin_id = pin["id"].as_i64().unwrap();
    for id in [pin_id, merge_id] {
        let (s, undone) = send(&app, "POST", &format!("/api/v1/curate/{id}/undo"), t, None).await;
        assert_eq!(
            (s, undone["status"].as_str()),
            (StatusCode::OK, Some("undone")),
            "{undone}"
        );
    }
    let (s, _) = send(&app, "GET", &format!("/api/v1/memories/{new_id}"), t, None).await;
    assert_eq!(s, StatusCode::NOT_FOUND);
    let (s, _) = send(&app, "POST", "/api/v1/curate/999/undo", t, None).await;
    assert_eq!(s, StatusCode::NOT_FOUND);

    // Any action through the one curation route: a tag, previewed then written.
    let tag = json!({"action": {"op": "tag", "ids": [ids[1]], "add": ["ferry"], "remove": []}, "preview": true});
    let (s, p) = send(&app, "POST", "/api/v1/curate", t, Some(tag)).await;
    assert_eq!(
        (s, p["status"].as_str()),
        (StatusCode::OK, Some("preview")),
        "{p}"
    );
    let tag = json!({"action": {"op": "tag", "ids": [ids[1]], "add": ["ferry"], "remove": []}});
    let (s, done) = send(&app, "POST", "/api/v1/curate", t, Some(tag)).await;
    assert_eq!(s, StatusCode::OK, "{done}");
    let (_, got) = send(
        &app,
        "GET",
        &format!("/api/v1/memories/{}", ids[1]),
        t,
        None,
    )
    .await;
    assert_eq!(got["memory"]["tags"], json!(["ferry"]));
    let (s, d) = send(
        &app,
        "POST",
        "/api/v1/duplicates",
        t,
        Some(json!({"threshold": 0.9})),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{d}");
    assert!(
        d["groups"].as_array().unwrap().is_empty(),
        "two different sentences"
    );
    let (s, bad) = send(
        &app,
        "POST",
        "/api/v1/duplicates",
        t,
        Some(json!({"threshold": 2.0})),
    )
    .await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{bad}");
    let (s, one) = send(
        &app,
        "POST",
        "/api/v1/curate/merge",
        t,
        Some(json!({"ids": [ids[0]]})),
    )
    .await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{one}");
}

#[tokio::test]
async fn the_openapi_document_lists_every_route_with_its_schemas() {
    let dir = tempfile::tempdir().unwrap();
    let app = router(ops(&dir), "127.0.0.1:50000");
    let (s, doc) = send(&app, "GET", "/openapi.json", Some(TOKEN), None).await;
    assert_eq!(s, StatusCode::OK);
    assert!(doc["openapi"].as_str().unwrap().starts_with("3."));
    let paths = doc["paths"].as_object().unwrap();
    for (path, method) in [
        ("/api/v1/memories", "post"),
        ("/api/v1/search", "post"),
        ("/api/v1/memories/list", "post"),
        ("/api/v1/memories/{id}", "get"),
        ("/api/v1/memories/{id}", "patch"),
        ("/api/v1/memories/{id}", "delete"),
        ("/api/v1/memories/{id}/history", "get"),
        ("/api/v1/memories/{id}/similar", "get"),
        ("/api/v1/timeline", "get"),
        ("/api/v1/sleep", "post"),
        ("/api/v1/curate", "post"),
        ("/api/v1/curate/merge", "post"),
        ("/api/v1/curate/pin", "post"),
        ("/api/v1/curate/{id}/undo", "post"),
        ("/api/v1/duplicates", "post"),
    ] {
        assert!(paths[path][method].is_object(), "{method} {path} missing");
    }
    let schemas = doc["components"]["schemas"].as_object().unwrap();
    for name in [
        "SearchArgs",
        "SearchResult",
        "AddMemoryArgs",
        "Filters",
        "UpdateFields",
    ] {
        assert!(schemas.contains_key(name), "schema {name} missing");
    }
    assert!(schemas["SearchArgs"]["required"]
        .as_array()
        .unwrap()
        .contains(&json!("query")));
    assert_eq!(
        doc["components"]["securitySchemes"]["bearer"]["scheme"],
        "bearer"
    );
}

/// A GET with the token and the given headers; the status and the body as JSON (`Null` if
/// it is not JSON).
async fn get_with(app: &axum::Router, uri: &str, headers: &[(&str, &str)]) -> (StatusCode, Value) {
    let mut req = Request::builder()
        .method("GET")
        .uri(uri)
        .header("authorization", format!("Bearer {TOKEN}"));
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let resp = app
        .clone()
        .oneshot(req.body(Body::empty()).unwrap())
        .await
        .unwrap();
    let status = resp.status();
    let bytes = axum::body::to_bytes(resp.into_body(), 1 << 24)
        .await
        .unwrap();
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    )
}

#[tokio::test]
async fn a_dns_rebinding_host_or_a_foreign_origin_is_refused_on_every_route() {
    let dir = tempfile::tempdir().unwrap();
    let app = router(ops(&dir), "127.0.0.1:50000");
    let refused: [&[(&str, &str)]; 6] = [
        &[("host", "evil.example:7411")],
        &[("host", "localhost.evil.example")],
        &[],
        &[
            ("host", "127.0.0.1:7411"),
            ("origin", "https://evil.example"),
        ],
        &[("host", "localhost"), ("origin", "null")],
        &[
            ("host", "localhost"),
            ("origin", "http://127.0.0.1.evil.example:7411"),
        ],
    ];
    for uri in ["/openapi.json", "/api/v1/memories/1", "/mcp"] {
        for headers in refused {
            let (s, v) = get_with(&app, uri, headers).await;
            assert_eq!(s, StatusCode::FORBIDDEN, "{uri} {headers:?}");
            assert_eq!(v["error"]["code"], "forbidden", "{uri} {headers:?}");
            assert!(v["error"]["message"].as_str().unwrap().contains("refused"));
        }
    }
    let served: [&[(&str, &str)]; 5] = [
        &[("host", "127.0.0.1:7411")],
        &[("host", "LOCALHOST")],
        &[("host", "[::1]:7411")],
        &[
            ("host", "localhost:7411"),
            ("origin", "http://localhost:5173"),
        ],
        &[("host", "127.0.0.1"), ("origin", "http://[::1]:7411")],
    ];
    for headers in served {
        let (s, _) = get_with(&app, "/openapi.json", headers).await;
        assert_eq!(s, StatusCode::OK, "{headers:?}");
    }
}

/// A request with the token; the status, the content type and the body as text.
async fn raw(
    app: &axum::Router,
    method: &str,
    uri: &str,
    body: Option<String>,
) -> (StatusCode, String, String) {
    let req = Request::builder()
        .method(method)
        .uri(uri)
        .header("host", "127.0.0.1")
        .header("authorization", format!("Bearer {TOKEN}"))
        .header("content-type", "application/json");
    let resp = app
        .clone()
        .oneshot(req.body(body.map_or_else(Body::empty, Body::from)).unwrap())
        .await
        .unwrap();
    let status = resp.status();
    let ctype = resp
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_string())
        .unwrap_or_default();
    let bytes = axum::body::to_bytes(resp.into_body(), 1 << 24)
        .await
        .unwrap();
    (status, ctype, String::from_utf8_lossy(&bytes).into_owned())
}

#[tokio::test]
async fn bad_ids_query_strings_bodies_and_routes_get_the_json_error_shape() {
    let dir = tempfile::tempdir().unwrap();
    let app = router(ops(&dir), "127.0.0.1:50000");
    let cases = [
        (
            "GET",
            "/api/v1/memories/abc",
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_input",
        ),
        (
            "GET",
            "/api/v1/memories/99999999999999999999",
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_input",
        ),
        (
            "PATCH",
            "/api/v1/memories/1.5",
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_input",
        ),
        (
            "DELETE",
            "/api/v1/memories/x?hard=true",
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_input",
        ),
        (
            "DELETE",
            "/api/v1/memories/1?hard=maybe",
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_input",
        ),
        (
            "GET",
            "/api/v1/memories/1/similar?k=many",
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_input",
        ),
        (
            "GET",
            "/api/v1/memories/x/history",
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_input",
        ),
        (
            "GET",
            "/api/v1/no-such-route",
            StatusCode::NOT_FOUND,
            "not_found",
        ),
        (
            "PUT",
            "/api/v1/search",
            StatusCode::METHOD_NOT_ALLOWED,
            "method_not_allowed",
        ),
    ];
    for (method, uri, status, code) in cases {
        let (s, ctype, text) = raw(&app, method, uri, Some("{}".into())).await;
        assert_eq!(s, status, "{method} {uri}: {text}");
        assert!(
            ctype.starts_with("application/json"),
            "{method} {uri}: {ctype}"
        );
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["error"]["code"], code, "{method} {uri}: {text}");
        assert!(!v["error"]["message"].as_str().unwrap().is_empty());
    }

    // A body over the limit: 413, and nothing stored.
    let text = "x".repeat(somna_server::http::MAX_BODY_BYTES);
    let big = json!({"conversation": "c", "messages": [{"text": text}]}).to_string();
    let (s, ctype, text) = raw(&app, "POST", "/api/v1/memories", Some(big)).await;
    assert_eq!(s, StatusCode::PAYLOAD_TOO_LARGE, "{text}");
    assert!(ctype.starts_with("application/json"), "{ctype}");
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["error"]["code"], "too_large");
    let (_, _, page) = raw(&app, "POST", "/api/v1/memories/list", Some("{}".into())).await;
    let page: Value = serde_json::from_str(&page).unwrap();
    assert_eq!(page["total"], 0, "{page}");
}
