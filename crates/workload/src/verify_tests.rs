use super::*;

fn unit(bs: usize, id: u64, file: u32, n: u64, g: u32) -> Vec<u8> {
    let mut u = vec![0u8; bs];
    crate::content::fill(&mut u, 7);
    stamp_unit(&mut u, id, file, n, g);
    u
}

#[test]
fn a_stamped_unit_checks_and_each_fault_is_told_apart() {
    let u = unit(8192, 9, 1, 42, 5);
    assert_eq!(check_unit(&u, 9, 1, 42), Ok(5));
    // A flipped byte in the body.
    let mut c = u.clone();
    c[3000] ^= 1;
    assert_eq!(check_unit(&c, 9, 1, 42), Err(Fault::Checksum));
    // The tail sectors of an older write.
    let old = unit(8192, 9, 1, 42, 4);
    let mut t = u.clone();
    t[4096..].copy_from_slice(&old[4096..]);
    assert_eq!(check_unit(&t, 9, 1, 42), Err(Fault::Torn));
    // Another block, another file, another data set.
    assert_eq!(check_unit(&u, 9, 1, 43), Err(Fault::Misdirected));
    assert_eq!(check_unit(&u, 9, 2, 42), Err(Fault::Misdirected));
    assert_eq!(check_unit(&u, 8, 1, 42), Err(Fault::Misdirected));
    // Zeros: no head.
    assert_eq!(check_unit(&[0u8; 512], 9, 1, 42), Err(Fault::Checksum));
}

#[test]
fn counts_classify_an_old_generation_as_lost() {
    let dir = tempfile::tempdir().unwrap();
    let spec = crate::DatasetSpec::new(4 << 20, 8192).unwrap();
    let ds = crate::Dataset::planned(dir.path(), &spec);
    let mut c = VerifyCounts::default();
    let u = unit(8192, ds.id, 0, 3, 1);
    c.check(&ds, 0, 3, &u, (1, 1), false);
    assert_eq!(c.faults(), 0);
    c.check(&ds, 0, 3, &u, (2, 2), false);
    assert_eq!((c.lost, c.blocks_checked), (1, 2));
    assert_eq!(c.bad[0].fault, Fault::Lost);
    assert_eq!(c.bad[0].file, "dbio-data-01.dbf");
    // A read that raced a write may see sectors of both: not a fault then,
    // a fault otherwise.
    let mut torn = u.clone();
    torn[4096..].copy_from_slice(&unit(8192, ds.id, 0, 3, 2)[4096..]);
    c.check(&ds, 0, 3, &torn, (1, 2), true);
    assert_eq!(c.faults(), 1);
    c.check(&ds, 0, 3, &torn, (1, 2), false);
    assert_eq!(c.torn, 1);
}

#[test]
fn map_claims_completes_and_persists() {
    let dir = tempfile::tempdir().unwrap();
    let spec = crate::DatasetSpec::new(4 << 20, 8192).unwrap();
    let ds = crate::Dataset::planned(dir.path(), &spec);
    let map = GenMap::create(&ds).unwrap();
    let mut gens = Vec::new();
    assert!(map.claim(0, 10, 2, &mut gens));
    assert_eq!(gens, vec![1, 1]);
    // A unit with a write in flight cannot be claimed again; nothing changes.
    assert!(!map.claim(0, 9, 3, &mut gens));
    assert_eq!(map.get(0, 9), 0);
    assert_eq!(map.get(0, 10), 1 | IN_FLIGHT);
    map.complete(0, 10, 1);
    map.flush().unwrap();
    drop(map);
    let map = GenMap::open(&ds).unwrap().expect("map kept");
    assert_eq!((map.get(0, 10), map.get(0, 11)), (1, 1 | IN_FLIGHT));
    // Another data set's map is not taken.
    let other = crate::Dataset {
        id: 1,
        ..ds.clone()
    };
    assert!(GenMap::open(&other).unwrap().is_none());
    GenMap::forget(dir.path()).unwrap();
    assert!(GenMap::open(&ds).unwrap().is_none());
}

#[test]
fn too_large_a_data_set_is_refused_with_its_size() {
    let spec = crate::DatasetSpec::new(2 << 40, 8192).unwrap();
    let ds = crate::Dataset::planned(std::path::Path::new("/nowhere"), &spec);
    match GenMap::in_memory(&ds) {
        Err(MapError::TooLarge { units, max }) => {
            assert_eq!(max, MAX_UNITS);
            assert!(units > MAX_UNITS, "{units}");
        }
        other => panic!("expected TooLarge, got {:?}", other.map(|_| ())),
    }
}
