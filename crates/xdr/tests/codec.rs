//! XDR primitives: hand-checked bytes, bounds, round trips, and no panics on random input.

use dbio_xdr::{padding, BufMut, Decoder, XdrDecode, XdrEncode, XdrError, XdrPut};
use proptest::prelude::*;

#[test]
fn integers_are_big_endian() {
    let mut b = Vec::new();
    b.put_u32(0x0102_0304);
    b.put_i32(-2);
    b.put_u64(0x0102_0304_0506_0708);
    b.put_xdr_bool(true);
    assert_eq!(
        b,
        [1, 2, 3, 4, 0xff, 0xff, 0xff, 0xfe, 1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 1]
    );
    let mut d = Decoder::new(&b);
    assert_eq!(d.u32().unwrap(), 0x0102_0304);
    assert_eq!(d.i32().unwrap(), -2);
    assert_eq!(d.u64().unwrap(), 0x0102_0304_0506_0708);
    assert!(d.bool().unwrap());
    d.finish("test").unwrap();
}

#[test]
fn opaque_and_string_are_padded() {
    let mut b = Vec::new();
    b.put_opaque(b"abcde");
    b.put_string("");
    b.put_opaque_fixed(b"xyz");
    assert_eq!(
        b,
        [0, 0, 0, 5, b'a', b'b', b'c', b'd', b'e', 0, 0, 0, 0, 0, 0, 0, b'x', b'y', b'z', 0]
    );
    let mut d = Decoder::new(&b);
    assert_eq!(d.opaque("o", 5).unwrap(), b"abcde");
    assert_eq!(d.string("s", 0).unwrap(), "");
    assert_eq!(d.opaque_fixed("f", 3).unwrap(), b"xyz");
    assert_eq!(d.remaining(), 0);
    assert_eq!(padding(0), 0);
    assert_eq!(padding(1), 3);
    assert_eq!(padding(4), 0);
    assert_eq!(padding(7), 1);
}

#[test]
fn huge_length_is_rejected_by_bound_before_allocating() {
    let b = [0xff, 0xff, 0xff, 0xff, 1, 2, 3, 4];
    let err = Decoder::new(&b).opaque_vec("name", 255).unwrap_err();
    assert_eq!(
        err,
        XdrError::TooLong {
            item: "name",
            offset: 0,
            len: 0xffff_ffff,
            bound: 255
        }
    );
    // With a generous bound, the remaining input still stops it.
    let err = Decoder::new(&b).opaque("data", usize::MAX).unwrap_err();
    assert!(
        matches!(
            err,
            XdrError::Truncated {
                item: "data",
                remaining: 4,
                ..
            }
        ),
        "{err}"
    );
    // An array count far beyond the input fails before Vec::with_capacity.
    let err = Decoder::new(&b)
        .array("gids", usize::MAX, 4, |d| d.u32())
        .unwrap_err();
    assert!(
        matches!(err, XdrError::Truncated { item: "gids", .. }),
        "{err}"
    );
}

#[test]
fn missing_padding_is_truncation() {
    // Length 1, one byte, no padding.
    let b = [0, 0, 0, 1, 7];
    assert!(matches!(
        Decoder::new(&b).opaque("o", 8),
        Err(XdrError::Truncated { .. })
    ));
}

#[test]
fn bad_bool_and_discriminant_name_offset() {
    let b = [0, 0, 0, 2];
    assert_eq!(
        Decoder::new(&b).bool().unwrap_err(),
        XdrError::BadBool {
            offset: 0,
            value: 2
        }
    );
    let err = Decoder::new(&b)
        .enum_with("stable_how", |v| (v < 2).then_some(v))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "xdr: bad stable_how discriminant 2 at offset 0"
    );
}

#[test]
fn list_is_bounded() {
    let mut b = Vec::new();
    for i in 0..3u32 {
        b.put_xdr_bool(true);
        b.put_u32(i);
    }
    b.put_xdr_bool(false);
    assert_eq!(
        Decoder::new(&b).list("entries", 3, |d| d.u32()).unwrap(),
        [0, 1, 2]
    );
    assert!(matches!(
        Decoder::new(&b).list("entries", 2, |d| d.u32()),
        Err(XdrError::TooLong {
            item: "entries",
            ..
        })
    ));
}

#[test]
fn trailing_bytes_are_reported() {
    let b = [0, 0, 0, 1, 9];
    assert!(matches!(
        u32::from_xdr(&b),
        Err(XdrError::Trailing { count: 1, .. })
    ));
}

#[test]
fn non_utf8_string_is_an_error() {
    let mut b = Vec::new();
    b.put_opaque(&[0xff, 0xfe]);
    assert!(matches!(
        Decoder::new(&b).string("name", 10),
        Err(XdrError::NotUtf8 { .. })
    ));
    assert_eq!(
        Decoder::new(&b).string_bytes("name", 10).unwrap(),
        [0xff, 0xfe]
    );
}

proptest! {
    #[test]
    fn primitives_round_trip(a: u32, b: i32, c: u64, e: i64, f: bool, g: Option<u64>, h: [u8; 8]) {
        let mut buf = Vec::new();
        a.encode(&mut buf);
        b.encode(&mut buf);
        c.encode(&mut buf);
        e.encode(&mut buf);
        f.encode(&mut buf);
        g.encode(&mut buf);
        h.encode(&mut buf);
        prop_assert_eq!(buf.len() % 4, 0);
        let mut d = Decoder::new(&buf);
        prop_assert_eq!(d.decode::<u32>()?, a);
        prop_assert_eq!(d.decode::<i32>()?, b);
        prop_assert_eq!(d.decode::<u64>()?, c);
        prop_assert_eq!(d.decode::<i64>()?, e);
        prop_assert_eq!(d.decode::<bool>()?, f);
        prop_assert_eq!(d.decode::<Option<u64>>()?, g);
        prop_assert_eq!(d.decode::<[u8; 8]>()?, h);
        d.finish("all")?;
    }

    #[test]
    fn opaque_and_arrays_round_trip(
        data in proptest::collection::vec(any::<u8>(), 0..64),
        s in "[a-z\u{e9}]{0,20}",
        items in proptest::collection::vec(any::<u32>(), 0..16),
    ) {
        let mut buf = Vec::new();
        buf.put_opaque(&data);
        buf.put_string(&s);
        buf.put_array(&items, |o, v| o.put_u32(*v));
        buf.put_opaque_fixed(&data);
        prop_assert_eq!(buf.len() % 4, 0);
        let mut d = Decoder::new(&buf);
        prop_assert_eq!(d.opaque_vec("o", 64)?, data.clone());
        prop_assert_eq!(d.string("s", 64)?, s.as_str());
        prop_assert_eq!(d.array("a", 16, 4, |d| d.u32())?, items);
        prop_assert_eq!(d.opaque_fixed("f", data.len())?, &data[..]);
        d.finish("all")?;
    }

    #[test]
    fn random_bytes_never_panic(buf in proptest::collection::vec(any::<u8>(), 0..128)) {
        let mut d = Decoder::new(&buf);
        let _ = d.opaque("o", 1 << 20);
        let _ = d.string("s", 16);
        let _ = d.array("a", 1 << 30, 4, |d| d.opaque("x", 8).map(|x| x.len()));
        let _ = d.list("l", 1000, |d| d.u64());
        let _ = d.option(|d| d.bool());
        let _ = d.array_fixed::<12>("v");
        prop_assert!(d.position() <= buf.len());
    }
}
