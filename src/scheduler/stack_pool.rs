//! The stacks of the coroutines jobs run on (`slice.rs`), and the pool that reuses them.
//!
//! A job that a pool thread serves runs on a stack of its own, so that it can be suspended at
//! the end of its time slice and resumed later, on any pool thread, where it stopped. An idle
//! executor owns no stack: a stack is taken when a thread takes the job up and comes back here
//! when the job has nothing left to do, or stays with it while it is suspended.
//!
//! A stack is sized for the job: the depth its own code checks itself against (for an engine,
//! QuickJS's `maxStackBytes`), plus [`MARGIN_BYTES`] for the frames above the point it measures
//! from and the native code between its checks. Its lowest [`GUARD_BYTES`] are inaccessible, so
//! that running off the end faults there rather than writing into whatever lies below, even with
//! a native frame larger than a page. Stacks come from corosensei's `DefaultStack` (one mapping
//! per stack, registered with Valgrind, which Windows and macOS need no code of ours for); the
//! wider guard and the release of touched pages are ours.
//!
//! Free stacks are kept for reuse, at most [`MAX_FREE`] of them; the pages a job touched below
//! [`KEEP_BYTES`] are handed back to the system when a pool thread goes idle
//! ([`release_deep_pages`]), as the threads' own deep pages are (`stack.rs`).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use corosensei::stack::{DefaultStack, Stack as _};

/// Room above and below a job's own checked depth: the frames of the pool and the job before
/// the point where the job measures its depth from, and native code between its checks.
pub const MARGIN_BYTES: usize = 1024 * 1024;

/// The inaccessible bytes at the low end of every coroutine stack (corosensei's own guard page
/// included).
pub const GUARD_BYTES: usize = 64 * 1024;

/// The most free stacks kept for reuse.
pub const MAX_FREE: usize = 32;

/// The depth below a free stack's top that stays mapped when its deep pages are released.
const KEEP_BYTES: usize = 256 * 1024;

/// A coroutine stack with room for `checked` bytes of a job's own checked depth.
pub struct CoroutineStack {
    stack: DefaultStack,
    /// What it was made for ([`take`]'s argument): stacks are reused for the same size only.
    checked: usize,
    /// Whether it may hold touched pages below [`KEEP_BYTES`] (it ran since its last release).
    used: bool,
}

// SAFETY: the stack is a memory mapping owned by this value alone; corosensei's `Stack` trait
// only hands out its bounds.
unsafe impl corosensei::stack::Stack for CoroutineStack {
    fn base(&self) -> corosensei::stack::StackPointer {
        self.stack.base()
    }

    fn limit(&self) -> corosensei::stack::StackPointer {
        self.stack.limit()
    }

    #[cfg(windows)]
    fn teb_fields(&self) -> corosensei::stack::StackTebFields {
        self.stack.teb_fields()
    }

    #[cfg(windows)]
    fn update_teb_fields(&mut self, stack_limit: usize, guaranteed_stack_bytes: usize) {
        self.stack
            .update_teb_fields(stack_limit, guaranteed_stack_bytes);
    }
}

/// Stacks not in use.
static FREE: Mutex<Vec<CoroutineStack>> = Mutex::new(Vec::new());

/// Coroutine stacks that exist (free or in use).
static MAPPED: AtomicUsize = AtomicUsize::new(0);

/// Test builds: a stack for exactly this checked depth is always refused, as a refused `mmap`
/// would be.
#[cfg(test)]
pub const REFUSED_IN_TESTS: usize = 13 * 4096;

fn free() -> MutexGuard<'static, Vec<CoroutineStack>> {
    // Nothing panics while this lock is held; the list stays consistent.
    FREE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A stack for a job whose own code checks `checked` bytes of depth: a free one of that size,
/// or a new one; `None` when the system refuses the memory (the job then runs on the thread's
/// own stack, which holds the deepest job, without time slices).
pub fn take(checked: usize) -> Option<CoroutineStack> {
    let reused = {
        let mut free = free();
        let found = free.iter().rposition(|stack| stack.checked == checked);
        found.map(|index| free.swap_remove(index))
    };
    reused.or_else(|| make(checked))
}

/// Gives a stack whose coroutine has finished back for reuse (or unmaps it when enough are
/// kept).
pub fn give_back(mut stack: CoroutineStack) {
    stack.used = true;
    let unneeded = {
        let mut free = free();
        free.push(stack);
        (free.len() > MAX_FREE).then(|| free.remove(0))
    };
    drop(unneeded);
}

/// Hands the pages that free stacks touched below [`KEEP_BYTES`] back to the system. Called by
/// pool threads as they go idle.
pub fn release_deep_pages() {
    let mut free = free();
    for stack in free.iter_mut().filter(|stack| stack.used) {
        stack.used = false;
        let low = stack.stack.limit().get() + GUARD_BYTES;
        let high = stack.stack.base().get().saturating_sub(KEEP_BYTES);
        super::stack::release(&(low..high.max(low)));
    }
}

/// How many coroutine stacks exist, free or in use.
pub fn mapped() -> usize {
    MAPPED.load(Ordering::Relaxed)
}

/// How many free stacks are kept for reuse.
pub fn kept() -> usize {
    free().len()
}

fn make(checked: usize) -> Option<CoroutineStack> {
    #[cfg(test)]
    if checked == REFUSED_IN_TESTS {
        return None;
    }
    let stack = DefaultStack::new(checked.checked_add(MARGIN_BYTES + GUARD_BYTES)?).ok()?;
    widen_guard(&stack)?;
    MAPPED.fetch_add(1, Ordering::Relaxed);
    Some(CoroutineStack {
        stack,
        checked,
        used: false,
    })
}

impl Drop for CoroutineStack {
    fn drop(&mut self) {
        MAPPED.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Makes the lowest [`GUARD_BYTES`] of `stack` inaccessible (corosensei guards one page).
#[cfg(unix)]
fn widen_guard(stack: &DefaultStack) -> Option<()> {
    // SAFETY: the range lies inside the stack's own mapping (its lowest bytes, which hold nothing
    // yet), page-aligned: `limit` is the mapping's start and GUARD_BYTES a multiple of the page.
    let protected = unsafe {
        libc::mprotect(
            stack.limit().get() as *mut libc::c_void,
            GUARD_BYTES,
            libc::PROT_NONE,
        )
    };
    (protected == 0).then_some(())
}

#[cfg(not(unix))]
fn widen_guard(_stack: &DefaultStack) -> Option<()> {
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stacks_are_reused_for_the_same_size_and_the_free_list_is_bounded() {
        // A size no other test asks for.
        let checked = 3 * 64 * 1024;
        let first = take(checked).expect("a stack");
        let address = first.base();
        give_back(first);
        let again = take(checked).expect("a stack");
        assert_eq!(again.base(), address, "the free stack is reused");
        let others: Vec<_> = (0..MAX_FREE + 4)
            .map(|_| take(checked).expect("a stack"))
            .collect();
        give_back(again);
        for stack in others {
            give_back(stack);
        }
        assert!(kept() <= MAX_FREE);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_stack_holds_its_checked_depth_and_margin_above_a_wide_guard() {
        let stack = take(5 * 64 * 1024).expect("a stack");
        let (low, high) = (stack.limit().get(), stack.base().get());
        assert!(high - low >= 5 * 64 * 1024 + MARGIN_BYTES + GUARD_BYTES);
        // The mapping's lowest GUARD_BYTES are inaccessible, what lies above is writable.
        let maps = std::fs::read_to_string("/proc/self/maps").expect("the process's mappings");
        let guard = maps
            .lines()
            .filter_map(|line| {
                let (range, rest) = line.split_once(' ')?;
                let (start, end) = range.split_once('-')?;
                let start = usize::from_str_radix(start, 16).ok()?;
                let end = usize::from_str_radix(end, 16).ok()?;
                Some((start, end, rest.starts_with("---p")))
            })
            .find(|&(start, end, _)| start <= low && low < end)
            .expect("the stack's mapping");
        assert!(guard.2, "the low end is inaccessible");
        assert!(guard.1 >= low + GUARD_BYTES, "{guard:?}");
        // SAFETY: writes one byte just above the guard, inside the stack's writable part.
        unsafe { std::ptr::write_volatile((low + GUARD_BYTES) as *mut u8, 1) };
        give_back(stack);
        release_deep_pages();
    }

    #[test]
    fn a_refused_stack_is_reported_not_a_panic() {
        assert!(take(REFUSED_IN_TESTS).is_none());
    }
}
