//! The allocator of the executor's QuickJS runtime: Rust's global allocator (through rquickjs's
//! own `RustAllocator`), metered so that a run can report the most heap it held (§10.2 stats).
//!
//! QuickJS's `memoryLimitBytes` check sits above the allocator (it compares its own byte count
//! with the limit before every allocation), so metering here changes nothing about the limit.
//! QuickJS's arenas sit above it too: the meter sees whole arenas and large blocks, the memory
//! the runtime really takes from the process.

use std::cell::Cell;
use std::ptr;
use std::rc::Rc;

use rquickjs::allocator::{Allocator, RustAllocator};

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

/// [`RustAllocator`] with a [`HeapMeter`].
pub struct MeteredAllocator(pub Rc<HeapMeter>);

// SAFETY: every block comes from `RustAllocator`, which meets the trait's contract; the meter
// only reads sizes through `RustAllocator::usable_size` of blocks it handed out.
unsafe impl Allocator for MeteredAllocator {
    fn alloc(&mut self, size: usize) -> *mut u8 {
        let block = RustAllocator.alloc(size);
        if !block.is_null() {
            // SAFETY: `block` was just allocated by `RustAllocator`.
            self.0.add(unsafe { RustAllocator::usable_size(block) });
        }
        block
    }

    fn calloc(&mut self, count: usize, size: usize) -> *mut u8 {
        // `RustAllocator::calloc` panics on an overflowing product, and a panic must not unwind
        // into C: an impossible request is refused like any failed allocation.
        let Some(total) = count.checked_mul(size).filter(|total| *total > 0) else {
            return ptr::null_mut();
        };
        let block = RustAllocator.calloc(1, total);
        if !block.is_null() {
            // SAFETY: `block` was just allocated by `RustAllocator`.
            self.0.add(unsafe { RustAllocator::usable_size(block) });
        }
        block
    }

    unsafe fn dealloc(&mut self, block: *mut u8) {
        // SAFETY: the caller passes a block of this allocator.
        unsafe {
            self.0.sub(RustAllocator::usable_size(block));
            RustAllocator.dealloc(block);
        }
    }

    unsafe fn realloc(&mut self, block: *mut u8, new_size: usize) -> *mut u8 {
        if block.is_null() {
            return self.alloc(new_size);
        }
        // SAFETY: the caller passes a block of this allocator; on success the old block is gone
        // and the new one is `RustAllocator`'s.
        unsafe {
            let old = RustAllocator::usable_size(block);
            let moved = RustAllocator.realloc(block, new_size);
            if !moved.is_null() {
                self.0.sub(old);
                self.0.add(RustAllocator::usable_size(moved));
            }
            moved
        }
    }

    unsafe fn usable_size(block: *mut u8) -> usize {
        // SAFETY: the caller passes a block of this allocator.
        unsafe { RustAllocator::usable_size(block) }
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
        unsafe {
            allocator.dealloc(a);
            allocator.dealloc(b);
        }
        assert_eq!(meter.peak(), at_peak);
        meter.begin_run();
        assert_eq!(meter.peak(), 0);
    }

    #[test]
    fn realloc_moves_the_count_and_impossible_callocs_are_refused() {
        let meter = Rc::new(HeapMeter::default());
        let mut allocator = MeteredAllocator(Rc::clone(&meter));
        let block = allocator.alloc(8);
        let grown = unsafe { allocator.realloc(block, 4096) };
        assert!(meter.peak() >= 4096);
        assert!(allocator.calloc(usize::MAX, 2).is_null());
        unsafe { allocator.dealloc(grown) };
        meter.begin_run();
        assert_eq!(meter.peak(), 0);
    }
}
