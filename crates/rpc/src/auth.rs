//! RPC authentication flavors (RFC 5531 section 8, appendix A): AUTH_NONE and AUTH_SYS.
//!
//! A [`Credential`] is encoded once when it is built and then copied as bytes into every
//! call, since a connection sends the same credential millions of times.

use dbio_xdr::{BufMut, Decoder, XdrPut};
use thiserror::Error;

/// Flavor number of AUTH_NONE.
pub const AUTH_NONE: u32 = 0;
/// Flavor number of AUTH_SYS (also called AUTH_UNIX).
pub const AUTH_SYS: u32 = 1;
/// Largest opaque_auth body (RFC 5531).
pub const MAX_AUTH_BYTES: usize = 400;
/// Longest AUTH_SYS machine name.
pub const MAX_MACHINE_NAME: usize = 255;
/// Most supplementary groups in AUTH_SYS.
pub const MAX_GIDS: usize = 16;

/// An AUTH_SYS credential that cannot be sent.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum AuthError {
    #[error("rpc auth_sys: machine name of {0} bytes exceeds {MAX_MACHINE_NAME}")]
    MachineNameTooLong(usize),
    #[error("rpc auth_sys: {0} supplementary gids exceed {MAX_GIDS}")]
    TooManyGids(usize),
}

/// AUTH_SYS credential body (`authsys_parms`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthSys {
    /// Arbitrary id chosen by the caller (often a time stamp).
    pub stamp: u32,
    /// Name of the client machine, at most 255 bytes.
    pub machine_name: String,
    pub uid: u32,
    pub gid: u32,
    /// Supplementary groups, at most 16.
    pub gids: Vec<u32>,
}

impl AuthSys {
    /// Check the limits of RFC 5531.
    pub fn validate(&self) -> Result<(), AuthError> {
        if self.machine_name.len() > MAX_MACHINE_NAME {
            return Err(AuthError::MachineNameTooLong(self.machine_name.len()));
        }
        if self.gids.len() > MAX_GIDS {
            return Err(AuthError::TooManyGids(self.gids.len()));
        }
        Ok(())
    }

    /// Encode the body (without flavor and length).
    pub fn encode_body<B: BufMut>(&self, out: &mut B) {
        out.put_u32(self.stamp);
        out.put_string(&self.machine_name);
        out.put_u32(self.uid);
        out.put_u32(self.gid);
        out.put_array(&self.gids, |o, g| o.put_u32(*g));
    }

    /// Decode a body, enforcing the limits.
    pub fn decode_body(body: &[u8]) -> dbio_xdr::Result<Self> {
        let mut d = Decoder::new(body);
        let a = AuthSys {
            stamp: d.u32()?,
            machine_name: String::from_utf8_lossy(d.string_bytes("machinename", MAX_MACHINE_NAME)?)
                .into_owned(),
            uid: d.u32()?,
            gid: d.u32()?,
            gids: d.array("gids", MAX_GIDS, 4, |d| d.u32())?,
        };
        d.finish("authsys_parms")?;
        Ok(a)
    }
}

/// An `opaque_auth` as it appears on the wire: flavor and body bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpaqueAuth<'a> {
    pub flavor: u32,
    pub body: &'a [u8],
}

impl<'a> OpaqueAuth<'a> {
    /// AUTH_NONE with an empty body.
    pub const NONE: OpaqueAuth<'static> = OpaqueAuth {
        flavor: AUTH_NONE,
        body: &[],
    };

    /// Decode flavor and body (body at most 400 bytes).
    pub fn decode(d: &mut Decoder<'a>) -> dbio_xdr::Result<Self> {
        Ok(OpaqueAuth {
            flavor: d.u32()?,
            body: d.opaque("opaque_auth body", MAX_AUTH_BYTES)?,
        })
    }

    /// Encode flavor and body.
    pub fn encode<B: BufMut>(&self, out: &mut B) {
        out.put_u32(self.flavor);
        out.put_opaque(self.body);
    }
}

/// The credential and verifier of a call, pre-encoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Credential {
    /// `cred` then `verf`, as they appear in a call header.
    wire: Vec<u8>,
    flavor: u32,
}

impl Credential {
    /// AUTH_NONE credential and verifier.
    pub fn none() -> Self {
        let mut wire = Vec::with_capacity(16);
        OpaqueAuth::NONE.encode(&mut wire);
        OpaqueAuth::NONE.encode(&mut wire);
        Credential {
            wire,
            flavor: AUTH_NONE,
        }
    }

    /// AUTH_SYS credential with an AUTH_NONE verifier.
    pub fn sys(params: &AuthSys) -> Result<Self, AuthError> {
        params.validate()?;
        let mut body = Vec::with_capacity(64);
        params.encode_body(&mut body);
        let mut wire = Vec::with_capacity(body.len() + 16);
        OpaqueAuth {
            flavor: AUTH_SYS,
            body: &body,
        }
        .encode(&mut wire);
        OpaqueAuth::NONE.encode(&mut wire);
        Ok(Credential {
            wire,
            flavor: AUTH_SYS,
        })
    }

    /// Flavor of the credential (AUTH_NONE or AUTH_SYS).
    pub fn flavor(&self) -> u32 {
        self.flavor
    }

    /// The encoded `cred` and `verf`, ready to append to a call header.
    pub fn wire(&self) -> &[u8] {
        &self.wire
    }
}
