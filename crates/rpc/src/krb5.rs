//! Kerberos V5 through the system's MIT GSS-API (the `libgssapi` binding): the
//! mechanism behind RPCSEC_GSS. No cryptography here, only calls into the library.
//!
//! Credentials are found as the kernel's gssd finds them: the default credential cache
//! (after `kinit`), or a client keytab named by `KRB5_CLIENT_KTNAME`, from which the
//! library fetches and renews tickets itself. Starting a context may ask the KDC for a
//! service ticket, so [`Initiator::start`] blocks: callers run it off the runtime.

use std::sync::Mutex;

use libgssapi::context::{ClientCtx, CtxFlags, SecurityContext};
use libgssapi::error::Error as LibError;
use libgssapi::name::Name;
use libgssapi::oid::{GSS_MECH_KRB5, GSS_NT_HOSTBASED_SERVICE};

use crate::gss::{GssError, GssMech};

/// A Kerberos context being set up with a server.
pub struct Initiator {
    ctx: ClientCtx,
    target: String,
}

impl Initiator {
    /// Starts a context with the GSS host-based service `target` (`nfs@server`) and
    /// gives the first token for the server. Blocks while the library talks to the KDC.
    pub fn start(target: &str) -> Result<(Initiator, Vec<u8>), String> {
        let target = &by_name(target);
        let name = Name::new(target.as_bytes(), Some(GSS_NT_HOSTBASED_SERVICE))
            .map_err(|e| explain(target, &e))?;
        // Mutual authentication proves the server; no GSS sequencing, as RPCSEC_GSS
        // numbers its own calls and replies come back in any order.
        let flags =
            CtxFlags::GSS_C_MUTUAL_FLAG | CtxFlags::GSS_C_INTEG_FLAG | CtxFlags::GSS_C_CONF_FLAG;
        let mut ctx = ClientCtx::new(None, name, flags, Some(GSS_MECH_KRB5));
        let token = ctx
            .step(None, None)
            .map_err(|e| explain(target, &e))?
            .map(|b| b.to_vec())
            .unwrap_or_default();
        let me = Initiator {
            ctx,
            target: target.to_string(),
        };
        Ok((me, token))
    }

    /// Feeds the server's token; gives the next token to send, or `None` when the
    /// context is complete.
    pub fn step(&mut self, token: &[u8]) -> Result<Option<Vec<u8>>, String> {
        match self.ctx.step(Some(token), None) {
            Ok(next) => Ok(next.map(|b| b.to_vec()).filter(|t| !t.is_empty())),
            Err(e) => Err(explain(&self.target, &e)),
        }
    }

    /// The established context, as RPCSEC_GSS's mechanism.
    pub fn finish(self) -> Krb5 {
        Krb5(Mutex::new(self.ctx))
    }
}

/// `service@ADDRESS` with the address's host name, as the kernel's gssd does: a
/// server's principal names its host, and the library does not look addresses up.
fn by_name(target: &str) -> String {
    let Some((service, host)) = target.split_once('@') else {
        return target.to_string();
    };
    let Ok(ip) = host.parse::<std::net::IpAddr>() else {
        return target.to_string();
    };
    match host_name(ip) {
        Some(name) => format!("{service}@{name}"),
        None => target.to_string(),
    }
}

/// The name an address resolves back to (getnameinfo with NI_NAMEREQD).
fn host_name(ip: std::net::IpAddr) -> Option<String> {
    let addr = sockaddr_bytes(ip);
    let mut host = [0 as libc::c_char; 1025];
    // SAFETY: `addr` is a valid socket address of the length given; `host` is a
    // writable buffer of the length given, NUL-terminated by getnameinfo on success.
    let rc = unsafe {
        libc::getnameinfo(
            addr.0.as_ptr().cast(),
            addr.1,
            host.as_mut_ptr(),
            host.len() as libc::socklen_t,
            std::ptr::null_mut(),
            0,
            libc::NI_NAMEREQD,
        )
    };
    if rc != 0 {
        return None;
    }
    // SAFETY: getnameinfo wrote a NUL-terminated string into `host`.
    let name = unsafe { std::ffi::CStr::from_ptr(host.as_ptr()) };
    name.to_str().ok().map(str::to_string)
}

/// The address as a `sockaddr_in` or `sockaddr_in6`, in bytes, with its length.
fn sockaddr_bytes(ip: std::net::IpAddr) -> (Vec<u8>, libc::socklen_t) {
    match ip {
        std::net::IpAddr::V4(v4) => {
            // SAFETY: all-zero is a valid sockaddr_in.
            let mut sa: libc::sockaddr_in = unsafe { std::mem::zeroed() };
            sa.sin_family = libc::AF_INET as libc::sa_family_t;
            sa.sin_addr.s_addr = u32::from_ne_bytes(v4.octets());
            let len = std::mem::size_of::<libc::sockaddr_in>();
            // SAFETY: reading the struct's bytes, within its size.
            let bytes = unsafe {
                std::slice::from_raw_parts((&sa as *const libc::sockaddr_in).cast::<u8>(), len)
            };
            (bytes.to_vec(), len as libc::socklen_t)
        }
        std::net::IpAddr::V6(v6) => {
            // SAFETY: all-zero is a valid sockaddr_in6.
            let mut sa: libc::sockaddr_in6 = unsafe { std::mem::zeroed() };
            sa.sin6_family = libc::AF_INET6 as libc::sa_family_t;
            sa.sin6_addr.s6_addr = v6.octets();
            let len = std::mem::size_of::<libc::sockaddr_in6>();
            // SAFETY: reading the struct's bytes, within its size.
            let bytes = unsafe {
                std::slice::from_raw_parts((&sa as *const libc::sockaddr_in6).cast::<u8>(), len)
            };
            (bytes.to_vec(), len as libc::socklen_t)
        }
    }
}

/// An established Kerberos context. The library keeps per-context state (its own
/// sequence numbers for tokens), so calls on one context are serialised.
pub struct Krb5(Mutex<ClientCtx>);

impl Krb5 {
    fn with<T>(
        &self,
        f: impl FnOnce(&mut ClientCtx) -> Result<T, LibError>,
    ) -> Result<T, GssError> {
        let mut ctx = self.0.lock().unwrap_or_else(|e| e.into_inner());
        f(&mut ctx).map_err(|e| GssError::Mech(e.to_string()))
    }
}

impl GssMech for Krb5 {
    fn get_mic(&self, msg: &[u8]) -> Result<Vec<u8>, GssError> {
        self.with(|c| c.get_mic(msg).map(|b| b.to_vec()))
    }

    fn verify_mic(&self, msg: &[u8], mic: &[u8]) -> Result<(), GssError> {
        self.with(|c| c.verify_mic(msg, mic))
    }

    fn wrap(&self, msg: &[u8]) -> Result<Vec<u8>, GssError> {
        self.with(|c| c.wrap(true, msg).map(|b| b.to_vec()))
    }

    fn unwrap(&self, token: &[u8]) -> Result<Vec<u8>, GssError> {
        self.with(|c| c.unwrap(token).map(|b| b.to_vec()))
    }
}

/// One line for a failure to start a context: what to do first, then the library's
/// own words.
pub fn explain(target: &str, e: &LibError) -> String {
    let text = e.to_string();
    let said = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let lower = said.to_lowercase();
    let hint = if lower.contains("no kerberos credentials")
        || lower.contains("no credentials cache")
        || lower.contains("credentials cache file")
        || lower.contains("cache is empty")
        || lower.contains("no credentials were supplied")
    {
        "no Kerberos ticket: run kinit, or set KRB5_CLIENT_KTNAME to a client keytab"
    } else if lower.contains("expired") {
        "the Kerberos ticket has expired: run kinit again, or set KRB5_CLIENT_KTNAME to a client keytab, which renews itself"
    } else if lower.contains("not found in kerberos database") {
        "the KDC does not know this server's principal"
    } else if lower.contains("clock skew") {
        "this host's clock and the KDC's differ too much: synchronise them"
    } else if lower.contains("cannot find kdc for realm")
        || lower.contains("cannot contact any kdc")
        || lower.contains("cannot resolve")
    {
        "no KDC answers for the realm: check krb5.conf's [realms] and [domain_realm]"
    } else if lower.contains("wrong realm") || lower.contains("realm") {
        "the principal's realm does not match the server's: check krb5.conf's [domain_realm]"
    } else {
        "Kerberos refused"
    };
    format!("krb5 context with {target}: {hint} ({said})")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_ticket_is_named_with_what_to_do() {
        // An empty cache that cannot exist: the library must say there is no ticket.
        let dir = std::env::temp_dir().join(format!("dbio-krb5-none-{}", std::process::id()));
        std::env::set_var("KRB5CCNAME", format!("FILE:{}/cc", dir.display()));
        std::env::set_var("KRB5_CONFIG", "/dev/null");
        std::env::remove_var("KRB5_CLIENT_KTNAME");
        let err = Initiator::start("nfs@dbio-nowhere.invalid").err().unwrap();
        assert!(
            err.starts_with("krb5 context with nfs@dbio-nowhere.invalid: "),
            "{err}"
        );
        assert!(!err.contains('\n'), "{err}");
        assert!(err.contains("kinit") || err.contains("KDC"), "{err}");
    }
}
