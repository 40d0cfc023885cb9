//! `somna mcp` (MCP over stdio) and `somna serve` (MCP over streamable HTTP plus the REST
//! API, on 127.0.0.1 with a bearer token): thin wrappers over somna-server.

use anyhow::Context;
use clap::Args;
use somna_engine::{paths, Somna};
use somna_server::{token, Ops};
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;

#[derive(Args)]
pub struct ServeArgs {
    /// Port on 127.0.0.1 (0 picks a free one).
    #[arg(long, default_value_t = 7411)]
    pub port: u16,
}

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")
}

/// Serves MCP on stdin/stdout until the client closes it. Nothing else may be printed on
/// stdout: it carries the protocol.
pub fn mcp(engine: Somna) -> anyhow::Result<()> {
    engine.warm_search()?;
    let ops = Ops::new(Arc::new(engine), "mcp");
    runtime()?.block_on(somna_server::serve_stdio(ops))?;
    Ok(())
}

/// Serves HTTP on 127.0.0.1 until Ctrl-C.
pub fn serve(engine: Somna, args: ServeArgs, json: bool) -> anyhow::Result<()> {
    let token_file = token::token_path(&paths::data_dir());
    let token = token::load_or_create(&token_file)?;
    engine.warm_search()?;
    let ops = Ops::new(Arc::new(engine), "http");
    let rt = runtime()?;
    rt.block_on(async move {
        let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, args.port));
        let server = somna_server::serve(ops, addr, &token).await?;
        if json {
            let info = serde_json::json!({
                "address": format!("http://{}", server.addr),
                "mcp": format!("http://{}/mcp", server.addr),
                "openapi": format!("http://{}/openapi.json", server.addr),
                "token_file": token_file,
            });
            println!("{info}");
        } else {
            println!("somna serving on http://{}", server.addr);
            println!("  MCP (streamable HTTP): http://{}/mcp", server.addr);
            println!(
                "  REST: http://{}/api/v1   OpenAPI: http://{}/openapi.json",
                server.addr, server.addr
            );
            println!("  bearer token in {}", token_file.display());
            println!("Ctrl-C stops.");
        }
        let stop = server.shutdown_token();
        tokio::spawn(async move {
            let _ = tokio::signal::ctrl_c().await;
            stop.cancel();
        });
        server.wait().await?;
        anyhow::Ok(())
    })
}
