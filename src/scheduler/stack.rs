//! The native stack of the engine threads, and what it costs.
//!
//! Every pool thread can run any executor, so its stack is sized once, for the deepest executor
//! the options allow: QuickJS's own budget up to [`MAX_STACK_BYTES`] (the ceiling of
//! `maxStackBytes`, which QuickJS checks in every JS call, parse and regexp step) plus what oxc
//! needs below it when a dynamic `import()` prepares a module deep inside a run
//! ([`PROGRAM_STACK_BYTES`]), plus a margin for the native code that runs between QuickJS's
//! checks: 49 MiB. No option value can therefore make QuickJS use more stack than its thread
//! has.
//!
//! The reservation is virtual: a page costs memory only once touched. Touched pages would stay
//! with the thread for good, though, so a thread that goes to sleep hands the pages deeper than
//! [`KEEP_BYTES`] back to the system (`madvise(MADV_DONTNEED)`): a run that recursed deeply or
//! prepared a large program pins no memory afterwards, while the depth ordinary runs use stays
//! mapped and costs no page faults.

pub use crate::options::MAX_STACK_BYTES;

/// The stack a thread keeps for oxc beyond QuickJS's budget (code of typical runs is prepared
/// on it; larger code on a deeper stack: `program::prepare_safely`).
pub const PROGRAM_STACK_BYTES: usize = 32 * 1024 * 1024;

/// Room for the pool's own frames above the point where QuickJS measures from, and for native
/// code between QuickJS's stack checks.
const MARGIN_BYTES: usize = 1024 * 1024;

/// The stack of every engine thread.
pub const THREAD_STACK_BYTES: usize = MAX_STACK_BYTES + PROGRAM_STACK_BYTES + MARGIN_BYTES;

/// The depth below a sleeping thread's top that stays mapped.
const KEEP_BYTES: usize = 4 * 1024 * 1024;

/// The current thread's stack, as far as releasing its deep pages needs to know it.
pub(crate) struct Stack {
    /// The part to release: from the lowest address of the stack up to [`KEEP_BYTES`] below the
    /// point where the thread's loop runs. Empty where the bounds are unknown.
    deep: std::ops::Range<usize>,
}

impl Stack {
    /// The calling thread's stack; call it at the top of the thread's function.
    pub(crate) fn of_current_thread() -> Self {
        let marker = 0_u8;
        let top = std::ptr::addr_of!(marker) as usize;
        Self {
            deep: lowest_address()
                .map(|low| {
                    let page = page_size();
                    let start = low.div_ceil(page) * page;
                    let end = top.saturating_sub(KEEP_BYTES) / page * page;
                    start..end.max(start)
                })
                .unwrap_or(0..0),
        }
    }

    /// Hands the deep pages back to the system. Only call it from the frame that called
    /// [`Stack::of_current_thread`] (or one above the kept depth): nothing live may lie below.
    pub(crate) fn release_deep_pages(&self) {
        release(&self.deep);
    }
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn lowest_address() -> Option<usize> {
    // SAFETY: `attr` is initialised by `pthread_getattr_np` before it is read, and destroyed
    // once; the out-pointers are valid locals.
    unsafe {
        let mut attr: libc::pthread_attr_t = std::mem::zeroed();
        if libc::pthread_getattr_np(libc::pthread_self(), &mut attr) != 0 {
            return None;
        }
        let mut address = std::ptr::null_mut();
        let mut size = 0;
        let found = libc::pthread_attr_getstack(&attr, &mut address, &mut size) == 0;
        libc::pthread_attr_destroy(&mut attr);
        found.then_some(address as usize)
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn lowest_address() -> Option<usize> {
    None
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(4096)
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn page_size() -> usize {
    4096
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub(super) fn release(range: &std::ops::Range<usize>) {
    if range.is_empty() {
        return;
    }
    // SAFETY: the range is page-aligned, lies inside this thread's own stack mapping, and holds
    // no live frame (see `release_deep_pages`): private anonymous pages read back as zeros.
    unsafe {
        libc::madvise(
            range.start as *mut libc::c_void,
            range.end - range.start,
            libc::MADV_DONTNEED,
        );
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub(super) fn release(_range: &std::ops::Range<usize>) {}

#[cfg(test)]
mod tests {
    use super::*;

    /// Resident pages of this process's `[start, end)` range, from `/proc/self/smaps`-free
    /// `mincore`.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    fn resident(range: &std::ops::Range<usize>) -> usize {
        let page = page_size();
        let pages = (range.end - range.start) / page;
        let mut flags = vec![0_u8; pages];
        // SAFETY: the range is a mapped, page-aligned part of this thread's stack; `flags` has
        // one byte per page.
        let ok = unsafe {
            libc::mincore(
                range.start as *mut libc::c_void,
                range.end - range.start,
                flags.as_mut_ptr(),
            )
        } == 0;
        assert!(ok);
        flags.iter().filter(|flag| **flag & 1 == 1).count()
    }

    #[inline(never)]
    fn touch_deep(depth: usize) -> u8 {
        let mut block = [0_u8; 64 * 1024];
        block[0] = u8::try_from(depth % 251).unwrap_or(0);
        let below = if depth == 0 { 0 } else { touch_deep(depth - 1) };
        std::hint::black_box(&mut block);
        block[0].wrapping_add(below)
    }

    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[test]
    fn pages_a_deep_call_touched_are_given_back() {
        std::thread::Builder::new()
            .stack_size(THREAD_STACK_BYTES)
            .spawn(|| {
                let stack = Stack::of_current_thread();
                assert!(stack.deep.len() > MAX_STACK_BYTES);
                // 12 MiB deep: well below the kept part.
                std::hint::black_box(touch_deep(192));
                let touched = resident(&stack.deep);
                assert!(touched * page_size() > 8 * 1024 * 1024, "{touched} pages");
                stack.release_deep_pages();
                assert_eq!(resident(&stack.deep), 0);
                // The stack still works at that depth afterwards.
                std::hint::black_box(touch_deep(192));
            })
            .unwrap()
            .join()
            .unwrap();
    }
}
