//! Raw QuickJS: the C API beyond what rquickjs wraps (`reflect`) and the runtime's metered
//! allocator (`heap`), and what durable sessions read and set (`session`). The engine's one home of `unsafe` and `qjs::`; everything else in the
//! engine reads and makes values through the safe functions here.

pub(super) mod heap;
pub(super) mod loop_guard;
pub(super) mod reflect;
pub(super) mod session;
