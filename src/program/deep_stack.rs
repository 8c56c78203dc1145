//! Runs the program pipeline on a stack deep enough for any code `code_size_valid` accepts.
//!
//! oxc recurses over the syntax tree, which adversarial code can make as deep as the code is
//! long. Measured on release builds, the worst patterns (`(((…)))`) take about 1 KiB of native
//! stack per byte of code; a stack overflow would abort the whole host process. So code longer
//! than what the caller's stack safely holds is prepared on a fresh thread whose stack covers
//! [`MAX_CODE_BYTES`](super::rules::code_size_valid::MAX_CODE_BYTES) with a wide margin (the
//! reservation is virtual: only the pages used are ever touched).
//!
//! Spec: §6.1 (validation never crashes the host) and Appendix B.

use super::rules::code_size_valid::MAX_CODE_BYTES;

/// Native stack a byte of code may need in the worst case, with margin over the measured 1 KiB.
const STACK_PER_BYTE: usize = 3 * 1024;

/// The stack of the thread that prepares large code.
const DEEP_STACK_BYTES: usize = 16 * 1024 * 1024 + MAX_CODE_BYTES * STACK_PER_BYTE;

/// The largest input `work` may process on a stack of `stack_bytes` (with a quarter kept for
/// the caller's own frames).
pub fn inline_limit(stack_bytes: usize) -> usize {
    stack_bytes / 4 * 3 / STACK_PER_BYTE
}

/// Runs `work` over an input of `input_bytes` on the current thread if `inline_bytes` allows,
/// else on a thread with a deep stack. `failed` describes the outcome when no thread can be
/// had (or the work panicked: a bug, reported rather than propagated).
pub fn run<T: Send>(
    input_bytes: usize,
    inline_bytes: usize,
    work: impl FnOnce() -> T + Send,
    failed: impl FnOnce(String) -> T,
) -> T {
    if input_bytes <= inline_bytes {
        return work();
    }
    let outcome = std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("ses-executor-program".into())
            .stack_size(DEEP_STACK_BYTES)
            .spawn_scoped(scope, work)
            .map_err(|error| format!("cannot start the validation thread: {error}"))
            .and_then(|thread| {
                thread
                    .join()
                    .map_err(|_| "validation failed unexpectedly".to_owned())
            })
    });
    outcome.unwrap_or_else(failed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_work_runs_inline_and_large_work_on_another_thread() {
        let here = std::thread::current().id();
        assert_eq!(run(10, 100, || std::thread::current().id(), |_| here), here);
        assert_ne!(
            run(1000, 100, || std::thread::current().id(), |_| here),
            here
        );
    }

    #[test]
    fn a_panic_is_reported_not_propagated() {
        assert_eq!(
            run(1000, 0, || -> String { panic!("bug") }, |why| why),
            "validation failed unexpectedly"
        );
    }
}
