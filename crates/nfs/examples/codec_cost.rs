//! CPU cost of the pure codec on the 8 KiB READ path: encoding a call record, and
//! decoding a reply record (record marking, RPC reply, READ result).
//!
//! `cargo run --release -p dbio-nfs --example codec_cost`

use bytes::BytesMut;
use dbio_nfs::proto::nfs3::{self, decode_res, encode_res_ok, Data, FileHandle, ReadArgs, ReadOk};
use dbio_rpc::record::encode_record;
use dbio_rpc::{
    decode_reply, encode_call_record, encode_reply_success, AuthSys, Credential, RecordDecoder,
};
use std::hint::black_box;
use std::time::Instant;

const N: u32 = 200_000;

fn per_op(label: &str, start: Instant) {
    let ns = start.elapsed().as_nanos() as f64 / f64::from(N);
    println!("{label:<48} {ns:>8.0} ns");
}

fn main() {
    let cred = Credential::sys(&AuthSys {
        stamp: 1,
        machine_name: "client".into(),
        uid: 1000,
        gid: 1000,
        gids: vec![1000, 4, 24],
    })
    .expect("valid credential");
    let fh = FileHandle::new(&[0x5a; 28]).expect("28-byte handle");

    let mut buf = BytesMut::with_capacity(1 << 16);
    let start = Instant::now();
    for i in 0..N {
        if buf.len() > 60_000 {
            buf.clear();
        }
        let args = ReadArgs {
            file: fh,
            offset: u64::from(i) * 8192,
            count: 8192,
        };
        encode_call_record(
            &mut buf,
            i,
            nfs3::PROGRAM,
            nfs3::VERSION,
            nfs3::Proc::Read as u32,
            &cred,
            &args,
        );
    }
    per_op("encode READ call record (AUTH_SYS)", start);

    let data = vec![0xa5u8; 8192];
    let mut reply = Vec::new();
    encode_reply_success(&mut reply, 7);
    let ok = ReadOk {
        file_attributes: None,
        count: 8192,
        eof: false,
        data: Data(&data),
    };
    encode_res_ok(&mut reply, &ok);

    let start = Instant::now();
    for _ in 0..N {
        let r = decode_reply(black_box(&reply)).expect("reply");
        let ok = decode_res::<ReadOk>(r.results().expect("accepted"))
            .expect("xdr")
            .expect("NFS3_OK");
        black_box(ok.data.0.len());
    }
    per_op("decode READ reply from a record (zero-copy)", start);

    let mut stream = Vec::new();
    encode_record(&mut stream, &reply, usize::MAX);
    let mut dec = RecordDecoder::new(1 << 20);
    let start = Instant::now();
    for _ in 0..N {
        // The push copies 8 KiB, standing in for the socket read into the buffer.
        dec.push(black_box(&stream));
        let rec = dec.next_record().expect("bounded").expect("complete");
        let r = decode_reply(&rec).expect("reply");
        let ok = decode_res::<ReadOk>(r.results().expect("accepted"))
            .expect("xdr")
            .expect("NFS3_OK");
        black_box(rec.slice_ref(ok.data.0));
    }
    per_op("record reassembly + decode (incl. 8 KiB copy in)", start);
}
