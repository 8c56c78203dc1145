//! The allocator of the executor's QuickJS runtime: the C allocator, as QuickJS's own default
//! allocator uses it (see [`LimitedAllocator`]), under the runtime's [`MemoryAccount`], so that
//! `memoryLimitBytes` bounds what QuickJS takes from the system and a run can report the most
//! its runtime held (§10.2 stats).
//!
//! QuickJS keeps its own count too (the blocks it has in use, checked against the same limit
//! before every allocation), but its arena allocator sits above this one: a size class's arena
//! is taken whole from the C allocator however few of its blocks are in use, so a program that
//! keeps one small string alive in each arena made the process pay many times what QuickJS
//! counted. The account sees what the process pays, and refuses it here.
//!
//! Freed runtimes' memory goes back to the system. glibc keeps what is freed in the arena of the
//! thread that allocated it, and hands back only the free space at the top of a heap, so after
//! thousands of executors were cleaned up the process kept all they had held, and creating them
//! again grew it further, because a pool thread cannot reuse what another thread's arena holds
//! (bench/README.md, "Freed heaps go back to the system"). So
//! once runtimes (or executors' host sides) have been freed, a pool thread asks glibc to return
//! every free page of every arena (`malloc_trim`): a second after the last free
//! ([`TRIM_DELAY`]), or [`TRIM_MAX_DELAY`] after the first while frees keep coming, so that a
//! burst of cleanups costs one trim; one more trim [`TRIM_MAX_DELAY`] later hands back what was
//! freed late (an executor's host side goes when Node collects the executor, and its handles
//! close on later turns of Node's event loop). Other allocators (macOS, Windows, musl) return
//! memory by their own policy.

use std::ptr;
use std::rc::Rc;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use crate::memory::MemoryAccount;
use crate::scheduler::pool;

use rquickjs::allocator::Allocator;

/// How long after the last free the free memory is handed back: long enough that a burst of
/// cleanups costs one trim, short enough that the memory is back by the time anyone looks.
const TRIM_DELAY: Duration = Duration::from_secs(1);

/// The longest a trim waits once memory was freed, however often more is freed meanwhile.
const TRIM_MAX_DELAY: Duration = Duration::from_secs(5);

/// Frees not handed back yet: the first and the last since the last trim.
static FREED: Mutex<Option<(Instant, Instant)>> = Mutex::new(None);

fn freed() -> std::sync::MutexGuard<'static, Option<(Instant, Instant)>> {
    FREED.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Called once memory has been freed in bulk (a runtime, or an executor's host side):
/// schedules handing free memory back to the system.
pub fn memory_freed() {
    let now = Instant::now();
    let mut freed = freed();
    match freed.as_mut() {
        Some((_, last)) => *last = now,
        None => {
            *freed = Some((now, now));
            pool::call_at(now + TRIM_DELAY, trim_when_due);
        }
    }
}

/// The trim timer: trims once the frees have paused (or waited long enough), else waits more.
fn trim_when_due() {
    let now = Instant::now();
    let mut freed = freed();
    let Some((first, last)) = *freed else { return };
    let due = (last + TRIM_DELAY).min(first + TRIM_MAX_DELAY);
    if now < due {
        pool::call_at(due, trim_when_due);
        return;
    }
    *freed = None;
    drop(freed);
    trim();
    // What goes after the frees we hear of (the host side's queues and handles are closed on
    // later turns of Node's event loop) is handed back by one more trim.
    pool::call_at(now + TRIM_MAX_DELAY, trim_after_burst);
}

/// The trim that follows a burst's: skipped if another burst's trim is on its way.
fn trim_after_burst() {
    if freed().is_none() {
        trim();
    }
}

/// Returns every free page of every malloc arena to the system.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn trim() {
    // SAFETY: malloc_trim has no preconditions; it takes each arena's lock while it works.
    unsafe { libc::malloc_trim(0) };
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn trim() {}

/// The process's C allocator (`malloc`, `calloc`, `realloc`, `free`), as QuickJS's own default
/// allocator uses it, counting every block in the runtime's [`MemoryAccount`] and refusing one
/// that would pass its limit: so `memoryLimitBytes` bounds what QuickJS takes from the system
/// (its arenas whole, however few of their blocks are in use), together with what the engine
/// charges for the runtime outside QuickJS's heap.
///
/// Not rquickjs's `RustAllocator`: it goes through Rust's `GlobalAlloc`, which needs every
/// block's size back when freeing it, so it puts an 8-byte header in front of every block, on
/// top of malloc's own chunk header, and the extra 8 bytes push many blocks (QuickJS's arenas,
/// its hash tables and large strings) into the next 16-byte size class. The C allocator reports
/// a block's size itself (`malloc_usable_size` on Linux, `malloc_size` on macOS, `_msize` on
/// Windows), which is also the exact size QuickJS needs for its own accounting. Targets without
/// such a function keep `RustAllocator`.
pub struct LimitedAllocator(pub Rc<MemoryAccount>);

/// What the C allocator keeps beside each block (glibc's chunk header): counted with the block,
/// as QuickJS's own accounting does (`MALLOC_OVERHEAD`).
const BLOCK_HEADER: usize = std::mem::size_of::<usize>();

/// The bytes a block of `usable` bytes takes from the process.
fn footprint(usable: usize) -> usize {
    usable.saturating_add(BLOCK_HEADER)
}

/// The C allocator's functions, on the targets whose C library reports a block's usable size.
#[cfg(any(target_os = "linux", target_vendor = "apple", windows))]
mod system {
    use std::ffi::c_void;

    pub(crate) fn alloc(size: usize) -> *mut u8 {
        // SAFETY: malloc has no preconditions; a null result is passed on as a refusal.
        unsafe { libc::malloc(size) }.cast()
    }

    pub(crate) fn calloc(count: usize, size: usize) -> *mut u8 {
        // SAFETY: calloc has no preconditions and refuses an overflowing product itself.
        unsafe { libc::calloc(count, size) }.cast()
    }

    /// # Safety
    /// `block` is a live block of this allocator.
    pub(crate) unsafe fn realloc(block: *mut u8, size: usize) -> *mut u8 {
        // SAFETY: the caller passes a live block. Never 0 bytes: `realloc(p, 0)` may free the
        // block and return null, which the caller would take for a refusal that kept it.
        unsafe { libc::realloc(block.cast::<c_void>(), size.max(1)) }.cast()
    }

    /// # Safety
    /// `block` is a live block of this allocator.
    pub(crate) unsafe fn free(block: *mut u8) {
        // SAFETY: the caller passes a live block.
        unsafe { libc::free(block.cast::<c_void>()) }
    }

    /// # Safety
    /// `block` is a live block of this allocator.
    pub(crate) unsafe fn usable_size(block: *mut u8) -> usize {
        #[cfg(target_os = "linux")]
        // SAFETY: the caller passes a live block of the C allocator.
        let size = unsafe { libc::malloc_usable_size(block.cast::<c_void>()) };
        #[cfg(target_vendor = "apple")]
        // SAFETY: the caller passes a live block of the C allocator.
        let size = unsafe { libc::malloc_size(block.cast::<c_void>().cast_const()) };
        #[cfg(windows)]
        // SAFETY: the caller passes a live block of the C allocator.
        let size = unsafe { libc::_msize(block.cast::<c_void>()) };
        size
    }
}

/// Elsewhere, rquickjs's allocator over Rust's global allocator, which keeps each block's size
/// in a header of its own.
#[cfg(not(any(target_os = "linux", target_vendor = "apple", windows)))]
mod system {
    use std::ptr;

    use rquickjs::allocator::{Allocator, RustAllocator};

    pub(crate) fn alloc(size: usize) -> *mut u8 {
        RustAllocator.alloc(size)
    }

    pub(crate) fn calloc(count: usize, size: usize) -> *mut u8 {
        // `RustAllocator::calloc` panics on an overflowing product, and a panic must not unwind
        // into C: an impossible request is refused like any failed allocation.
        match count.checked_mul(size) {
            Some(total) if total > 0 => RustAllocator.calloc(1, total),
            _ => ptr::null_mut(),
        }
    }

    pub(crate) unsafe fn realloc(block: *mut u8, size: usize) -> *mut u8 {
        // SAFETY: the caller passes a live block of `RustAllocator`.
        unsafe { RustAllocator.realloc(block, size) }
    }

    pub(crate) unsafe fn free(block: *mut u8) {
        // SAFETY: the caller passes a live block of `RustAllocator`.
        unsafe { RustAllocator.dealloc(block) }
    }

    pub(crate) unsafe fn usable_size(block: *mut u8) -> usize {
        // SAFETY: the caller passes a live block of `RustAllocator`.
        unsafe { RustAllocator::usable_size(block) }
    }
}

// SAFETY: every block comes from `system`, whose blocks are aligned for any value QuickJS stores
// (malloc's alignment, or `RustAllocator`'s 8 bytes) and at least the size asked for; the account
// only reads sizes through `system::usable_size` of blocks it handed out and has not freed. A
// refusal is a null pointer, which QuickJS handles as a failed allocation everywhere it calls the
// allocator (its arena refills, large blocks, reallocations and the runtime itself).
unsafe impl Allocator for LimitedAllocator {
    fn alloc(&mut self, size: usize) -> *mut u8 {
        if !self.0.allows_allocation(footprint(size)) {
            return ptr::null_mut();
        }
        let block = system::alloc(size);
        if !block.is_null() {
            // SAFETY: `block` was just allocated by `system`.
            self.0
                .allocated_block(footprint(unsafe { system::usable_size(block) }));
        }
        block
    }

    fn calloc(&mut self, count: usize, size: usize) -> *mut u8 {
        let Some(total) = count.checked_mul(size) else {
            return ptr::null_mut();
        };
        if !self.0.allows_allocation(footprint(total)) {
            return ptr::null_mut();
        }
        let block = system::calloc(count, size);
        if !block.is_null() {
            // SAFETY: `block` was just allocated by `system`.
            self.0
                .allocated_block(footprint(unsafe { system::usable_size(block) }));
        }
        block
    }

    unsafe fn dealloc(&mut self, block: *mut u8) {
        // SAFETY: the caller passes a block of this allocator.
        unsafe {
            self.0.freed_block(footprint(system::usable_size(block)));
            system::free(block);
        }
    }

    unsafe fn realloc(&mut self, block: *mut u8, new_size: usize) -> *mut u8 {
        if block.is_null() {
            return self.alloc(new_size);
        }
        // SAFETY: the caller passes a block of this allocator; on success the old block is gone
        // and the new one is `system`'s.
        unsafe {
            let old = footprint(system::usable_size(block));
            let new = footprint(new_size);
            if new > old && !self.0.allows_allocation(new - old) {
                return ptr::null_mut();
            }
            let moved = system::realloc(block, new_size);
            if !moved.is_null() {
                self.0.freed_block(old);
                self.0
                    .allocated_block(footprint(system::usable_size(moved)));
            }
            moved
        }
    }

    unsafe fn usable_size(block: *mut u8) -> usize {
        // SAFETY: the caller passes a block of this allocator.
        unsafe { system::usable_size(block) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn allocator(limit: usize) -> (Rc<MemoryAccount>, LimitedAllocator) {
        let account = MemoryAccount::new(limit);
        (Rc::clone(&account), LimitedAllocator(account))
    }

    #[test]
    fn the_account_follows_allocations_and_keeps_the_peak() {
        let (account, mut allocator) = allocator(usize::MAX);
        let a = allocator.alloc(1000);
        let b = allocator.calloc(10, 100);
        assert!(account.peak() >= 2000 + 2 * BLOCK_HEADER);
        let at_peak = account.peak();
        // SAFETY: live blocks of this allocator, each freed once.
        unsafe {
            allocator.dealloc(a);
            allocator.dealloc(b);
        }
        assert_eq!(account.peak(), at_peak);
        assert_eq!(account.held(), 0);
        account.begin_run();
        assert_eq!(account.peak(), 0);
    }

    /// The limit bounds the blocks taken from the C allocator, header included: a block that
    /// would pass it is refused (a null pointer, QuickJS's failed allocation), and one that fits
    /// what is left is not.
    #[test]
    fn blocks_past_the_limit_are_refused() {
        let (account, mut allocator) = allocator(4096);
        let first = allocator.alloc(2048);
        assert!(!first.is_null());
        assert!(allocator.alloc(4096).is_null());
        assert!(allocator.calloc(1, 4096).is_null());
        // SAFETY: a live block of this allocator, not used after the move.
        let grown = unsafe { allocator.realloc(first, 8192) };
        assert!(grown.is_null(), "a refused realloc keeps the block");
        assert!(account.held() <= 4096);
        let small = allocator.alloc(512);
        assert!(!small.is_null());
        // SAFETY: live blocks of this allocator, each freed once.
        unsafe {
            allocator.dealloc(first);
            allocator.dealloc(small);
        }
        assert_eq!(account.held(), 0);
    }

    /// Charges and QuickJS's blocks share the limit: what a canvas holds leaves less for the
    /// heap, and a QuickJS allocation fails with QuickJS's own out-of-memory error.
    #[test]
    fn charges_leave_less_for_quickjs() {
        let account = MemoryAccount::new(4 << 20);
        let runtime =
            rquickjs::Runtime::new_with_alloc(LimitedAllocator(Rc::clone(&account))).unwrap();
        let context = rquickjs::Context::full(&runtime).unwrap();
        let fits = |len: usize| {
            context.with(|ctx| {
                ctx.eval::<usize, _>(format!("'x'.repeat({len}).length"))
                    .is_ok()
            })
        };
        assert!(fits(1 << 20));
        let pixels = account.charge(account.available() - (512 << 10)).unwrap();
        assert!(!fits(1 << 20));
        drop(pixels);
        assert!(fits(1 << 20));
    }

    /// The allocator, counting the blocks it holds (to tell their headers from their bytes).
    struct Counting(LimitedAllocator, Rc<std::cell::Cell<usize>>);

    // SAFETY: every call goes to the `LimitedAllocator` unchanged.
    unsafe impl Allocator for Counting {
        fn alloc(&mut self, size: usize) -> *mut u8 {
            let block = self.0.alloc(size);
            self.1.set(self.1.get() + usize::from(!block.is_null()));
            block
        }

        fn calloc(&mut self, count: usize, size: usize) -> *mut u8 {
            let block = self.0.calloc(count, size);
            self.1.set(self.1.get() + usize::from(!block.is_null()));
            block
        }

        unsafe fn dealloc(&mut self, block: *mut u8) {
            self.1.set(self.1.get() - 1);
            // SAFETY: the caller's contract.
            unsafe { self.0.dealloc(block) }
        }

        unsafe fn realloc(&mut self, block: *mut u8, new_size: usize) -> *mut u8 {
            // SAFETY: the caller's contract.
            let moved = unsafe { self.0.realloc(block, new_size) };
            self.1
                .set(self.1.get() + usize::from(block.is_null() && !moved.is_null()));
            moved
        }

        unsafe fn usable_size(block: *mut u8) -> usize {
            // SAFETY: the caller's contract.
            unsafe { LimitedAllocator::usable_size(block) }
        }
    }

    /// Patches 0300, 0301 and 0710 (vendor/quickjs-patches/): what QuickJS takes from the
    /// allocator for a fresh runtime and context (the blocks' usable bytes; the account adds
    /// the C allocator's header of each) is close to what it uses (size-class arenas start small
    /// instead of at 4 KB each, the first ones of large blocks hold one or two, and they stay at
    /// 1 KB while a class is in light use). Each patch's share: bench/README.md, "What a fresh
    /// runtime takes from the allocator".
    #[test]
    fn a_fresh_runtime_holds_little_more_than_it_uses() {
        let held_for_used = |new_context: fn(&rquickjs::Runtime) -> rquickjs::Context| {
            let account = MemoryAccount::new(usize::MAX);
            let blocks = Rc::new(std::cell::Cell::new(0));
            let allocator = Counting(LimitedAllocator(Rc::clone(&account)), Rc::clone(&blocks));
            let runtime = rquickjs::Runtime::new_with_alloc(allocator).unwrap();
            let _context = new_context(&runtime);
            let used = usize::try_from(runtime.memory_usage().malloc_size).unwrap();
            (account.allocated() - blocks.get() * BLOCK_HEADER, used)
        };
        for (name, new_context) in [
            (
                "full",
                (|runtime| rquickjs::Context::full(runtime).unwrap()) as fn(&_) -> _,
            ),
            ("engine", |runtime| {
                super::super::reflect::new_context(runtime, |_| {}).unwrap()
            }),
        ] {
            let (held, used) = held_for_used(new_context);
            assert!(
                held * 100 < used * 113,
                "{name}: held {held} bytes for {used} used"
            );
        }
    }

    #[test]
    fn realloc_moves_the_count_and_impossible_callocs_are_refused() {
        let (account, mut allocator) = allocator(usize::MAX);
        let block = allocator.alloc(8);
        // SAFETY: `block` is a live block of this allocator, not used after the move.
        let grown = unsafe { allocator.realloc(block, 4096) };
        assert!(account.peak() >= 4096);
        assert!(allocator.calloc(usize::MAX, 2).is_null());
        // SAFETY: `grown` is live and freed once.
        unsafe { allocator.dealloc(grown) };
        account.begin_run();
        assert_eq!(account.peak(), 0);
    }

    /// `realloc(p, 0)` of the C allocator may free the block and return null, which QuickJS
    /// would take for a refused allocation that kept it: the allocator keeps a block instead.
    #[test]
    fn realloc_to_zero_bytes_keeps_a_counted_block() {
        let (account, mut allocator) = allocator(usize::MAX);
        let block = allocator.alloc(64);
        // SAFETY: `block` is a live block of this allocator, not used after the move.
        let kept = unsafe { allocator.realloc(block, 0) };
        assert!(!kept.is_null());
        assert_eq!(
            account.held(),
            // SAFETY: a live block of this allocator.
            footprint(unsafe { LimitedAllocator::usable_size(kept) })
        );
        // SAFETY: live blocks of this allocator, each freed once.
        unsafe { allocator.dealloc(kept) };
        assert_eq!(account.held(), 0);
    }

    /// Every block holds at least what was asked for, aligned for any value QuickJS stores
    /// (`JS_ARENA_ALIGN`, doubles and pointers: 8 bytes), and the account counts its usable size
    /// and header.
    #[test]
    fn blocks_are_aligned_and_at_least_as_large_as_asked() {
        let (account, mut allocator) = allocator(usize::MAX);
        let mut blocks = Vec::new();
        for size in [1, 7, 8, 24, 100, 513, 4096, 70_000] {
            let block = allocator.alloc(size);
            assert!(!block.is_null());
            assert_eq!(block as usize % 8, 0, "{size} bytes");
            // SAFETY: a live block of this allocator.
            assert!(unsafe { LimitedAllocator::usable_size(block) } >= size);
            blocks.push(block);
        }
        let held: usize = blocks
            .iter()
            // SAFETY: every block is live until the loop below frees it.
            .map(|block| footprint(unsafe { LimitedAllocator::usable_size(*block) }))
            .sum();
        assert_eq!(account.held(), held);
        for block in blocks {
            // SAFETY: each block is live and freed once.
            unsafe { allocator.dealloc(block) };
        }
        assert_eq!(account.held(), 0);
    }
}
