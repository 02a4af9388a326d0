use super::*;
use crate::msg::decode_call;

/// A stand-in mechanism: the MIC is a keyed sum and wrap is a marked XOR, enough to
/// show which bytes were signed or sealed and to fail when they change.
struct Fake(u8);

impl Fake {
    fn sum(&self, msg: &[u8]) -> Vec<u8> {
        let mut h: u32 = 0x811c_9dc5 ^ u32::from(self.0);
        for b in msg {
            h = (h ^ u32::from(*b)).wrapping_mul(0x0100_0193);
        }
        let mut mic = b"MIC:".to_vec();
        mic.extend_from_slice(&h.to_be_bytes());
        mic
    }
}

impl GssMech for Fake {
    fn get_mic(&self, msg: &[u8]) -> Result<Vec<u8>, GssError> {
        Ok(self.sum(msg))
    }
    fn verify_mic(&self, msg: &[u8], mic: &[u8]) -> Result<(), GssError> {
        if self.sum(msg) == mic {
            Ok(())
        } else {
            Err(GssError::Mech("bad mic".into()))
        }
    }
    fn wrap(&self, msg: &[u8]) -> Result<Vec<u8>, GssError> {
        let mut t = vec![b'W'];
        t.extend(msg.iter().map(|b| b ^ self.0));
        Ok(t)
    }
    fn unwrap(&self, token: &[u8]) -> Result<Vec<u8>, GssError> {
        match token.split_first() {
            Some((b'W', rest)) => Ok(rest.iter().map(|b| b ^ self.0).collect()),
            _ => Err(GssError::Mech("not a wrap token".into())),
        }
    }
}

fn words(ws: &[u32]) -> Vec<u8> {
    ws.iter().flat_map(|w| w.to_be_bytes()).collect()
}

#[test]
fn credential_body_has_rfc_2203_layout() {
    let cred = GssCred {
        proc_: GssProc::Data,
        seq_num: 7,
        service: GssService::Integrity,
        handle: &[0xAA, 0xBB, 0xCC],
    };
    let mut out = Vec::new();
    cred.encode_body(&mut out);
    let mut want = words(&[1, 0, 7, 2, 3]);
    want.extend_from_slice(&[0xAA, 0xBB, 0xCC, 0]);
    assert_eq!(out, want);
    assert_eq!(GssCred::decode_body(&out).unwrap(), cred);
}

#[test]
fn credential_decode_rejects_bad_fields() {
    let mut v2 = words(&[2, 0, 1, 1, 0]);
    assert_eq!(GssCred::decode_body(&v2), Err(GssError::Version(2)));
    v2[3] = 1;
    v2[7] = 4; // gss_proc 4 is undefined
    assert!(matches!(
        GssCred::decode_body(&v2),
        Err(GssError::Xdr(XdrError::BadDiscriminant { .. }))
    ));
    let bad_service = words(&[1, 0, 1, 4, 0]);
    assert!(GssCred::decode_body(&bad_service).is_err());
    // A handle length beyond MAX_HANDLE fails before reading it.
    let long = words(&[1, 0, 1, 1, MAX_HANDLE as u32 + 1]);
    assert!(matches!(
        GssCred::decode_body(&long),
        Err(GssError::Xdr(XdrError::TooLong { .. }))
    ));
    let trailing = words(&[1, 0, 1, 1, 0, 9]);
    assert!(GssCred::decode_body(&trailing).is_err());
}

#[test]
fn credential_validate_bounds_handle_and_sequence() {
    let handle = [0u8; MAX_HANDLE + 1];
    let mut cred = GssCred {
        proc_: GssProc::Data,
        seq_num: 1,
        service: GssService::None,
        handle: &handle,
    };
    assert_eq!(
        cred.validate(),
        Err(GssError::HandleTooLong(MAX_HANDLE + 1))
    );
    cred.handle = &handle[..MAX_HANDLE];
    assert_eq!(cred.validate(), Ok(()));
    cred.seq_num = MAXSEQ;
    assert_eq!(cred.validate(), Err(GssError::SeqTooLarge(MAXSEQ)));
}

#[test]
fn init_res_decodes_and_bounds_lengths() {
    let mut wire = words(&[2]);
    wire.extend_from_slice(&[0x01, 0x02, 0, 0]);
    wire.extend(words(&[0, 0, 32, 5]));
    wire.extend_from_slice(&[9, 8, 7, 6, 5, 0, 0, 0]);
    let res = GssInitRes::decode(&wire).unwrap();
    assert_eq!(
        res,
        GssInitRes {
            handle: vec![1, 2],
            major: 0,
            minor: 0,
            seq_window: 32,
            token: vec![9, 8, 7, 6, 5],
        }
    );
    let mut again = Vec::new();
    res.encode(&mut again);
    assert_eq!(again, wire);
    // A hostile token length is refused without allocating it.
    let mut hostile = words(&[0, 0, 0, 32, 0xFFFF_FFFF]);
    hostile.extend_from_slice(&[0; 8]);
    assert!(matches!(
        GssInitRes::decode(&hostile),
        Err(GssError::Xdr(XdrError::TooLong { .. }))
    ));
    assert!(GssInitRes::decode(&wire[..wire.len() - 4]).is_err());
}

#[test]
fn data_call_verifier_signs_header_through_credential() {
    let mech = Fake(3);
    let cred = GssCred {
        proc_: GssProc::Data,
        seq_num: 5,
        service: GssService::None,
        handle: b"ctx1",
    };
    let mut out = vec![0xEE; 4]; // a record marker already in the buffer is not signed
    encode_gss_call(&mut out, 0x1234, 100003, 3, 1, &cred, &mech).unwrap();
    let call = &out[4..];
    let header_len = 6 * 4 + 8 + 24;
    let mut want = words(&[0x1234, 0, 2, 100003, 3, 1, RPCSEC_GSS, 24, 1, 0, 5, 1, 4]);
    want.extend_from_slice(b"ctx1");
    assert_eq!(&call[..header_len], &want[..]);
    let decoded = decode_call(call).unwrap();
    assert_eq!(decoded.cred.flavor, RPCSEC_GSS);
    assert_eq!(GssCred::decode_body(decoded.cred.body).unwrap(), cred);
    assert_eq!(decoded.verf.flavor, RPCSEC_GSS);
    assert_eq!(decoded.verf.body, &mech.sum(&call[..header_len])[..]);
}

#[test]
fn init_call_carries_a_none_verifier() {
    let cred = GssCred {
        proc_: GssProc::Init,
        seq_num: 0,
        service: GssService::None,
        handle: &[],
    };
    let mut out = Vec::new();
    encode_gss_call(&mut out, 1, 100003, 4, 0, &cred, &Fake(0)).unwrap();
    assert_eq!(&out[out.len() - 8..], &words(&[0, 0])[..]);
    assert_eq!(out.len(), 6 * 4 + 8 + 20 + 8);
}

#[test]
fn reply_verifier_is_mic_of_sequence_number() {
    let mech = Fake(1);
    assert_eq!(reply_verf_input(0x0102_0304), [1, 2, 3, 4]);
    let mic = mech.sum(&[0, 0, 0, 9]);
    let verf = OpaqueAuth {
        flavor: RPCSEC_GSS,
        body: &mic,
    };
    assert_eq!(check_reply_verf(&verf, 9, &mech), Ok(()));
    assert!(check_reply_verf(&verf, 10, &mech).is_err());
    let none = OpaqueAuth::NONE;
    assert_eq!(
        check_reply_verf(&none, 9, &mech),
        Err(GssError::VerifierFlavor(0))
    );
}

#[test]
fn integrity_body_layout_and_checks() {
    let mech = Fake(2);
    let args = [0xA1, 0xA2, 0xA3, 0xA4, 0xA5];
    let mut out = Vec::new();
    encode_integ(&mut out, 77, &args, &mech).unwrap();
    let mut databody = words(&[77]);
    databody.extend_from_slice(&args);
    let mut want = words(&[9]);
    want.extend_from_slice(&databody);
    want.extend_from_slice(&[0, 0, 0]);
    want.extend(words(&[8]));
    want.extend(mech.sum(&databody));
    assert_eq!(out, want);
    assert_eq!(decode_integ(&out, 77, &mech).unwrap(), &args[..]);
    assert_eq!(
        decode_integ(&out, 78, &mech),
        Err(GssError::SeqMismatch {
            expected: 78,
            got: 77
        })
    );
    let mut tampered = out.clone();
    tampered[9] ^= 1;
    assert!(matches!(
        decode_integ(&tampered, 77, &mech),
        Err(GssError::Mech(_))
    ));
    assert!(decode_integ(&out[..out.len() - 1], 77, &mech).is_err());
}

#[test]
fn privacy_body_layout_and_checks() {
    let mech = Fake(0x5A);
    let args = words(&[0xDEAD_BEEF]);
    let mut out = Vec::new();
    encode_priv(&mut out, 3, &args, &mech).unwrap();
    let mut plain = words(&[3]);
    plain.extend_from_slice(&args);
    let mut want = words(&[9]);
    want.extend(mech.wrap(&plain).unwrap());
    want.extend_from_slice(&[0, 0, 0]);
    assert_eq!(out, want);
    assert_eq!(decode_priv(&out, 3, &mech).unwrap(), args);
    assert!(matches!(
        decode_priv(&out, 4, &mech),
        Err(GssError::SeqMismatch { .. })
    ));
    // An unwrapped body shorter than a sequence number is refused, not read past.
    let mut short = Vec::new();
    short.put_opaque(&mech.wrap(&[1, 2]).unwrap());
    assert!(matches!(
        decode_priv(&short, 0, &mech),
        Err(GssError::Xdr(_))
    ));
}
