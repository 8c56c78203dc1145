use super::*;
use crate::session::codec::tests::sample;

fn encoded(session: &Session) -> Vec<u8> {
    codec::encode(&session.terms, &session.journal)
}

fn problem(result: Result<Session, SnapshotError>) -> SnapshotProblem {
    match result {
        Ok(_) => panic!("the snapshot was accepted"),
        Err(error) => error.problem,
    }
}

#[test]
fn a_sealed_session_opens_as_it_was_with_and_without_a_key() {
    let session = sample();
    let plain = seal(&session.terms, &session.journal, None);
    assert_eq!(encoded(&open(&plain, None).unwrap()), encoded(&session));
    let signed = seal(&session.terms, &session.journal, Some(b"a key"));
    assert_eq!(signed.len(), plain.len() + HMAC_BYTES);
    assert_eq!(
        encoded(&open(&signed, Some(b"a key")).unwrap()),
        encoded(&session)
    );
}

#[test]
fn each_problem_is_named() {
    let session = sample();
    let bytes = seal(&session.terms, &session.journal, None);
    assert_eq!(problem(open(b"", None)), SnapshotProblem::Truncated);
    assert_eq!(problem(open(b"SESS", None)), SnapshotProblem::Truncated);
    assert_eq!(
        problem(open(b"{\"json\": true}", None)),
        SnapshotProblem::Malformed
    );
    for end in [9, 20, bytes.len() / 2, bytes.len() - 1] {
        assert_eq!(
            problem(open(&bytes[..end], None)),
            SnapshotProblem::Truncated,
            "cut at {end}"
        );
    }
    let mut longer = bytes.clone();
    longer.push(0);
    assert_eq!(problem(open(&longer, None)), SnapshotProblem::Malformed);
    let mut flipped = bytes.clone();
    let middle = bytes.len() / 2;
    flipped[middle] ^= 0x10;
    assert_eq!(problem(open(&flipped, None)), SnapshotProblem::Checksum);
    let mut other_format = bytes.clone();
    other_format[8] = u8::try_from(FORMAT_VERSION + 1).unwrap();
    assert_eq!(problem(open(&other_format, None)), SnapshotProblem::Version);
}

#[test]
fn another_package_version_or_engine_build_is_a_version_problem() {
    // Rewritten with a consistent checksum: the version check, not the checksum, refuses it.
    let rewrite = |index: usize| {
        let bytes = {
            let session = sample();
            seal(&session.terms, &session.journal, None)
        };
        let mut at = MAGIC.len() + 3;
        for _ in 0..index {
            at += 1 + usize::from(bytes[at]);
        }
        let mut changed = bytes;
        changed[at + 1] ^= 0x01;
        let end = changed.len() - CHECKSUM_BYTES;
        let checksum = crc32fast::hash(&changed[..end]);
        changed[end..].copy_from_slice(&checksum.to_le_bytes());
        changed
    };
    for (index, says) in [(0, "version"), (1, "engine build")] {
        let error = open(&rewrite(index), None).unwrap_err();
        assert_eq!(error.problem, SnapshotProblem::Version);
        assert!(error.message.contains(says), "{}", error.message);
    }
}

#[test]
fn signatures_are_required_checked_and_not_invented() {
    let session = sample();
    let signed = seal(&session.terms, &session.journal, Some(b"key one"));
    assert_eq!(problem(open(&signed, None)), SnapshotProblem::Hmac);
    assert_eq!(
        problem(open(&signed, Some(b"key two"))),
        SnapshotProblem::Hmac
    );
    let unsigned = seal(&session.terms, &session.journal, None);
    assert_eq!(
        problem(open(&unsigned, Some(b"key one"))),
        SnapshotProblem::Hmac
    );
    // A tampered payload with a recomputed checksum passes the checksum, not the HMAC.
    let mut tampered = signed.clone();
    let body = tampered.len() - HMAC_BYTES - CHECKSUM_BYTES;
    tampered[body - 3] ^= 0x01;
    let checksum = crc32fast::hash(&tampered[..body]);
    tampered[body..body + CHECKSUM_BYTES].copy_from_slice(&checksum.to_le_bytes());
    assert_eq!(
        problem(open(&tampered, Some(b"key one"))),
        SnapshotProblem::Hmac
    );
}

#[test]
fn a_payload_that_does_not_decode_is_malformed_or_truncated() {
    let mut bytes = {
        let session = sample();
        seal(&session.terms, &session.journal, None)
    };
    // The payload's first byte is the timers flag: 7 is no boolean.
    let at = MAGIC.len() + 3 + 2 + PACKAGE_VERSION.len() + ENGINE_BUILD.len() + 8;
    bytes[at] = 7;
    let end = bytes.len() - CHECKSUM_BYTES;
    let checksum = crc32fast::hash(&bytes[..end]);
    bytes[end..].copy_from_slice(&checksum.to_le_bytes());
    assert_eq!(problem(open(&bytes, None)), SnapshotProblem::Malformed);
}
