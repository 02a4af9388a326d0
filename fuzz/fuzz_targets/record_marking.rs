//! Record reassembly: feeding the stream in arbitrary chunks gives the same records as
//! feeding it at once, and no record exceeds the bound.
#![no_main]

use dbio_rpc::RecordDecoder;
use libfuzzer_sys::fuzz_target;

const MAX: usize = 4096;

fn drain(dec: &mut RecordDecoder, out: &mut Vec<Vec<u8>>) -> bool {
    loop {
        match dec.next_record() {
            Ok(Some(r)) => {
                assert!(r.len() <= MAX);
                out.push(r.to_vec());
            }
            Ok(None) => return true,
            Err(_) => return false,
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&chunk, stream)) = data.split_first() else {
        return;
    };
    let mut whole = RecordDecoder::new(MAX);
    whole.push(stream);
    let mut expect = Vec::new();
    let whole_ok = drain(&mut whole, &mut expect);

    let mut split = RecordDecoder::new(MAX);
    let mut got = Vec::new();
    let mut split_ok = true;
    for c in stream.chunks(usize::from(chunk).max(1)) {
        split.push(c);
        if !drain(&mut split, &mut got) {
            split_ok = false;
            break;
        }
    }
    assert_eq!(whole_ok, split_ok);
    assert_eq!(expect, got);
});
