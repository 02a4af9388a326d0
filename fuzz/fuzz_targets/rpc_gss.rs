//! RPCSEC_GSS decoders: credential body, context-creation reply, integrity and privacy
//! bodies, and the call and reply headers a connection reads to seal and open them (with a mechanism that accepts every checksum, so the layout is what is tested).
#![no_main]

use dbio_rpc::gss::{self, GssCred, GssError, GssInitRes, GssMech};
use libfuzzer_sys::fuzz_target;

struct Accept;

impl GssMech for Accept {
    fn get_mic(&self, _: &[u8]) -> Result<Vec<u8>, GssError> {
        Ok(Vec::new())
    }
    fn verify_mic(&self, _: &[u8], _: &[u8]) -> Result<(), GssError> {
        Ok(())
    }
    fn wrap(&self, msg: &[u8]) -> Result<Vec<u8>, GssError> {
        Ok(msg.to_vec())
    }
    fn unwrap(&self, token: &[u8]) -> Result<Vec<u8>, GssError> {
        Ok(token.to_vec())
    }
}

fuzz_target!(|data: &[u8]| {
    if let Ok(cred) = GssCred::decode_body(data) {
        // A decoded credential re-encodes to one that decodes the same (padding bytes
        // are not checked, so the bytes themselves may differ).
        let mut again = Vec::new();
        cred.encode_body(&mut again);
        assert_eq!(again.len(), data.len());
        assert_eq!(GssCred::decode_body(&again).ok(), Some(cred));
    }
    if let Ok(res) = GssInitRes::decode(data) {
        assert!(res.handle.len() <= gss::MAX_HANDLE && res.token.len() <= gss::MAX_TOKEN);
    }
    let seq = data
        .get(4..8)
        .map_or(0, |w| u32::from_be_bytes([w[0], w[1], w[2], w[3]]));
    if let Ok(args) = gss::decode_integ(data, seq, &Accept) {
        assert!(args.len() <= data.len());
    }
    if let Ok(args) = gss::decode_priv(data, seq, &Accept) {
        assert!(args.len() <= data.len());
    }
    if let Ok(layout) = gss::call_layout(data) {
        assert!(layout.args <= data.len());
    }
    if let Ok(gss::ReplyShape::Accepted { verf, body, .. }) = gss::reply_shape(data) {
        assert!(body <= data.len() && verf.body.len() <= dbio_rpc::auth::MAX_AUTH_BYTES);
    }
});
