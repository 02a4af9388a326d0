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
    use crate::proto::{nfs3, nfs4};
    assert_eq!(access::READ, nfs3::access::READ);
    assert_eq!(access::EXECUTE, nfs4::access::EXECUTE);
    assert_eq!(access::ALL, nfs3::access::ALL);
}
