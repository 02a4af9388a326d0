//! The Kerberos lab (scripts/krb5-lab: an MIT KDC and ganesha with krb5, krb5i and
//! krb5p in a network namespace) proven by an independent RPCSEC_GSS client on
//! Python's gssapi (scripts/krb5-null-client): a context per service, a NULL call
//! under each, every reply verifier checked. Then dbio's own connections there: 256
//! calls at once under each service (several contexts, each within its share of the
//! window), and through a relay that tampers with replies: a context the server drops
//! (no call fails), a forged verifier (its call fails, naming it), a reply that never
//! comes (the call is sent again at once). Skips with a note where the lab cannot run
//! (not root, tools missing) unless DBIO_REQUIRE_PEERS=1.

use std::time::Instant;

#[path = "krb5/lab.rs"]
mod lab;
#[path = "krb5/tamper.rs"]
mod tamper;

use lab::{in_lab, scripts, start_lab, var};

#[test]
fn independent_client_is_accepted_under_krb5_krb5i_and_krb5p() {
    let t0 = Instant::now();
    let Some((_lab, env)) = start_lab("t") else {
        return;
    };
    let var = |k: &str| var(&env, k);
    let client = in_lab(&env, scripts().join("krb5-null-client"))
        .args([&var("NFS_ADDR"), &var("NFS_PORT"), &var("NFS_SERVICE")])
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&client.stdout);
    assert!(
        client.status.success(),
        "client failed:\n{out}{}",
        String::from_utf8_lossy(&client.stderr)
    );
    for svc in ["krb5", "krb5i", "krb5p"] {
        let line = out
            .lines()
            .find(|l| l.starts_with(&format!("{svc}: ")))
            .unwrap_or_else(|| panic!("no line for {svc}:\n{out}"));
        assert!(
            line.contains("accepted, window 32") && line.contains("reply verifier ok"),
            "{line}"
        );
        if svc != "krb5" {
            assert!(line.contains("reply body ok"), "{line}");
        }
    }
    eprintln!("krb5 lab: {} s\n{out}", t0.elapsed().as_secs_f32());
}

/// Runs `inner` (an ignored test of this file) in the lab's network namespace with
/// the lab's Kerberos settings, as a user inside it would run dbio.
fn run_inside(env: &str, inner: &str, extra: &[(&str, &str)]) -> std::process::Output {
    in_lab(env, std::env::current_exe().unwrap())
        .args([inner, "--exact", "--ignored", "--nocapture"])
        .env(
            "DBIO_KRB5_NFS",
            format!("{}:{}", var(env, "NFS_ADDR"), var(env, "NFS_PORT")),
        )
        .envs(extra.iter().copied())
        .output()
        .unwrap()
}

#[test]
fn dbio_seals_calls_and_opens_replies_under_each_service() {
    let Some((_lab, env)) = start_lab("c") else {
        return;
    };
    let out = run_inside(&env, "inside_lab_null_calls_under_each_service", &[]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for svc in ["krb5", "krb5i", "krb5p"] {
        // 256 at once: more than one context's share of the window (8 of 32). Whether a
        // second context is ready before the first has carried them all depends on
        // timing, so only its bound is checked (the answers are what must hold).
        let contexts: usize = text
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{svc}: 256 calls answered, ")))
            .and_then(|rest| rest.split(' ').next()?.parse().ok())
            .unwrap_or_else(|| panic!("{svc}:\n{text}"));
        assert!(
            (1..=dbio_rpc::secure::MAX_CONTEXTS).contains(&contexts),
            "{svc}: {contexts} contexts\n{text}"
        );
    }
    for inner in [
        "inside_lab_a_dropped_context_and_a_forged_verifier",
        "inside_lab_a_call_left_behind_is_sent_again_at_once",
    ] {
        let out = run_inside(&env, inner, &[]);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{inner}: {text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let out = run_inside(
        &env,
        "inside_lab_without_a_ticket",
        &[("KRB5CCNAME", "FILE:/nonexistent/dbio-cc")],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn lab_addr() -> std::net::SocketAddr {
    std::env::var("DBIO_KRB5_NFS").unwrap().parse().unwrap()
}

fn null_call() -> dbio_rpc::conn::CallBuf {
    let cred = dbio_rpc::Credential::sys(&dbio_rpc::AuthSys {
        stamp: 1,
        machine_name: "dbio-test".into(),
        uid: 0,
        gid: 0,
        gids: vec![],
    })
    .unwrap();
    let mut head = bytes::BytesMut::new();
    dbio_rpc::encode_call(&mut head, 0, 100_003, 3, 0, &cred);
    dbio_rpc::conn::CallBuf::new(head)
}

fn krb5_config(service: dbio_rpc::gss::GssService) -> dbio_rpc::conn::ConnConfig {
    dbio_rpc::conn::ConnConfig {
        gss: Some(dbio_rpc::GssTarget {
            principal: "nfs@localhost".into(),
            service,
        }),
        ..Default::default()
    }
}

#[test]
#[ignore = "runs inside the Kerberos lab's namespace, started by the test above"]
fn inside_lab_null_calls_under_each_service() {
    use dbio_rpc::conn::{Connection, ReplyTo};
    use dbio_rpc::gss::GssService;
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        for (name, service) in [
            ("krb5", GssService::None),
            ("krb5i", GssService::Integrity),
            ("krb5p", GssService::Privacy),
        ] {
            let t0 = std::time::Instant::now();
            let conn = Connection::connect(lab_addr(), krb5_config(service))
                .await
                .unwrap();
            // Far more outstanding at once than the server's window of 32.
            let mut waits = Vec::new();
            for _ in 0..256 {
                let (tx, rx) = tokio::sync::oneshot::channel();
                conn.submit(null_call(), ReplyTo::Once(tx));
                waits.push(rx);
            }
            for w in waits {
                let rec = w.await.unwrap().unwrap();
                let reply = dbio_rpc::decode_reply(&rec.record).unwrap();
                assert_eq!(reply.results().unwrap(), b"", "{name}");
            }
            let contexts = dbio_rpc::conn::ConnStats::get(&conn.stats().gss_contexts);
            let resent = dbio_rpc::conn::ConnStats::get(&conn.stats().retransmits);
            println!(
                "{name}: 256 calls answered, {contexts} contexts, {resent} resent, {:.2} s",
                t0.elapsed().as_secs_f64()
            );
        }
    });
}

#[test]
#[ignore = "runs inside the Kerberos lab's namespace, started by the test above"]
fn inside_lab_a_call_left_behind_is_sent_again_at_once() {
    use dbio_rpc::conn::{Connection, ReplyTo};
    use tamper::{relay, Tamper};
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        // The 20th reply never comes, as when the server drops a call that fell behind
        // its window; the calls after it are answered a window past its number.
        let via = relay(lab_addr(), vec![Tamper::Swallow(20)]);
        let conn = Connection::connect(via, krb5_config(dbio_rpc::gss::GssService::None))
            .await
            .unwrap();
        let t0 = std::time::Instant::now();
        let mut waits = Vec::new();
        for _ in 0..200 {
            let (tx, rx) = tokio::sync::oneshot::channel();
            conn.submit(null_call(), ReplyTo::Once(tx));
            waits.push(rx);
        }
        for w in waits {
            w.await.unwrap().unwrap();
        }
        let took = t0.elapsed();
        let resent = dbio_rpc::conn::ConnStats::get(&conn.stats().retransmits);
        // That one at least (ganesha may drop another on its own, as it did before).
        assert!(resent >= 1, "{resent}");
        // Well before the 10 s retransmission timeout: sent again at the next tick.
        assert!(took.as_secs_f64() < 5.0, "{took:?}");
        println!("200 calls, the one left behind sent again after {took:?}");
    });
}

#[test]
#[ignore = "runs inside the Kerberos lab's namespace, started by the test above"]
fn inside_lab_without_a_ticket() {
    use dbio_rpc::conn::Connection;
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let conn = Connection::connect(lab_addr(), krb5_config(dbio_rpc::gss::GssService::None))
            .await
            .unwrap();
        let err = conn.call(null_call()).await.unwrap_err().to_string();
        println!("{err}");
        assert!(err.contains("no Kerberos ticket: run kinit"), "{err}");
        assert!(!err.contains('\n'), "{err}");
    });
}

#[test]
#[ignore = "runs inside the Kerberos lab's namespace, started by the test above"]
fn inside_lab_a_dropped_context_and_a_forged_verifier() {
    use dbio_rpc::conn::Connection;
    use tamper::{relay, Tamper};
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        for (name, service) in [
            ("krb5", dbio_rpc::gss::GssService::None),
            ("krb5p", dbio_rpc::gss::GssService::Privacy),
        ] {
            let via = relay(
                lab_addr(),
                vec![Tamper::DropContext(40), Tamper::ForgeVerifier(90)],
            );
            let conn = Connection::connect(via, krb5_config(service))
                .await
                .unwrap();
            let mut failed = Vec::new();
            for _ in 0..150 {
                if let Err(e) = conn.call(null_call()).await {
                    failed.push(e.to_string());
                }
            }
            let contexts = dbio_rpc::conn::ConnStats::get(&conn.stats().gss_contexts);
            // The dropped context cost no call; the forged reply failed its own.
            assert_eq!(contexts, 2, "{name}");
            assert_eq!(failed.len(), 1, "{name}: {failed:?}");
            assert!(
                failed[0].starts_with(&format!("{via}: the reply to call xid 0x"))
                    && failed[0].contains("failed its RPCSEC_GSS verifier"),
                "{name}: {}",
                failed[0]
            );
            println!(
                "{name}: 150 calls, context renewed once, forged reply refused: {}",
                failed[0]
            );
        }
    });
}
