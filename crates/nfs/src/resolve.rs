//! Finding a server's address from its name, shared by every version's set-up.

use std::net::SocketAddr;

use crate::error::NfsError;

/// Resolves `host` (name or address) to a socket address.
pub async fn resolve(host: &str, port: u16) -> Result<SocketAddr, NfsError> {
    let err = |reason: String| NfsError::Resolve {
        host: host.to_string(),
        reason,
    };
    let mut addrs = tokio::net::lookup_host((host, port))
        .await
        .map_err(|e| err(e.to_string()))?;
    addrs.next().ok_or_else(|| err("no address".into()))
}
