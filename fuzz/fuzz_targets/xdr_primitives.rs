//! Every XDR primitive, in an order chosen by the input, on the rest of the input.
#![no_main]

use dbio_xdr::Decoder;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((ops, rest)) = data.split_first_chunk::<8>() else {
        return;
    };
    let mut d = Decoder::new(rest);
    for op in ops {
        let before = d.position();
        let _ = match op % 12 {
            0 => d.u32().map(drop),
            1 => d.i64().map(drop),
            2 => d.bool().map(drop),
            3 => d.enum_with("e", |v| (v < 3).then_some(v)).map(drop),
            4 => d.opaque_fixed("f", usize::from(*op)).map(drop),
            5 => d.opaque("o", 1 << 20).map(drop),
            6 => d.opaque_vec("v", 64).map(drop),
            7 => d.string("s", 255).map(drop),
            8 => d.option(|d| d.u64()).map(drop),
            9 => d.array("a", 1 << 30, 4, |d| d.u32()).map(drop),
            10 => d.list("l", 1000, |d| d.string_bytes("n", 16)).map(drop),
            _ => d.array_fixed::<8>("x").map(drop),
        };
        assert!(d.position() >= before && d.position() <= rest.len());
    }
});
