//! The loopback HTTP server: MCP over streamable HTTP at `/mcp`, the same operations as
//! REST/JSON under `/api/v1`, and the OpenAPI document (generated from the handlers and
//! the `ops` types by utoipa) at `/openapi.json`.
//!
//! Every route sits behind one guard that refuses, in this order:
//! * a peer whose address (from the accepted TCP connection) is not loopback: 403. The
//!   listener is bound to a loopback address too; the guard is the second line, and it also
//!   refuses a connection whose peer address is unknown;
//! * a request whose `Host` is not a loopback name (`localhost`, `127.0.0.1`, `[::1]`, any
//!   port), or that carries an `Origin` whose host is not one (`Origin: null` included):
//!   403. A web page that rebinds its own DNS name to 127.0.0.1 still sends its own name in
//!   `Host`, so it is refused though its connection comes from loopback (MCP's DNS-rebinding
//!   guidance); a browser page on another site is refused by its `Origin`;
//! * a request without `Authorization: Bearer <token>` or with another token: 401.

use crate::error::{OpError, ServerError};
use crate::mcp::SomnaMcp;
use crate::ops::{EngineJson, Ops};
use axum::extract::rejection::{JsonRejection, PathRejection, QueryRejection};
use axum::extract::DefaultBodyLimit;
use axum::extract::{ConnectInfo, Path, Query, Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::{Json, RequestExt};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde::Deserialize;
use somna_api::{
    AddMemoryArgs, CurateRequest, CurateUndoArgs, DeleteArgs, DeleteResult, DuplicatesArgs,
    ListArgs, MergeArgs, PinArgs, SearchArgs, SearchResult, SimilarArgs, SleepArgs, UpdateFields,
};
use somna_engine::whatif::WhatIfRequest;
use std::net::SocketAddr;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::OpenApi;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

#[derive(OpenApi)]
#[openapi(
    info(
        title = "Somna",
        description = "Somna's loopback HTTP API: the memory operations of the MCP tools as REST/JSON. Every route needs `Authorization: Bearer <token>` (the token is in the data directory, file `server-token`)."
    ),
    modifiers(&BearerAuth),
    security(("bearer" = []))
)]
struct ApiDoc;

struct BearerAuth;

impl utoipa::Modify for BearerAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
    }
}

/// The largest request body the REST routes read (axum's default, stated): 1,000 messages
/// of ~2 KB each, the most one `add` may carry.
pub const MAX_BODY_BYTES: usize = 2 * 1024 * 1024;

// The extractors' rejections, taken as values so that every refusal has the JSON error shape
// (axum's own are text/plain): a bad body, id or query string is `invalid_input` (422), a
// body over the limit `too_large` (413).
type JsonArg<T> = Result<Json<T>, JsonRejection>;
type PathArg<T> = Result<Path<T>, PathRejection>;
type QueryArg<T> = Result<Query<T>, QueryRejection>;

fn body<T>(arg: JsonArg<T>) -> Result<T, OpError> {
    arg.map(|Json(v)| v).map_err(|e| {
        if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
            OpError::TooLarge(format!(
                "the request body is over the limit of {MAX_BODY_BYTES} bytes"
            ))
        } else {
            OpError::invalid(e.body_text())
        }
    })
}

fn path<T>(arg: PathArg<T>) -> Result<T, OpError> {
    arg.map(|Path(v)| v)
        .map_err(|e| OpError::invalid(e.body_text()))
}

fn query<T>(arg: QueryArg<T>) -> Result<T, OpError> {
    arg.map(|Query(v)| v)
        .map_err(|e| OpError::invalid(e.body_text()))
}

/// Store conversation messages as memories.
#[utoipa::path(post, path = "/api/v1/memories", request_body = AddMemoryArgs,
    responses((status = 200, description = "The add report: episodes, facts_added, …", body = EngineJson)))]
async fn add_memory(
    State(ops): State<Ops>,
    args: JsonArg<AddMemoryArgs>,
) -> Result<Json<EngineJson>, OpError> {
    Ok(Json(ops.add(body(args)?).await?))
}

/// Search memories; results with scores.
#[utoipa::path(post, path = "/api/v1/search", request_body = SearchArgs,
    responses((status = 200, body = SearchResult)))]
async fn search_memory(
    State(ops): State<Ops>,
    args: JsonArg<SearchArgs>,
) -> Result<Json<SearchResult>, OpError> {
    Ok(Json(ops.search(body(args)?).await?))
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct AsOfQuery {
    /// The memory as it was at this instant (Unix milliseconds); now if left out.
    as_of: Option<i64>,
}

/// One memory with its links, history and provenance (with `as_of`: as it was then, and
/// `as_of` set in the answer).
#[utoipa::path(get, path = "/api/v1/memories/{id}", params(("id" = i64, Path, description = "memory id"), AsOfQuery),
    responses((status = 200, body = EngineJson), (status = 404, description = "no such memory (then)")))]
async fn get_memory(
    State(ops): State<Ops>,
    id: PathArg<i64>,
    q: QueryArg<AsOfQuery>,
) -> Result<Json<EngineJson>, OpError> {
    let (id, as_of) = (path(id)?, query(q)?.as_of);
    Ok(Json(ops.get(id, as_of).await?))
}

/// The store's span in time (first, last) and its ticks: imports, sleep cycles,
/// curations and undos, oldest first (the instants `as_of` can go back to).
#[utoipa::path(get, path = "/api/v1/timeline", responses((status = 200, body = EngineJson)))]
async fn timeline(State(ops): State<Ops>) -> Result<Json<EngineJson>, OpError> {
    Ok(Json(ops.timeline().await?))
}

/// Change a memory; returns it as it is now.
#[utoipa::path(patch, path = "/api/v1/memories/{id}", params(("id" = i64, Path, description = "memory id")),
    request_body = UpdateFields, responses((status = 200, body = EngineJson), (status = 404, description = "no such memory")))]
async fn update_memory(
    State(ops): State<Ops>,
    id: PathArg<i64>,
    fields: JsonArg<UpdateFields>,
) -> Result<Json<EngineJson>, OpError> {
    Ok(Json(ops.update(path(id)?, body(fields)?).await?))
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct DeleteQuery {
    /// Remove the memory and its links for good (default: restorable soft delete).
    #[serde(default)]
    hard: bool,
}

/// Delete a memory.
#[utoipa::path(delete, path = "/api/v1/memories/{id}", params(("id" = i64, Path, description = "memory id"), DeleteQuery),
    responses((status = 200, body = DeleteResult), (status = 404, description = "no such memory")))]
async fn delete_memory(
    State(ops): State<Ops>,
    id: PathArg<i64>,
    q: QueryArg<DeleteQuery>,
) -> Result<Json<DeleteResult>, OpError> {
    let (id, hard) = (path(id)?, query(q)?.hard);
    Ok(Json(ops.delete(DeleteArgs { id, hard }).await?))
}

/// A filtered, sorted page of memories: {total, offset, memories}.
#[utoipa::path(post, path = "/api/v1/memories/list", request_body = ListArgs,
    responses((status = 200, body = EngineJson)))]
async fn list_memories(
    State(ops): State<Ops>,
    args: JsonArg<ListArgs>,
) -> Result<Json<EngineJson>, OpError> {
    Ok(Json(ops.list(body(args)?).await?))
}

/// Every change of a memory, oldest first: {id, history}.
#[utoipa::path(get, path = "/api/v1/memories/{id}/history", params(("id" = i64, Path, description = "memory id")),
    responses((status = 200, body = EngineJson), (status = 404, description = "no such memory")))]
async fn memory_history(
    State(ops): State<Ops>,
    id: PathArg<i64>,
) -> Result<Json<EngineJson>, OpError> {
    Ok(Json(ops.history(path(id)?).await?))
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct SimilarQuery {
    /// How many (1 to 100, default 8).
    k: Option<usize>,
}

/// The memories nearest to one memory in embedding space: {id, similar: [{id, similarity, memory}]}.
#[utoipa::path(get, path = "/api/v1/memories/{id}/similar", params(("id" = i64, Path, description = "memory id"), SimilarQuery),
    responses((status = 200, body = EngineJson), (status = 404, description = "no such memory"), (status = 422, description = "k out of range")))]
async fn similar_memories(
    State(ops): State<Ops>,
    id: PathArg<i64>,
    q: QueryArg<SimilarQuery>,
) -> Result<Json<EngineJson>, OpError> {
    let (id, k) = (path(id)?, query(q)?.k);
    Ok(Json(ops.similar(SimilarArgs { id, k }).await?))
}

/// Run a sleep cycle (or a dry run); returns its report.
#[utoipa::path(post, path = "/api/v1/sleep", request_body = SleepArgs,
    responses((status = 200, body = EngineJson)))]
async fn run_sleep_cycle(
    State(ops): State<Ops>,
    args: JsonArg<SleepArgs>,
) -> Result<Json<EngineJson>, OpError> {
    Ok(Json(ops.sleep(body(args)?).await?))
}

/// Merge memories into one: the sources are archived (never deleted) and linked from the
/// merged memory; `preview` reports without writing. Returns the curation's report.
#[utoipa::path(post, path = "/api/v1/curate/merge", request_body = MergeArgs,
    responses((status = 200, body = EngineJson), (status = 404, description = "a named memory does not exist"),
        (status = 409, description = "a sleep cycle is running")))]
async fn merge_memories(
    State(ops): State<Ops>,
    args: JsonArg<MergeArgs>,
) -> Result<Json<EngineJson>, OpError> {
    Ok(Json(ops.merge(body(args)?).await?))
}

/// Any curation (`{action: {op, …}, preview?}`: merge, delete, restore, pin, unpin, tag,
/// set_importance, relabel_cluster); returns its report (`preview`: what it would change).
#[utoipa::path(post, path = "/api/v1/curate", request_body = CurateRequest,
    responses((status = 200, body = EngineJson), (status = 404, description = "a named memory does not exist"),
        (status = 409, description = "a sleep cycle is running"), (status = 422, description = "the action is refused as given")))]
async fn curate_memories(
    State(ops): State<Ops>,
    req: JsonArg<CurateRequest>,
) -> Result<Json<EngineJson>, OpError> {
    Ok(Json(ops.curate(body(req)?).await?))
}

/// Pin (or unpin) memories: a pinned memory is never compressed, decayed, archived or
/// forgotten by a sleep cycle. Returns the curation's report.
#[utoipa::path(post, path = "/api/v1/curate/pin", request_body = PinArgs,
    responses((status = 200, body = EngineJson), (status = 404, description = "a named memory does not exist")))]
async fn pin_memory(
    State(ops): State<Ops>,
    args: JsonArg<PinArgs>,
) -> Result<Json<EngineJson>, OpError> {
    Ok(Json(ops.pin(body(args)?).await?))
}

/// Undo a curation exactly; refused (409, `undo_blocked`) while a later operation that
/// touched the same memories stands.
#[utoipa::path(post, path = "/api/v1/curate/{id}/undo", params(("id" = i64, Path, description = "curation id")),
    responses((status = 200, body = EngineJson), (status = 404, description = "no such curation"),
        (status = 409, description = "a later operation is in the way, or a cycle is running")))]
async fn undo_curation(
    State(ops): State<Ops>,
    id: PathArg<i64>,
) -> Result<Json<EngineJson>, OpError> {
    Ok(Json(
        ops.curate_undo(CurateUndoArgs { id: path(id)? }).await?,
    ))
}

/// Groups of near-duplicate memories, largest first: `{groups: [{ids, kind, who,
/// min_similarity, texts}]}`.
#[utoipa::path(post, path = "/api/v1/duplicates", request_body = DuplicatesArgs,
    responses((status = 200, body = EngineJson), (status = 422, description = "threshold or limit out of range")))]
async fn find_duplicates(
    State(ops): State<Ops>,
    args: JsonArg<DuplicatesArgs>,
) -> Result<Json<EngineJson>, OpError> {
    Ok(Json(ops.duplicates(body(args)?).await?))
}

/// What a change of settings (decay model and half-life, lifecycle and forgetting
/// thresholds, fusion weights) would do, written nowhere: state changes over time, golden
/// queries and a search before → after.
#[utoipa::path(post, path = "/api/v1/whatif", request_body = WhatIfRequest,
    responses((status = 200, body = EngineJson), (status = 422, description = "a setting or limit out of range")))]
async fn what_if(
    State(ops): State<Ops>,
    req: JsonArg<WhatIfRequest>,
) -> Result<Json<EngineJson>, OpError> {
    Ok(Json(ops.what_if(body(req)?).await?))
}

/// The REST routes and the OpenAPI document generated from them.
pub fn rest_routes(ops: Ops) -> (axum::Router, utoipa::openapi::OpenApi) {
    let (router, api) = OpenApiRouter::with_openapi(ApiDoc::openapi())
        .routes(routes!(add_memory))
        .routes(routes!(search_memory))
        .routes(routes!(list_memories))
        .routes(routes!(get_memory, update_memory, delete_memory))
        .routes(routes!(memory_history))
        .routes(routes!(timeline))
        .routes(routes!(similar_memories))
        .routes(routes!(run_sleep_cycle))
        .routes(routes!(curate_memories))
        .routes(routes!(merge_memories))
        .routes(routes!(pin_memory))
        .routes(routes!(undo_curation))
        .routes(routes!(find_duplicates))
        .routes(routes!(what_if))
        .with_state(ops)
        .split_for_parts();
    let router = router
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .fallback(|| async { refusal(StatusCode::NOT_FOUND, "not_found", "no such route") })
        .method_not_allowed_fallback(|| async {
            refusal(
                StatusCode::METHOD_NOT_ALLOWED,
                "method_not_allowed",
                "this route does not take that method",
            )
        });
    (router, api)
}

fn refusal(status: StatusCode, code: &str, message: &str) -> Response {
    let body = serde_json::json!({"error": {"code": code, "message": message}});
    let mut r = (status, Json(body)).into_response();
    if status == StatusCode::UNAUTHORIZED {
        r.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            header::HeaderValue::from_static("Bearer"),
        );
    }
    r
}

/// The host names a request may address the server by, and an `Origin` may name.
const LOOPBACK_NAMES: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

fn is_loopback_name(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    LOOPBACK_NAMES
        .iter()
        .any(|name| host.eq_ignore_ascii_case(name))
}

/// Why the request's `Host` or `Origin` is refused, if it is. The host comes from the
/// `Host` header, or from the request target's authority (HTTP/2) when there is none.
fn rebinding_refusal(req: &Request) -> Option<String> {
    let host = match req.headers().get(header::HOST) {
        Some(v) => v
            .to_str()
            .ok()
            .and_then(|h| h.parse::<axum::http::uri::Authority>().ok())
            .map(|a| a.host().to_string()),
        None => req.uri().authority().map(|a| a.host().to_string()),
    };
    match host {
        Some(h) if is_loopback_name(&h) => {}
        Some(h) => {
            return Some(format!(
                "Host {h:?} is not a loopback name (localhost, 127.0.0.1, [::1])"
            ))
        }
        None => return Some("a missing or malformed Host header".into()),
    }
    let origin = req.headers().get(header::ORIGIN)?;
    let origin_host = origin
        .to_str()
        .ok()
        .and_then(|o| o.parse::<axum::http::Uri>().ok())
        .and_then(|u| u.host().map(str::to_string));
    match origin_host {
        Some(h) if is_loopback_name(&h) => None,
        _ => Some(format!(
            "Origin {:?} is not a page on this machine (loopback)",
            String::from_utf8_lossy(origin.as_bytes())
        )),
    }
}

async fn guard(State(token): State<Arc<str>>, mut req: Request, next: Next) -> Response {
    // The accepted connection's peer address (tests supply one with MockConnectInfo).
    let peer = req
        .extract_parts::<ConnectInfo<SocketAddr>>()
        .await
        .ok()
        .map(|c| c.0);
    match peer {
        Some(p) if p.ip().is_loopback() => {}
        _ => {
            return refusal(
                StatusCode::FORBIDDEN,
                "forbidden",
                "only clients on this machine (loopback) are served",
            )
        }
    }
    if let Some(why) = rebinding_refusal(&req) {
        return refusal(
            StatusCode::FORBIDDEN,
            "forbidden",
            &format!("refused: {why}"),
        );
    }
    let given = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim);
    match given {
        Some(t) if crate::token::matches(t, &token) => next.run(req).await,
        Some(_) => refusal(StatusCode::UNAUTHORIZED, "unauthorized", "wrong bearer token"),
        None => refusal(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "missing Authorization: Bearer <token> (the token is in the data directory, file server-token)",
        ),
    }
}

/// The whole app: MCP at `/mcp`, REST under `/api/v1`, `/openapi.json`, all behind the
/// guard. Serve it with `into_make_service_with_connect_info::<SocketAddr>()`.
pub fn app(ops: Ops, token: &str, shutdown: CancellationToken) -> axum::Router {
    let mcp_ops = ops.clone();
    let mcp = StreamableHttpService::new(
        move || Ok(SomnaMcp::new(mcp_ops.clone())),
        LocalSessionManager::default().into(),
        StreamableHttpServerConfig::default().with_cancellation_token(shutdown),
    );
    let (rest, api) = rest_routes(ops);
    let api = Arc::new(api);
    let token: Arc<str> = Arc::from(token);
    rest.route(
        "/openapi.json",
        axum::routing::get(move || {
            let api = api.clone();
            async move { Json(api.as_ref().clone()) }
        }),
    )
    .nest_service("/mcp", mcp)
    .layer(axum::middleware::from_fn_with_state(token, guard))
}

/// A running HTTP server; dropping it does not stop it, [`RunningServer::stop`] does.
pub struct RunningServer {
    pub addr: SocketAddr,
    shutdown: CancellationToken,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl RunningServer {
    /// Stops accepting, ends MCP sessions and waits for open requests to finish.
    pub async fn stop(self) -> Result<(), ServerError> {
        self.shutdown.cancel();
        self.task
            .await
            .map_err(|e| ServerError::Transport(e.to_string()))?
            .map_err(|e| ServerError::Transport(e.to_string()))
    }

    /// Waits until the server stops (after [`RunningServer::shutdown_token`] is cancelled).
    pub async fn wait(self) -> Result<(), ServerError> {
        self.task
            .await
            .map_err(|e| ServerError::Transport(e.to_string()))?
            .map_err(|e| ServerError::Transport(e.to_string()))
    }

    pub fn shutdown_token(&self) -> CancellationToken {
        self.shutdown.clone()
    }
}

/// Binds `addr` (a loopback address; port 0 picks a free one) and serves the app.
pub async fn serve(ops: Ops, addr: SocketAddr, token: &str) -> Result<RunningServer, ServerError> {
    if !addr.ip().is_loopback() {
        return Err(ServerError::NotLoopback(addr));
    }
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| ServerError::Transport(format!("binding {addr}: {e}")))?;
    let addr = listener
        .local_addr()
        .map_err(|e| ServerError::Transport(e.to_string()))?;
    let shutdown = CancellationToken::new();
    let app = app(ops, token, shutdown.child_token());
    let stop = shutdown.clone();
    let task = tokio::spawn(async move {
        axum::serve(
            listener,
            app.into_make_service_with_connect_info::<SocketAddr>(),
        )
        .with_graceful_shutdown(stop.cancelled_owned())
        .await
    });
    Ok(RunningServer {
        addr,
        shutdown,
        task,
    })
}
