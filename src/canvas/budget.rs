//! Pixel memory as a budget: every pixel buffer and clip mask a canvas holds is reserved before
//! it is allocated and given back when it is dropped. The engine's budget takes the bytes out of
//! the QuickJS heap limit, so pixels and JS values share one `memoryLimitBytes`.

use std::rc::Rc;

/// Where pixel memory is reserved.
pub trait PixelBudget {
    /// Takes `bytes` from the budget, or says how many bytes are left.
    fn reserve(&self, bytes: usize) -> Result<(), OverBudget>;
    /// Gives back bytes taken by [`PixelBudget::reserve`].
    fn release(&self, bytes: usize);
}

/// A refused reservation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OverBudget {
    /// What was asked for.
    pub requested: usize,
    /// What the budget could still give.
    pub available: usize,
}

/// Bytes held from a budget for as long as this value lives.
pub struct Reservation {
    budget: Rc<dyn PixelBudget>,
    bytes: usize,
}

impl Reservation {
    /// Reserves `bytes` from `budget`.
    pub fn take(budget: &Rc<dyn PixelBudget>, bytes: usize) -> Result<Self, OverBudget> {
        budget.reserve(bytes)?;
        Ok(Self {
            budget: Rc::clone(budget),
            bytes,
        })
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        self.budget.release(self.bytes);
    }
}

impl std::fmt::Debug for Reservation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Reservation({} bytes)", self.bytes)
    }
}

/// A fixed budget: what tests and tools without a QuickJS heap use.
#[derive(Debug)]
pub struct FixedBudget {
    limit: usize,
    used: std::cell::Cell<usize>,
}

impl FixedBudget {
    /// A budget of `limit` bytes, shared as a [`PixelBudget`].
    pub fn shared(limit: usize) -> Rc<dyn PixelBudget> {
        Rc::new(Self {
            limit,
            used: std::cell::Cell::new(0),
        })
    }
}

impl PixelBudget for FixedBudget {
    fn reserve(&self, bytes: usize) -> Result<(), OverBudget> {
        let available = self.limit.saturating_sub(self.used.get());
        if bytes > available {
            return Err(OverBudget {
                requested: bytes,
                available,
            });
        }
        self.used.set(self.used.get() + bytes);
        Ok(())
    }

    fn release(&self, bytes: usize) {
        self.used.set(self.used.get().saturating_sub(bytes));
    }
}
