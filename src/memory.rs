//! The memory one executor's runtime takes from the system, and the limit on it
//! (`memoryLimitBytes`).
//!
//! One [`MemoryAccount`] per runtime counts two things against one limit: what the runtime's
//! allocator takes from the C allocator for QuickJS (whole arenas and large blocks, each with the
//! C allocator's header: what the process pays, not the blocks QuickJS has in use), and what the
//! engine holds for the runtime outside QuickJS's heap (canvas pixels, saved states, paths and
//! gradients, PNGs being encoded or held for the answer, trace and log buffers). The allocator
//! refuses a block that would pass the limit, so QuickJS reports its ordinary out-of-memory
//! error; everything else takes a [`Charge`] before it allocates, and the charge gives the bytes
//! back when it is dropped. The most the account held since a run began is the run's
//! `stats.peakHeapBytes`.
//!
//! Shared (`Rc`) by the allocator inside the runtime, the engine and every charge: a charge that
//! outlives the runtime releases into an account that is still alive, and nothing in the account
//! points back into the runtime except the reclaim hook, which the engine clears before it frees
//! the runtime (see [`MemoryAccount::set_reclaim`]).

use std::cell::{Cell, RefCell};
use std::rc::Rc;

/// What a charge leaves QuickJS at least (an eighth of the limit if that is less): a charge
/// that would leave less is refused, so that the code can still catch the error that says so
/// (throwing it allocates) rather than fail at the limit on its next allocation.
const HEADROOM: usize = 64 << 10;

/// Frees what the engine keeps only in case it is asked for later, given the bytes missing
/// ([`MemoryAccount::set_evict`]).
pub type EvictHook = Rc<dyn Fn(usize)>;

/// The memory of one runtime, counted against its limit.
pub struct MemoryAccount {
    limit: usize,
    /// Bytes the runtime's allocator holds for QuickJS.
    allocated: Cell<usize>,
    /// Bytes held by [`Charge`]s.
    charged: Cell<usize>,
    /// The most held since [`MemoryAccount::begin_run`].
    peak: Cell<usize>,
    /// Frees what can be freed (QuickJS's cycle collector) before a charge is refused.
    reclaim: RefCell<Option<Rc<dyn Fn()>>>,
    /// Set while the hook runs: a charge made meanwhile is refused without running it again.
    reclaiming: Cell<bool>,
    /// Told of every refused charge (a session's record: whether one fits depends on what the
    /// heap holds, which a restore does not repeat).
    on_refused: RefCell<Option<Rc<dyn Fn()>>>,
    /// Frees what the engine keeps only in case it is asked for later (a session's journal)
    /// when a block or a charge would not fit otherwise; given the bytes missing, it frees
    /// nothing unless it can free that much.
    evict: RefCell<Option<EvictHook>>,
}

/// A refused charge or allocation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OverLimit {
    /// What was asked for.
    pub requested: usize,
    /// What the limit still left.
    pub available: usize,
}

impl std::fmt::Debug for MemoryAccount {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryAccount")
            .field("limit", &self.limit)
            .field("allocated", &self.allocated.get())
            .field("charged", &self.charged.get())
            .field("peak", &self.peak.get())
            .finish_non_exhaustive()
    }
}

impl MemoryAccount {
    /// An empty account that holds at most `limit` bytes.
    pub fn new(limit: usize) -> Rc<Self> {
        Rc::new(Self {
            limit,
            allocated: Cell::new(0),
            charged: Cell::new(0),
            peak: Cell::new(0),
            reclaim: RefCell::new(None),
            reclaiming: Cell::new(false),
            on_refused: RefCell::new(None),
            evict: RefCell::new(None),
        })
    }

    /// The limit.
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Everything held now: the allocator's blocks and the charges.
    pub fn held(&self) -> usize {
        self.allocated.get().saturating_add(self.charged.get())
    }

    /// What the allocator holds for QuickJS now.
    pub fn allocated(&self) -> usize {
        self.allocated.get()
    }

    /// What charges hold now.
    pub fn charged(&self) -> usize {
        self.charged.get()
    }

    /// What the limit still leaves.
    pub fn available(&self) -> usize {
        self.limit.saturating_sub(self.held())
    }

    /// The most held since [`MemoryAccount::begin_run`].
    pub fn peak(&self) -> usize {
        self.peak.get()
    }

    /// Starts measuring a run's peak from what is held now.
    pub fn begin_run(&self) {
        self.peak.set(self.held());
    }

    fn raise_peak(&self) {
        let held = self.held();
        if held > self.peak.get() {
            self.peak.set(held);
        }
    }

    /// Sets the hook that frees what can be freed before a charge is refused (the engine's runs
    /// QuickJS's cycle collector, which finalizes dropped canvases). The engine clears it before
    /// the runtime the hook points into is freed.
    pub fn set_reclaim(&self, hook: Option<Rc<dyn Fn()>>) {
        *self.reclaim.borrow_mut() = hook;
    }

    /// Sets the hook told of every refused charge; the engine clears it before the run state it
    /// points into goes.
    pub fn set_on_refused(&self, hook: Option<Rc<dyn Fn()>>) {
        *self.on_refused.borrow_mut() = hook;
    }

    /// Sets the hook that frees what is kept only in case (see the field); the engine clears
    /// it before what it points into goes.
    pub fn set_evict(&self, hook: Option<EvictHook>) {
        *self.evict.borrow_mut() = hook;
    }

    /// Asks the evict hook to free `missing` bytes.
    fn evict(&self, missing: usize) {
        // Cloned out, so that the hook may clear or replace itself.
        let hook = self.evict.borrow().clone();
        if let Some(hook) = hook {
            hook(missing);
        }
    }

    /// Runs the reclaim hook once, unless it is running already (a charge made by what it
    /// frees, or by a finalizer, does not start it again).
    fn reclaim(&self) {
        if self.reclaiming.get() {
            return;
        }
        // Cloned out, so that the hook may clear or replace itself.
        let Some(hook) = self.reclaim.borrow().clone() else {
            return;
        };
        struct Reclaiming<'a>(&'a Cell<bool>);
        impl Drop for Reclaiming<'_> {
            fn drop(&mut self) {
                self.0.set(false);
            }
        }
        self.reclaiming.set(true);
        let _reset = Reclaiming(&self.reclaiming);
        hook();
    }

    /// What a charge may take now (without reclaiming): what the limit leaves, less the
    /// headroom kept for QuickJS.
    pub fn chargeable(&self) -> usize {
        self.available()
            .saturating_sub(HEADROOM.min(self.limit / 8))
    }

    /// Counts `bytes` more as charged if they fit, after reclaiming once if they do not, then
    /// evicting what is kept only in case.
    fn take(&self, bytes: usize) -> Result<(), OverLimit> {
        if bytes > self.chargeable() {
            self.reclaim();
        }
        if bytes > self.chargeable() {
            self.evict(bytes - self.chargeable());
        }
        if self.take_if_free(bytes) {
            return Ok(());
        }
        // Cloned out, so that the hook may clear or replace itself.
        let hook = self.on_refused.borrow().clone();
        if let Some(hook) = hook {
            hook();
        }
        Err(OverLimit {
            requested: bytes,
            available: self.chargeable(),
        })
    }

    /// Counts `bytes` more as charged if they fit as things are; no hook runs.
    fn take_if_free(&self, bytes: usize) -> bool {
        if bytes > self.chargeable() {
            return false;
        }
        self.charged.set(self.charged.get() + bytes);
        self.raise_peak();
        true
    }

    fn give_back(&self, bytes: usize) {
        debug_assert!(
            bytes <= self.charged.get(),
            "released more than was charged"
        );
        self.charged.set(self.charged.get().saturating_sub(bytes));
    }

    /// Takes `bytes` for as long as the returned charge lives, or refuses them.
    pub fn charge(self: &Rc<Self>, bytes: usize) -> Result<Charge, OverLimit> {
        self.take(bytes)?;
        Ok(Charge {
            account: Rc::clone(self),
            bytes,
        })
    }

    /// A charge of no bytes, to be grown with [`Charge::resize`].
    pub fn empty_charge(self: &Rc<Self>) -> Charge {
        Charge {
            account: Rc::clone(self),
            bytes: 0,
        }
    }

    /// Whether the allocator may take a block of `bytes` more, after the evict hook freed what
    /// it could (no reclaiming: the allocator is called from inside QuickJS, where the collector
    /// must not run; the evict hook frees only the engine's own memory).
    pub fn allows_allocation(&self, bytes: usize) -> bool {
        if bytes > self.available() {
            self.evict(bytes - self.available());
        }
        bytes <= self.available()
    }

    /// The allocator took a block of `bytes`.
    pub fn allocated_block(&self, bytes: usize) {
        self.allocated
            .set(self.allocated.get().saturating_add(bytes));
        self.raise_peak();
    }

    /// The allocator gave back a block of `bytes`.
    pub fn freed_block(&self, bytes: usize) {
        debug_assert!(
            bytes <= self.allocated.get(),
            "freed more than was allocated"
        );
        self.allocated
            .set(self.allocated.get().saturating_sub(bytes));
    }
}

/// Bytes held from a [`MemoryAccount`] for as long as this value lives. It cannot be released
/// twice (dropping is the only release) and keeps its account alive.
pub struct Charge {
    account: Rc<MemoryAccount>,
    bytes: usize,
}

impl Charge {
    /// The bytes held.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// The account charged.
    pub fn account(&self) -> &Rc<MemoryAccount> {
        &self.account
    }

    /// Holds `bytes` instead: growing may be refused (the charge then keeps what it held),
    /// shrinking never is.
    pub fn resize(&mut self, bytes: usize) -> Result<(), OverLimit> {
        if bytes > self.bytes {
            self.account.take(bytes - self.bytes)?;
        } else {
            self.account.give_back(self.bytes - bytes);
        }
        self.bytes = bytes;
        Ok(())
    }

    /// Holds `more` bytes besides what it holds.
    pub fn grow(&mut self, more: usize) -> Result<(), OverLimit> {
        self.resize(self.bytes.saturating_add(more))
    }

    /// Holds `more` bytes besides what it holds if they fit as things are: no hook runs (nothing
    /// is reclaimed or evicted for them, and a refusal is no refused charge). For what the engine
    /// keeps only in case, which never takes the sandbox's room.
    pub fn grow_if_free(&mut self, more: usize) -> bool {
        let taken = self.account.take_if_free(more);
        if taken {
            self.bytes += more;
        }
        taken
    }
}

impl Drop for Charge {
    fn drop(&mut self) {
        self.account.give_back(self.bytes);
    }
}

impl std::fmt::Debug for Charge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Charge({} bytes)", self.bytes)
    }
}

/// The bytes a `Vec<T>` of `capacity` holds on the heap.
pub fn vec_bytes<T>(capacity: usize) -> usize {
    capacity.saturating_mul(std::mem::size_of::<T>())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charges_count_until_dropped_and_are_refused_past_the_limit() {
        let account = MemoryAccount::new(1000);
        let a = account.charge(600).unwrap();
        assert_eq!((account.held(), account.available()), (600, 400));
        // An eighth of the limit stays for QuickJS.
        assert_eq!(
            account.charge(300).unwrap_err(),
            OverLimit {
                requested: 300,
                available: 275
            }
        );
        assert_eq!(account.held(), 600, "a refused charge takes nothing");
        drop(a);
        assert_eq!(account.held(), 0);
        assert_eq!(account.peak(), 600);
        account.begin_run();
        assert_eq!(account.peak(), 0);
    }

    #[test]
    fn a_charge_grows_within_the_limit_and_keeps_what_it_held_when_refused() {
        let account = MemoryAccount::new(1000);
        let mut charge = account.empty_charge();
        charge.resize(700).unwrap();
        assert!(charge.grow(200).is_err());
        assert_eq!((charge.bytes(), account.held()), (700, 700));
        charge.resize(100).unwrap();
        assert_eq!(account.held(), 100);
        drop(charge);
        assert_eq!(account.held(), 0);
    }

    #[test]
    fn allocator_blocks_and_charges_share_the_limit_and_the_peak() {
        let account = MemoryAccount::new(1000);
        account.allocated_block(700);
        assert!(!account.allows_allocation(400));
        assert!(
            account.charge(200).is_err(),
            "the headroom stays for QuickJS"
        );
        let charge = account.charge(150).unwrap();
        assert!(
            account.allows_allocation(150),
            "QuickJS may use the headroom"
        );
        account.allocated_block(150);
        assert!(!account.allows_allocation(1));
        assert_eq!(account.peak(), 1000);
        account.freed_block(150);
        drop(charge);
        account.freed_block(700);
        assert_eq!(account.held(), 0);
    }

    #[test]
    fn what_is_kept_in_case_gives_way_to_allocations_and_charges_that_need_its_room() {
        let account = MemoryAccount::new(1000);
        let kept = Rc::new(RefCell::new(Some(account.charge(500).unwrap())));
        let asked = Rc::new(RefCell::new(Vec::new()));
        let hook: EvictHook = {
            let (kept, asked) = (Rc::clone(&kept), Rc::clone(&asked));
            Rc::new(move |missing| {
                asked.borrow_mut().push(missing);
                let frees = kept.borrow().as_ref().map_or(0, Charge::bytes);
                // Nothing is given up when it would not be enough.
                if frees >= missing {
                    kept.borrow_mut().take();
                }
            })
        };
        account.set_evict(Some(hook));
        account.allocated_block(400);
        assert!(
            !account.allows_allocation(700),
            "more than the kept bytes could free"
        );
        assert!(kept.borrow().is_some());
        assert!(account.allows_allocation(300));
        assert!(kept.borrow().is_none());
        assert_eq!(*asked.borrow(), [600, 200]);
        // With nothing kept, a charge that does not fit is refused as before.
        assert!(account.charge(600).is_err());
        account.set_evict(None);
        account.freed_block(400);
        assert_eq!(account.held(), 0);
    }

    #[test]
    fn a_charge_grown_only_if_free_runs_no_hook_and_takes_no_room() {
        let account = MemoryAccount::new(1000);
        let ran = Rc::new(Cell::new(0));
        let counting = |ran: &Rc<Cell<u32>>| {
            let ran = Rc::clone(ran);
            Rc::new(move || ran.set(ran.get() + 1))
        };
        account.set_reclaim(Some(counting(&ran)));
        account.set_on_refused(Some(counting(&ran)));
        let evicting = Rc::clone(&ran);
        account.set_evict(Some(Rc::new(move |_| evicting.set(evicting.get() + 1))));
        let mut kept = account.empty_charge();
        assert!(kept.grow_if_free(500));
        assert!(!kept.grow_if_free(500), "past what the headroom leaves");
        assert_eq!((kept.bytes(), account.held(), ran.get()), (500, 500, 0));
        account.set_reclaim(None);
        account.set_on_refused(None);
        account.set_evict(None);
    }

    #[test]
    fn the_reclaim_hook_runs_once_before_a_charge_is_refused_and_never_re_enters() {
        let account = MemoryAccount::new(1000);
        let held = Rc::new(RefCell::new(Some(account.charge(800).unwrap())));
        let runs = Rc::new(Cell::new(0));
        let hook: Rc<dyn Fn()> = {
            let (account, held, runs) =
                (Rc::downgrade(&account), Rc::clone(&held), Rc::clone(&runs));
            Rc::new(move || {
                runs.set(runs.get() + 1);
                // What the hook frees may charge again: refused without a second reclaim.
                let account = account.upgrade().unwrap();
                assert!(account.charge(account.available() + 1).is_err());
                held.borrow_mut().take();
            })
        };
        account.set_reclaim(Some(hook));
        let charge = account.charge(500).unwrap();
        assert_eq!(runs.get(), 1);
        assert_eq!(account.held(), 500);
        // Nothing left to free: refused after one more try.
        assert!(account.charge(400).is_err());
        assert_eq!(runs.get(), 2);
        account.set_reclaim(None);
        drop(charge);
        assert_eq!(account.held(), 0);
    }

    #[test]
    fn a_charge_outliving_everything_else_releases_into_its_own_account() {
        let account = MemoryAccount::new(1000);
        let charge = account.charge(10).unwrap();
        let weak = Rc::downgrade(&account);
        drop(account);
        assert_eq!(weak.upgrade().map(|a| a.held()), Some(10));
        drop(charge);
        assert!(weak.upgrade().is_none());
    }
}
