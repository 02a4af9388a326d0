use super::*;

#[test]
fn paths_join_and_split() {
    assert_eq!(join("", "a"), "a");
    assert_eq!(join("/d/", "a"), "d/a");
    assert_eq!(join("d/e", "a"), "d/e/a");
    assert_eq!(split_parent("a/b/c"), ("a/b", "c"));
    assert_eq!(split_parent("/c/"), ("", "c"));
    assert_eq!(split_parent(""), ("", ""));
}

#[test]
fn type_letters_are_those_of_ls() {
    let letters: String = [
        FileType::Regular,
        FileType::Directory,
        FileType::Symlink,
        FileType::Block,
        FileType::Char,
        FileType::Socket,
        FileType::Fifo,
    ]
    .iter()
    .map(|t| t.letter())
    .collect();
    assert_eq!(letters, "-dlbcsp");
}

#[test]
fn access_bits_match_both_versions() {
    use crate::proto::nfs4;
    // The file API uses NFSv3's table for both versions.
    let v3 = [
        access::READ,
        access::LOOKUP,
        access::MODIFY,
        access::EXTEND,
        access::DELETE,
        access::EXECUTE,
    ];
    let v4 = [
        nfs4::access::READ,
        nfs4::access::LOOKUP,
        nfs4::access::MODIFY,
        nfs4::access::EXTEND,
        nfs4::access::DELETE,
        nfs4::access::EXECUTE,
    ];
    assert_eq!(v3, v4);
    assert_eq!(access::ALL, v4.iter().fold(0, |a, b| a | b));
}
