//! The re-entrancy checks of `first_use` driven in process, from a fixed seed (a binary of its
//! own: its failure injection is process-wide). `npm run test:asan` runs it under
//! AddressSanitizer; `FIRST_USE_CASES` sets how many cases (default 64).

use std::sync::Mutex;

use arbitrary::{Arbitrary, Unstructured};
use ses_executor_fuzz::first_use::{
    arm, check_case, context, disarm, eval, interrupt_checks, runtime, Action, Case, Fault, Key,
    Lazy, Made, Tamper, Target, Use,
};
use ses_executor_fuzz::on_deep_stack;

/// One test at a time: failure injection counts every runtime's allocations and checks.
static SERIAL: Mutex<()> = Mutex::new(());

/// Cases from a fixed seed, with a few of each part (`arbitrary` from random bytes mostly
/// gives empty lists).
fn seeded_cases(count: usize) -> Vec<Case> {
    let mut rng = fastrand::Rng::with_seed(0x5e5_f125);
    (0..count)
        .map(|_| {
            let bytes: Vec<u8> = (0..4096).map(|_| rng.u8(..)).collect();
            let mut input = Unstructured::new(&bytes);
            let tampers = (0..rng.usize(1..8))
                .map(|_| Tamper::arbitrary(&mut input).expect("a change"))
                .collect();
            let uses = (0..rng.usize(1..8))
                .map(|_| Use::arbitrary(&mut input).expect("a use"))
                .collect();
            let fault = match rng.u8(..3) {
                0 => Fault::None,
                1 => Fault::Allocation {
                    at: rng.u16(..),
                    persistent: rng.bool(),
                },
                _ => Fault::InterruptCheck { at: rng.u16(..) },
            };
            Case {
                tampers,
                uses,
                fault,
            }
        })
        .collect()
}

#[test]
fn seeded_cases_hold() {
    let _serial = SERIAL
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let count = std::env::var("FIRST_USE_CASES")
        .ok()
        .and_then(|count| count.parse().ok())
        .unwrap_or(64);
    for case in seeded_cases(count) {
        on_deep_stack(|| check_case(&case));
    }
}

#[test]
fn interrupts_stop_the_chosen_check() {
    let _serial = SERIAL
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let runtime = runtime();
    let context = context(&runtime, Made::OnFirstUse);
    let code = "(() => { let n = 0; for (let i = 0; i < 100; i++) n += i; return String(n) })()";
    assert_eq!(eval(&context, code), "4950");
    arm(Fault::InterruptCheck { at: 9 });
    let stopped = eval(&context, code);
    let checks = interrupt_checks();
    disarm();
    assert!(stopped.contains("interrupted"), "{stopped}");
    // The 10th failed (`at` counts from 0); unwinding may pass a check or two more.
    assert!((10..=12).contains(&checks), "{checks} checks");
    assert_eq!(eval(&context, code), "4950");
}

#[test]
fn a_getter_that_deletes_a_global_while_its_group_is_made_is_a_case_that_holds() {
    // The reproduction of the SIGSEGV that started this target, as one of its inputs, failed at
    // an allocation of the typed arrays' first use.
    let _serial = SERIAL
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    for at in [0, 10, 40, 200] {
        let case = Case {
            tampers: vec![Tamper::Accessor {
                target: Target::ArrayPrototype,
                key: Key::Named(0),
                actions: vec![Action::DeleteGlobal(Lazy(9))],
            }],
            uses: vec![Use::Typeof(Lazy(9)), Use::Construct(Lazy(18))],
            fault: Fault::Allocation {
                at,
                persistent: false,
            },
        };
        on_deep_stack(|| check_case(&case));
    }
}
