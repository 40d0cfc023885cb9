//! Somna's servers over the operations layer (`somna-api`): MCP tools (stdio and streamable
//! HTTP, on rmcp) and a loopback REST/JSON API with an OpenAPI document (axum + utoipa).
//! Both front ends call the same [`Ops`], which run the operations' blocking calls on
//! tokio's blocking pool.

mod error;
pub mod http;
pub mod mcp;
pub mod ops;
pub mod token;

pub use error::{OpError, ServerError};
pub use http::{serve, RunningServer};
pub use mcp::{serve_stdio, SomnaMcp};
pub use ops::Ops;
