//! Values out of (and into) the sandbox: structured-clone copies between QuickJS values and the
//! shared value model (`convert`), and the `util.inspect` port that formats them for the console
//! (`inspect`). Both read through the realm's intrinsics, never through what sandbox code can
//! replace.

pub(super) mod convert;
pub(super) mod inspect;
