//! The envelope of a snapshot: what a stored session is, who made it, whether it arrived whole
//! and, with a key, whether it came from someone holding that key.
//!
//! ```text
//! magic "SESSNAP\0" | format version (u16 LE) | flags (u8: 1 = signed)
//! | package version (u8 length + UTF-8) | engine build (u8 length + UTF-8)
//! | payload length (u64 LE) | payload (`codec.rs`)
//! | CRC-32 of everything before (u32 LE)
//! | HMAC-SHA256 of everything before (32 bytes), when signed
//! ```
//!
//! [`open`] checks in that order and refuses with a [`SnapshotError`] whose
//! [`SnapshotProblem`] names what is wrong. The checksum finds accidents (a truncated upload, a
//! flipped bit); only the HMAC finds tampering, and only when the restoring executor has the key
//! (`snapshotKey`). An unsigned snapshot is still read as untrusted input: its runs are validated
//! again and replayed under the restoring executor's limits.

use hmac::{Hmac, Mac};
use sha2::Sha256;

use super::codec::{self, CodecError};
use super::{Journal, Session, Terms};

const MAGIC: &[u8; 8] = b"SESSNAP\0";
/// The layout written here and in `codec.rs` (2: index keys of their own).
pub const FORMAT_VERSION: u16 = 2;
const SIGNED: u8 = 1;
const CHECKSUM_BYTES: usize = 4;
const HMAC_BYTES: usize = 32;

/// The package that wrote a snapshot.
pub const PACKAGE_VERSION: &str = env!("CARGO_PKG_VERSION");
/// The engine it ran on: QuickJS's version and the digest of the patches applied (`build.rs`).
pub const ENGINE_BUILD: &str = env!("SES_ENGINE_BUILD");

/// What is wrong with a snapshot (`details.reason` of `ERR_SNAPSHOT_INVALID`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SnapshotProblem {
    /// The bytes end before the snapshot does.
    Truncated,
    /// Not a snapshot, or a part of it holds what it cannot hold.
    Malformed,
    /// The checksum does not match: the bytes changed after they were written.
    Checksum,
    /// Written by another format, package version or engine build.
    Version,
    /// Signed without the key being given, unsigned where a key requires a signature, or
    /// signed with another key (or changed since).
    Hmac,
    /// The restoring executor's options differ from those the session was made under.
    Options,
    /// Replaying the journal went another way than the recorded runs did.
    Diverged,
    /// A limit of the restoring executor (`details.limit`) stopped the replay.
    Limit,
}

impl SnapshotProblem {
    /// The spelling of `details.reason`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Truncated => "truncated",
            Self::Malformed => "malformed",
            Self::Checksum => "checksum",
            Self::Version => "version",
            Self::Hmac => "hmac",
            Self::Options => "options",
            Self::Diverged => "diverged",
            Self::Limit => "limit",
        }
    }
}

/// A snapshot refused, with what is wrong and a message saying it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct SnapshotError {
    pub problem: SnapshotProblem,
    pub message: String,
    /// The option or limit concerned, for [`SnapshotProblem::Options`] and
    /// [`SnapshotProblem::Limit`].
    pub limit: Option<&'static str>,
}

impl SnapshotError {
    /// A refusal for `problem`.
    pub fn new(problem: SnapshotProblem, message: impl Into<String>) -> Self {
        Self {
            problem,
            message: message.into(),
            limit: None,
        }
    }

    /// A replay stopped by `limit`.
    pub fn limit(limit: &'static str, message: impl Into<String>) -> Self {
        Self {
            problem: SnapshotProblem::Limit,
            message: message.into(),
            limit: Some(limit),
        }
    }

    /// A restore under options that differ from the session's in `option`.
    pub fn options(option: &'static str) -> Self {
        Self {
            problem: SnapshotProblem::Options,
            message: format!(
                "the snapshot's session was made with another {option}: restore it with the options it was made with"
            ),
            limit: Some(option),
        }
    }
}

impl From<CodecError> for SnapshotError {
    fn from(error: CodecError) -> Self {
        let problem = match error {
            CodecError::Truncated { .. } => SnapshotProblem::Truncated,
            CodecError::Malformed { .. } | CodecError::Trailing(_) => SnapshotProblem::Malformed,
        };
        Self::new(problem, format!("the snapshot's session is {error}"))
    }
}

/// Writes the session made under `terms` with `journal` as a snapshot, signed with `key` when
/// one is given.
pub fn seal(terms: &Terms, journal: &Journal, key: Option<&[u8]>) -> Vec<u8> {
    let payload = codec::encode(terms, journal);
    let mut out = Vec::with_capacity(payload.len() + 128);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    out.push(if key.and_then(mac).is_some() {
        SIGNED
    } else {
        0
    });
    for text in [PACKAGE_VERSION, ENGINE_BUILD] {
        // Both are this build's own constants, far shorter than 256 bytes.
        out.push(u8::try_from(text.len()).unwrap_or(u8::MAX));
        out.extend_from_slice(&text.as_bytes()[..text.len().min(255)]);
    }
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    out.extend_from_slice(&payload);
    let checksum = crc32fast::hash(&out);
    out.extend_from_slice(&checksum.to_le_bytes());
    if let Some(mac) = key.and_then(mac) {
        out.extend_from_slice(&mac.chain_update(&out).finalize().into_bytes());
    }
    out
}

/// Reads a snapshot: checks it (see the module documentation) and decodes its session. With a
/// `key`, only a snapshot signed with that key is accepted; without one, a signed snapshot is
/// refused (it says its maker wanted it checked).
pub fn open(bytes: &[u8], key: Option<&[u8]>) -> Result<Session, SnapshotError> {
    let truncated = |what: &str| {
        SnapshotError::new(
            SnapshotProblem::Truncated,
            format!(
                "the snapshot is truncated: its {} bytes end inside {what}",
                bytes.len()
            ),
        )
    };
    if bytes.len() < MAGIC.len() || &bytes[..MAGIC.len()] != MAGIC {
        if MAGIC.starts_with(bytes) {
            return Err(truncated("the header"));
        }
        return Err(SnapshotError::new(
            SnapshotProblem::Malformed,
            "the bytes are not a snapshot of this package (they do not start with its marker)",
        ));
    }
    let mut at = MAGIC.len();
    let format = bytes
        .get(at..at + 2)
        .map(|raw| u16::from_le_bytes([raw[0], raw[1]]))
        .ok_or_else(|| truncated("the header"))?;
    if format != FORMAT_VERSION {
        return Err(SnapshotError::new(
            SnapshotProblem::Version,
            format!("the snapshot has format version {format}; this package reads version {FORMAT_VERSION}"),
        ));
    }
    at += 2;
    let flags = *bytes.get(at).ok_or_else(|| truncated("the header"))?;
    if flags & !SIGNED != 0 {
        return Err(SnapshotError::new(
            SnapshotProblem::Malformed,
            format!("the snapshot's header has unknown flags ({flags})"),
        ));
    }
    at += 1;
    let mut texts = [(0, 0); 2];
    for text in &mut texts {
        let len = usize::from(*bytes.get(at).ok_or_else(|| truncated("the header"))?);
        *text = (at + 1, len);
        at += 1 + len;
    }
    let length = bytes
        .get(at..at + 8)
        .map(|raw| u64::from_le_bytes(raw.try_into().unwrap_or([0xff; 8])))
        .ok_or_else(|| truncated("the header"))?;
    at += 8;
    let signature = if flags & SIGNED != 0 { HMAC_BYTES } else { 0 };
    let payload_end = usize::try_from(length)
        .ok()
        .and_then(|length| at.checked_add(length));
    let expected = payload_end.and_then(|end| end.checked_add(CHECKSUM_BYTES + signature));
    match expected {
        Some(expected) if expected == bytes.len() => {}
        Some(expected) if expected > bytes.len() => return Err(truncated("its session")),
        Some(expected) => {
            return Err(SnapshotError::new(
                SnapshotProblem::Malformed,
                format!(
                    "the snapshot is {} bytes long where its header says {expected}",
                    bytes.len()
                ),
            ))
        }
        None => return Err(truncated("its session")),
    }
    let payload_end = payload_end.unwrap_or(at);
    let checked = payload_end + CHECKSUM_BYTES;
    let stored = u32::from_le_bytes(
        bytes[payload_end..checked]
            .try_into()
            .unwrap_or([0, 0, 0, 0]),
    );
    if crc32fast::hash(&bytes[..payload_end]) != stored {
        return Err(SnapshotError::new(
            SnapshotProblem::Checksum,
            "the snapshot's checksum does not match: its bytes changed after it was written",
        ));
    }
    let text = |(start, len): (usize, usize)| String::from_utf8_lossy(&bytes[start..start + len]);
    let (package, engine) = (text(texts[0]), text(texts[1]));
    if package != PACKAGE_VERSION {
        return Err(SnapshotError::new(
            SnapshotProblem::Version,
            format!("the snapshot was written by version {package} of the package; this is {PACKAGE_VERSION}"),
        ));
    }
    if engine != ENGINE_BUILD {
        return Err(SnapshotError::new(
            SnapshotProblem::Version,
            format!("the snapshot was written by another engine build ({engine}); this is {ENGINE_BUILD}"),
        ));
    }
    match (signature != 0, key) {
        (true, Some(key)) => mac(key)
            .ok_or(())
            .and_then(|mac| {
                mac.chain_update(&bytes[..checked])
                    .verify_slice(&bytes[checked..])
                    .map_err(|_| ())
            })
            .map_err(|()| {
                SnapshotError::new(
                    SnapshotProblem::Hmac,
                    "the snapshot's HMAC does not match: it was signed with another snapshotKey, or changed since",
                )
            })?,
        (true, None) => {
            return Err(SnapshotError::new(
                SnapshotProblem::Hmac,
                "the snapshot is signed: restore it with the snapshotKey it was signed with",
            ))
        }
        (false, Some(_)) => {
            return Err(SnapshotError::new(
                SnapshotProblem::Hmac,
                "the snapshot is not signed, and this executor's snapshotKey requires a signature",
            ))
        }
        (false, None) => {}
    }
    Ok(codec::decode(&bytes[at..payload_end])?)
}

/// An HMAC-SHA256 keyed with `key` (HMAC takes a key of any length, so this is always `Some`).
fn mac(key: &[u8]) -> Option<Hmac<Sha256>> {
    <Hmac<Sha256> as Mac>::new_from_slice(key).ok()
}

#[cfg(test)]
mod tests;
