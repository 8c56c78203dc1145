//! The allocator of the executor's QuickJS runtime: the C allocator, as QuickJS's own default
//! allocator uses it (see [`MeteredAllocator`]), metered so that a run can report the most heap
//! it held (§10.2 stats).
//!
//! QuickJS's `memoryLimitBytes` check sits above the allocator (it compares its own byte count
//! with the limit before every allocation), so metering here changes nothing about the limit.
//! QuickJS's arenas sit above it too: the meter sees whole arenas and large blocks, the memory
//! the runtime really takes from the process.
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

use std::cell::Cell;
use std::rc::Rc;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

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

/// Bytes held by one runtime, and the most it held since the last [`HeapMeter::begin_run`].
#[derive(Debug, Default)]
pub struct HeapMeter {
    held: Cell<usize>,
    peak: Cell<usize>,
}

impl HeapMeter {
    /// Starts measuring a run's peak from what the runtime holds now.
    pub fn begin_run(&self) {
        self.peak.set(self.held.get());
    }

    /// The bytes the runtime holds now.
    pub fn held(&self) -> usize {
        self.held.get()
    }

    /// The most bytes held since [`HeapMeter::begin_run`].
    pub fn peak(&self) -> usize {
        self.peak.get()
    }

    fn add(&self, bytes: usize) {
        let held = self.held.get().saturating_add(bytes);
        self.held.set(held);
        if held > self.peak.get() {
            self.peak.set(held);
        }
    }

    fn sub(&self, bytes: usize) {
        self.held.set(self.held.get().saturating_sub(bytes));
    }
}

/// The process's C allocator (`malloc`, `calloc`, `realloc`, `free`), as QuickJS's own default
/// allocator uses it, with a [`HeapMeter`].
///
/// Not rquickjs's `RustAllocator`: it goes through Rust's `GlobalAlloc`, which needs every
/// block's size back when freeing it, so it puts an 8-byte header in front of every block, on
/// top of malloc's own chunk header, and the extra 8 bytes push many blocks (QuickJS's arenas,
/// its hash tables and large strings) into the next 16-byte size class. The C allocator reports
/// a block's size itself (`malloc_usable_size` on Linux, `malloc_size` on macOS, `_msize` on
/// Windows), which is also the exact size QuickJS needs for its own accounting (the memory
/// limit counts `js_malloc_usable_size`). Targets without such a function keep
/// `RustAllocator`.
pub struct MeteredAllocator(pub Rc<HeapMeter>);

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
// (malloc's alignment, or `RustAllocator`'s 8 bytes) and at least the size asked for; the meter
// only reads sizes through `system::usable_size` of blocks it handed out and has not freed.
unsafe impl Allocator for MeteredAllocator {
    fn alloc(&mut self, size: usize) -> *mut u8 {
        let block = system::alloc(size);
        if !block.is_null() {
            // SAFETY: `block` was just allocated by `system`.
            self.0.add(unsafe { system::usable_size(block) });
        }
        block
    }

    fn calloc(&mut self, count: usize, size: usize) -> *mut u8 {
        let block = system::calloc(count, size);
        if !block.is_null() {
            // SAFETY: `block` was just allocated by `system`.
            self.0.add(unsafe { system::usable_size(block) });
        }
        block
    }

    unsafe fn dealloc(&mut self, block: *mut u8) {
        // SAFETY: the caller passes a block of this allocator.
        unsafe {
            self.0.sub(system::usable_size(block));
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
            let old = system::usable_size(block);
            let moved = system::realloc(block, new_size);
            if !moved.is_null() {
                self.0.sub(old);
                self.0.add(system::usable_size(moved));
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

    #[test]
    fn the_meter_follows_allocations_and_keeps_the_peak() {
        let meter = Rc::new(HeapMeter::default());
        let mut allocator = MeteredAllocator(Rc::clone(&meter));
        let a = allocator.alloc(1000);
        let b = allocator.calloc(10, 100);
        assert!(meter.peak() >= 2000);
        let at_peak = meter.peak();
        // SAFETY: both blocks came from this allocator and are freed once.
        unsafe {
            allocator.dealloc(a);
            allocator.dealloc(b);
        }
        assert_eq!(meter.peak(), at_peak);
        meter.begin_run();
        assert_eq!(meter.peak(), 0);
    }

    /// Patches 0300, 0301 and 0710 (vendor/quickjs-patches/): what QuickJS takes from the
    /// allocator for a fresh runtime and context is close to what it uses (size-class arenas
    /// start small instead of at 4 KB each, the first ones of large blocks hold one or two, and
    /// they stay at 1 KB while a class is in light use). Each patch's share: bench/README.md,
    /// "What a fresh runtime takes from the allocator".
    #[test]
    fn a_fresh_runtime_holds_little_more_than_it_uses() {
        let held_for_used = |new_context: fn(&rquickjs::Runtime) -> rquickjs::Context| {
            let meter = Rc::new(HeapMeter::default());
            let runtime =
                rquickjs::Runtime::new_with_alloc(MeteredAllocator(Rc::clone(&meter))).unwrap();
            let _context = new_context(&runtime);
            let used = usize::try_from(runtime.memory_usage().malloc_size).unwrap();
            (meter.held.get(), used)
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
        let meter = Rc::new(HeapMeter::default());
        let mut allocator = MeteredAllocator(Rc::clone(&meter));
        let block = allocator.alloc(8);
        // SAFETY: `block` is a live block of this allocator, not used after the move.
        let grown = unsafe { allocator.realloc(block, 4096) };
        assert!(meter.peak() >= 4096);
        assert!(allocator.calloc(usize::MAX, 2).is_null());
        // SAFETY: `grown` is live and freed once.
        unsafe { allocator.dealloc(grown) };
        meter.begin_run();
        assert_eq!(meter.peak(), 0);
    }

    /// `realloc(p, 0)` of the C allocator may free the block and return null, which QuickJS
    /// would take for a refused allocation that kept it: the allocator keeps a block instead.
    #[test]
    fn realloc_to_zero_bytes_keeps_a_counted_block() {
        let meter = Rc::new(HeapMeter::default());
        let mut allocator = MeteredAllocator(Rc::clone(&meter));
        let block = allocator.alloc(64);
        // SAFETY: `block` is a live block of this allocator, not used after the move.
        let kept = unsafe { allocator.realloc(block, 0) };
        assert!(!kept.is_null());
        // SAFETY: `kept` is a live block of this allocator.
        assert_eq!(meter.held(), unsafe { MeteredAllocator::usable_size(kept) });
        // SAFETY: `kept` is live and freed once.
        unsafe { allocator.dealloc(kept) };
        assert_eq!(meter.held(), 0);
    }

    /// Every block holds at least what was asked for, aligned for any value QuickJS stores
    /// (`JS_ARENA_ALIGN`, doubles and pointers: 8 bytes), and the meter counts its usable size.
    #[test]
    fn blocks_are_aligned_and_at_least_as_large_as_asked() {
        let meter = Rc::new(HeapMeter::default());
        let mut allocator = MeteredAllocator(Rc::clone(&meter));
        let mut blocks = Vec::new();
        for size in [1, 7, 8, 24, 100, 513, 4096, 70_000] {
            let block = allocator.alloc(size);
            assert!(!block.is_null());
            assert_eq!(block as usize % 8, 0, "{size} bytes");
            // SAFETY: `block` is a live block of this allocator.
            assert!(unsafe { MeteredAllocator::usable_size(block) } >= size);
            blocks.push(block);
        }
        let held: usize = blocks
            .iter()
            // SAFETY: every block is live until the loop below frees it.
            .map(|block| unsafe { MeteredAllocator::usable_size(*block) })
            .sum();
        assert_eq!(meter.held(), held);
        for block in blocks {
            // SAFETY: each block is live and freed once.
            unsafe { allocator.dealloc(block) };
        }
        assert_eq!(meter.held(), 0);
    }
}
