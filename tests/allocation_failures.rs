//! Allocation failures, swept the way SQLite tests its out-of-memory handling: each
//! representative operation — creating an executor, copying values into the sandbox
//! (`sendVariables`, sync and async tool results), copying them out (tool arguments, outputs),
//! and running programs — is repeated once for every allocation N it makes, with the N-th
//! allocation refused (and, in the persistent sweeps, every later one too). Every repetition
//! must end in the structured memory-limit error (`ERR_RUNTIME_EXCEPTION`, `details.limit:
//! "memoryLimitBytes"`; `ERR_SES_INIT_FAILED` for creation) in the documented state, never in a
//! crash, a wrong result or another error; and the executor must work afterwards (after
//! `cleanup()` + `init()` when it is `DIRTY`).
//!
//! The failures are injected where QuickJS's memory limit refuses allocations
//! (vendor/quickjs-patches/0199, compiled only into test builds). The numbering is the whole
//! process's, so this file is a test binary of its own and its tests take turns ([`SERIAL`]).
//! `SWEEP_TRACE=1` prints each N before it runs (to find the one that crashes, under gdb).

use std::future::Future;
use std::os::raw::c_int;
use std::sync::Arc;
use std::time::Instant;

use ses_executor::engine::host::{Host, ToolCall, ToolFailure};
use ses_executor::engine::RunAbort;
use ses_executor::error::{ErrorCode, ExecutorError};
use ses_executor::executor::{Executor, ExecutorState, RunOutput, Tracing};
use ses_executor::options::Options;
use ses_executor::value::Value;
use tokio::sync::Mutex;

extern "C" {
    /// Refuses allocation number `fail_at` (counted from this call; 0: none), and every later
    /// one if `persistent`.
    fn JS_SesFaultInject(fail_at: i64, persistent: c_int);
    /// The allocations counted since the last [`JS_SesFaultInject`].
    fn JS_SesAllocationCount() -> i64;
}

/// One test at a time: the allocation numbering is the whole process's.
static SERIAL: Mutex<()> = Mutex::const_new(());

fn arm(fail_at: i64, persistent: bool) {
    // SAFETY: stores into the hook's atomic counters.
    unsafe { JS_SesFaultInject(fail_at, c_int::from(persistent)) }
}

/// Stops refusing allocations; returns how many were counted since [`arm`].
fn disarm() -> i64 {
    // SAFETY: loads and stores of the hook's atomic counters.
    unsafe {
        let count = JS_SesAllocationCount();
        JS_SesFaultInject(0, 0);
        count
    }
}

/// The value tools return and variables carry: every kind the copies know, nested, shared and
/// cyclic.
fn sample() -> Value {
    let string = |s: &str| Value::String(s.into());
    Value::Object(vec![
        ("n".into(), Value::Number(-0.5)),
        (
            "big".into(),
            Value::BigInt("-123456789012345678901234567890".into()),
        ),
        (
            "list".into(),
            Value::Array(vec![Some(Value::Bool(true)), None, Some(string("two"))]),
        ),
        ("when".into(), Value::Date(1.7e12)),
        (
            "re".into(),
            Value::RegExp {
                source: "a+b".into(),
                flags: "gi".into(),
            },
        ),
        (
            "map".into(),
            Value::Map(vec![(string("k"), Value::Array(vec![]))]),
        ),
        (
            "set".into(),
            Value::Set(vec![Value::Number(1.0), string("x")]),
        ),
        (
            "error".into(),
            Value::Error {
                name: "TypeError".into(),
                message: "bad".into(),
                stack: Some("TypeError: bad\n    at tool".into()),
            },
        ),
        ("bytes".into(), Value::ArrayBuffer(vec![1, 2, 3, 4])),
        ("again".into(), Value::Ref(1)),
        ("self".into(), Value::Ref(0)),
    ])
}

/// [`sample`] as the sandbox sees it once copied in (as `r`), checked inside the sandbox.
const CHECK_SAMPLE: &str = "[r.n, r.big, r.list.length, 1 in r.list, r.when.getTime(), \
    r.re.flags, r.map.get('k').length, r.set.has('x'), r.error instanceof TypeError, \
    r.bytes.byteLength, r.again === r.list, r.self === r].join()";

fn sample_checked() -> Value {
    Value::String(
        "-0.5,-123456789012345678901234567890,3,false,1700000000000,gi,0,true,true,4,true,true"
            .into(),
    )
}

/// Tools: `get()` returns [`sample`] synchronously, `later()` in a promise, `echo(x)` returns
/// its argument.
struct SweepHost;

impl Host for SweepHost {
    fn call_tool(&self, call: ToolCall) {
        match call.tool.as_str() {
            "get" => call.reply.returned(Ok(sample())),
            "later" => call.reply.pending().settle(Ok(sample())),
            "echo" => {
                let first = call.args.into_iter().next().unwrap_or(Value::Undefined);
                call.reply.returned(Ok(first));
            }
            other => call
                .reply
                .returned(Err(ToolFailure::new(format!("no tool {other}")))),
        }
    }
}

fn executor() -> Executor {
    let options = Options {
        timeout_ms: 20_000,
        max_operations: 1_000_000,
        ..Options::default()
    };
    Executor::new(options, Arc::new(SweepHost))
}

async fn ready() -> Executor {
    let executor = executor();
    executor.init().await.finish().expect("init");
    executor
        .send_tools(vec!["get".into(), "later".into(), "echo".into()], || {})
        .await
        .expect("sendTools");
    executor
}

async fn run(executor: &Executor, code: &str) -> Result<RunOutput, ExecutorError> {
    executor
        .run(code.into(), RunAbort::new(), None, Tracing::default())
        .await
        .finish()
}

/// A run's outcome: `Ok(true)` for the expected output.
async fn run_checked(
    executor: &Executor,
    code: &str,
    expected: impl FnOnce(&RunOutput) -> bool,
) -> Result<bool, ExecutorError> {
    run(executor, code).await.map(|output| expected(&output))
}

fn is_memory_limit(error: &ExecutorError) -> bool {
    error.code == ErrorCode::RuntimeException
        && error.details.get("limit").and_then(|limit| limit.as_str()) == Some("memoryLimitBytes")
}

/// After a repetition, with injection off: a `READY` executor runs code; a `DIRTY` one does
/// after `cleanup()` + `init()`.
async fn expect_usable(executor: &Executor) {
    if executor.state() == ExecutorState::Dirty {
        executor
            .cleanup()
            .await
            .expect("cleanup of a dirty executor");
        executor.init().await.finish().expect("init after cleanup");
    }
    assert_eq!(executor.state(), ExecutorState::Ready);
    let output = run(executor, "[1, 2, 3].map((n) => n * 2).join()")
        .await
        .expect("the executor runs code after the failure");
    assert_eq!(output.output, Value::String("2,4,6".into()));
}

/// Runs `operation` on a ready executor once with every allocation it makes, then once for each
/// allocation N with the N-th refused: without failures it must give the expected result
/// (`Ok(true)`), with one it must fail at the memory limit and leave the executor in
/// `at_limit`. Returns how many allocations were swept.
async fn sweep<F, Fut>(name: &str, at_limit: ExecutorState, operation: F) -> i64
where
    F: Fn(Arc<Executor>) -> Fut,
    Fut: Future<Output = Result<bool, ExecutorError>>,
{
    let trace = std::env::var_os("SWEEP_TRACE").is_some();
    let executor = Arc::new(ready().await);
    arm(0, false);
    let clean = operation(Arc::clone(&executor)).await;
    let count = disarm();
    assert!(
        matches!(clean, Ok(true)),
        "{name} without failures: {clean:?}"
    );
    executor.cleanup().await.expect("cleanup");
    for persistent in [false, true] {
        let started = Instant::now();
        for fail_at in 1..=count {
            if trace {
                eprintln!("{name}: allocation {fail_at} of {count} (persistent: {persistent})");
            }
            let executor = Arc::new(ready().await);
            arm(fail_at, persistent);
            let outcome = operation(Arc::clone(&executor)).await;
            disarm();
            let state = executor.state();
            match &outcome {
                Err(error) if is_memory_limit(error) && state == at_limit => {}
                _ => panic!(
                    "{name}, allocation {fail_at} of {count} refused (persistent: {persistent}): \
                     {outcome:?} in {state}, expected the memory-limit error in {at_limit}"
                ),
            }
            expect_usable(&executor).await;
            executor.cleanup().await.expect("cleanup");
        }
        eprintln!(
            "{name}: {count} allocations swept{} in {:?}",
            if persistent { " (persistent)" } else { "" },
            started.elapsed()
        );
    }
    count
}

/// Programs that together reach the engine's main allocation paths: compiling, objects whose
/// shapes grow (the property flood that crashed the process), strings, arrays, closures, JSON,
/// exceptions, console, `final_answer`, an uncaught error described at its line, a canvas
/// drawn and read back (with the image returned), RegExp split and replace (the fast paths of
/// QuickJS patches 0610-0612), and every group of built-ins QuickJS makes on first use (patch
/// 0700), the DOMException by QuickJS itself.
const PROGRAMS: [(&str, &str); 7] = [
    (
        "property flood",
        "const o = {}; for (let i = 0; i < 64; i++) o['key' + i] = i; Object.keys(o).length",
    ),
    (
        "strings, arrays, closures and JSON",
        "const words = []; for (let i = 0; i < 8; i++) words.push(`w${i}`.repeat(3)); \
         const add = (a) => (b) => a + b; \
         JSON.stringify(JSON.parse(JSON.stringify({ words, sum: [1, 2, 3].map(add(1)) })))",
    ),
    (
        "exceptions, console and final_answer",
        "let seen = ''; try { null.x } catch (e) { seen = e.message } \
         console.log('seen', { seen }); final_answer(seen.length)",
    ),
    (
        "an uncaught error at a line",
        "const a = 1;\nthrow new RangeError('no ' + a)",
    ),
    (
        "a canvas drawn and read back",
        "const g = getCanvas(8, 8).getContext('2d'); g.fillStyle = 'red'; \
         g.fillRect(0, 0, 4, 4); Array.from(g.getImageData(0, 0, 1, 1).data).join()",
    ),
    (
        "regexp split and replace",
        "'a b  c'.split(/\\s+/).join('|') + ',' + 'A-b_C'.toLowerCase().replace(/[^a-z]/g, '') + \
         ',' + 'John Smith'.replace(/(?<f>\\w+) (?<l>\\w+)/, '$<l> $<f>')",
    ),
    (
        "built-ins made on first use",
        "let dom = ''; try { atob('%') } catch (e) { dom = e.name } \
         const m = new Map([[1, 'a']]); const s = new Set([m.size]); new WeakMap().set(m, 1); \
         new WeakSet([s]); const d = new Date(7); const u = new Uint8Array([1, 2]); \
         const v = new DataView(u.buffer); new WeakRef(u); new FinalizationRegistry(() => {}); \
         [dom, m.get(1), s.has(1), d.getTime(), v.getUint8(1), typeof Atomics].join()",
    ),
];

fn program_expected(name: &str, result: Result<RunOutput, ExecutorError>) -> bool {
    match (name, result) {
        ("property flood", Ok(output)) => output.output == Value::Number(64.0),
        ("strings, arrays, closures and JSON", Ok(output)) => {
            output.output
                == Value::String(
                    r#"{"words":["w0w0w0","w1w1w1","w2w2w2","w3w3w3","w4w4w4","w5w5w5","w6w6w6","w7w7w7"],"sum":[2,3,4]}"#
                        .into(),
                )
        }
        ("exceptions, console and final_answer", Ok(output)) => {
            output.is_final_answer
                && output.output == Value::Number(32.0)
                && output.logs == r#"seen { seen: "cannot read property 'x' of null" }"#
        }
        ("built-ins made on first use", Ok(output)) => {
            output.output == Value::String("InvalidCharacterError,a,true,7,2,object".into())
        }
        ("regexp split and replace", Ok(output)) => {
            output.output == Value::String("a|b|c,abc,Smith John".into())
        }
        ("a canvas drawn and read back", Ok(output)) => {
            output.output == Value::String("255,0,0,255".into()) && output.images.len() == 1
        }
        ("an uncaught error at a line", Err(error)) => {
            error.code == ErrorCode::RuntimeException
                && error.message.contains("RangeError: no 1")
                && error.details.get("line").and_then(|line| line.as_u64()) == Some(2)
        }
        _ => false,
    }
}

#[tokio::test]
async fn executor_creation_fails_cleanly_at_every_allocation() {
    let _serial = SERIAL.lock().await;
    let clean = executor();
    arm(0, false);
    clean.init().await.finish().expect("init");
    let count = disarm();
    clean.cleanup().await.expect("cleanup");
    for persistent in [false, true] {
        let started = Instant::now();
        for fail_at in 1..=count {
            let executor = executor();
            arm(fail_at, persistent);
            let result = executor.init().await.finish();
            disarm();
            // A context built while the heap refused memory may lack built-ins: never used.
            let error = result.expect_err("init succeeded with an allocation refused");
            assert_eq!(
                (error.code, executor.state()),
                (ErrorCode::SesInitFailed, ExecutorState::Dead),
                "allocation {fail_at} of {count}: {}",
                error.message
            );
            executor
                .init()
                .await
                .finish()
                .expect("init after a failed init");
            expect_usable(&executor).await;
            executor.cleanup().await.expect("cleanup");
        }
        eprintln!(
            "init: {count} allocations swept{} in {:?}",
            if persistent { " (persistent)" } else { "" },
            started.elapsed()
        );
    }
}

#[tokio::test]
async fn send_variables_fails_cleanly_at_every_allocation() {
    let _serial = SERIAL.lock().await;
    let executor = ready().await;
    executor
        .send_variables(vec![("r".into(), sample())])
        .await
        .expect("sendVariables");
    let copied = run(&executor, CHECK_SAMPLE).await.expect("run");
    assert_eq!(copied.output, sample_checked());
    executor.cleanup().await.expect("cleanup");
    // Nothing ran: the executor stays READY.
    sweep(
        "sendVariables",
        ExecutorState::Ready,
        |executor| async move {
            executor
                .send_variables(vec![("r".into(), sample())])
                .await
                .map(|()| true)
        },
    )
    .await;
}

#[tokio::test]
async fn tool_results_fail_cleanly_at_every_allocation() {
    let _serial = SERIAL.lock().await;
    for (name, code) in [
        (
            "sync tool result",
            format!("const r = get(); {CHECK_SAMPLE}"),
        ),
        (
            "async tool result",
            format!("const r = await later(); {CHECK_SAMPLE}"),
        ),
    ] {
        let code = Arc::new(code);
        sweep(name, ExecutorState::Dirty, |executor| {
            let code = Arc::clone(&code);
            async move {
                run_checked(&executor, &code, |output| output.output == sample_checked()).await
            }
        })
        .await;
    }
}

#[tokio::test]
async fn copies_out_fail_cleanly_at_every_allocation() {
    let _serial = SERIAL.lock().await;
    sweep(
        "tool arguments and results",
        ExecutorState::Dirty,
        |executor| async move {
            run_checked(&executor, "echo(get()).self.again.length", |output| {
                output.output == Value::Number(3.0)
            })
            .await
        },
    )
    .await;
    let built = "const o = { n: 1, s: 'two', list: [1, , 3], when: new Date(5), re: /x/g, \
        map: new Map([[1, { deep: [] }]]), set: new Set(['a']), error: new TypeError('t'), \
        bytes: new Uint8Array([1, 2]) }; o.self = o; o";
    sweep("output", ExecutorState::Dirty, |executor| async move {
        run_checked(
            &executor,
            built,
            |output| matches!(&output.output, Value::Object(entries) if entries.len() == 10),
        )
        .await
    })
    .await;
}

#[tokio::test]
async fn programs_fail_cleanly_at_every_allocation() {
    let _serial = SERIAL.lock().await;
    for (name, code) in PROGRAMS {
        sweep(name, ExecutorState::Dirty, |executor| async move {
            match run(&executor, code).await {
                Err(error) if is_memory_limit(&error) => Err(error),
                other => Ok(program_expected(name, other)),
            }
        })
        .await;
    }
}

/// Every global of the groups QuickJS makes on first use (patch 0700), read in the sandbox: what
/// a context shows once each group was made whole.
const LAZY_GLOBALS_CHECK: &str = "[Date, Map, Set, WeakMap, WeakSet, ArrayBuffer, \
    SharedArrayBuffer, Uint8ClampedArray, Int8Array, Uint8Array, Int16Array, Uint16Array, \
    Int32Array, Uint32Array, BigInt64Array, BigUint64Array, Float16Array, Float32Array, \
    Float64Array, DataView, Atomics, WeakRef, FinalizationRegistry, DOMException] \
    .map((g) => typeof g === 'function' ? `${g.name}/${g.length}/${typeof g.prototype}` : typeof g) \
    .join() + ';' + [new Float64Array([1.5])[0], new Map([[1, 2]]).get(1), \
    new DOMException('m', 'SyntaxError').code, typeof Atomics.add, \
    Object.getPrototypeOf(Int8Array.prototype).toString === Array.prototype.toString, \
    new Date(9).getTime(), typeof new WeakRef({}).deref].join()";

#[tokio::test]
async fn send_variables_that_failed_are_copied_whole_by_the_next_attempt() {
    let _serial = SERIAL.lock().await;
    // The copy makes the groups of the Dates, Maps, Sets and ArrayBuffers it builds: a first
    // attempt refused an allocation anywhere must leave them to be made by the second.
    let clean = ready().await;
    let check = format!("{CHECK_SAMPLE} + ';' + {LAZY_GLOBALS_CHECK}");
    clean
        .send_variables(vec![("r".into(), sample())])
        .await
        .expect("sendVariables");
    let expected = run(&clean, &check).await.expect("check").output;
    clean.cleanup().await.expect("cleanup");
    let executor = ready().await;
    arm(0, false);
    executor
        .send_variables(vec![("r".into(), sample())])
        .await
        .expect("sendVariables");
    let count = disarm();
    executor.cleanup().await.expect("cleanup");
    for persistent in [false, true] {
        for fail_at in 1..=count {
            let executor = ready().await;
            arm(fail_at, persistent);
            let failed = executor.send_variables(vec![("r".into(), sample())]).await;
            disarm();
            assert!(
                matches!(&failed, Err(error) if is_memory_limit(error)),
                "allocation {fail_at} of {count} (persistent: {persistent}): {failed:?}"
            );
            assert_eq!(executor.state(), ExecutorState::Ready);
            executor
                .send_variables(vec![("r".into(), sample())])
                .await
                .unwrap_or_else(|error| {
                    panic!("second attempt after allocation {fail_at} of {count}: {error:?}")
                });
            let output = run(&executor, &check).await.unwrap_or_else(|error| {
                panic!("check after allocation {fail_at} of {count}: {error:?}")
            });
            assert_eq!(
                output.output, expected,
                "after allocation {fail_at} of {count} (persistent: {persistent})"
            );
            executor.cleanup().await.expect("cleanup");
        }
    }
}

extern "C" {
    /// vendor/quickjs-patches/0700: what `JS_NewContext` adds after the base objects, the
    /// groups in `lazy_groups` made on first use.
    fn JS_AddStandardIntrinsics(ctx: *mut rquickjs::qjs::JSContext, lazy_groups: c_int) -> c_int;
}

/// A bare context (no engine) whose five groups are made on first use, as the engine's.
fn lazy_context(runtime: &rquickjs::Runtime) -> rquickjs::Context {
    let context = rquickjs::Context::base(runtime).expect("context");
    context.with(|ctx| {
        // SAFETY: a new context of the runtime, locked by `with`.
        let added = unsafe { JS_AddStandardIntrinsics(ctx.as_raw().as_ptr(), 0b1_1111) };
        assert_eq!(added, 0);
    });
    context
}

fn eval_text(context: &rquickjs::Context, code: &str) -> Result<String, String> {
    context.with(|ctx| {
        ctx.eval::<String, _>(code)
            .map_err(|_| format!("{:?}", ctx.catch()))
    })
}

#[tokio::test]
async fn a_built_in_whose_first_use_failed_is_made_by_the_next_use() {
    let _serial = SERIAL.lock().await;
    // First uses that make something: each lazy group (by a global and by QuickJS creating an
    // object of it), a built-in method (made on first use upstream: patch 0105) and an accessor
    // (patch 0730). Each of their allocations is refused in turn; the next use in the same
    // context must then see exactly what a context whose first use succeeded sees.
    let first_uses = [
        "typeof Date",
        "typeof Map",
        "typeof Float64Array",
        "typeof WeakRef",
        "typeof DOMException",
        "String(new Set([1]).size)",
        "String(new Uint8Array(2).length)",
        "(() => { try { atob('%') } catch (e) { return e.name } })()",
        "typeof Array.prototype.flatMap",
        "typeof Object.getOwnPropertyDescriptor(RegExp.prototype, 'flags').get",
        "String(Symbol('d').description)",
    ];
    let check = format!(
        "{LAZY_GLOBALS_CHECK} + ';' + [typeof Array.prototype.flatMap, /a/g.flags, \
         Symbol('d').description, Object.getOwnPropertyDescriptor(RegExp.prototype, 'flags') \
         .get.name].join()"
    );
    for first_use in first_uses {
        let runtime = rquickjs::Runtime::new().unwrap();
        let context = lazy_context(&runtime);
        let expected = eval_text(&context, first_use).expect("first use");
        let expected_check = eval_text(&context, &check).expect("check");
        let runtime = rquickjs::Runtime::new().unwrap();
        let context = lazy_context(&runtime);
        arm(0, false);
        eval_text(&context, first_use).expect("first use");
        let count = disarm();
        for persistent in [false, true] {
            for fail_at in 1..=count {
                let runtime = rquickjs::Runtime::new().unwrap();
                let context = lazy_context(&runtime);
                arm(fail_at, persistent);
                // Whatever it answers (the program may catch the error), the engine fails such
                // a run at the memory limit.
                let _ = eval_text(&context, first_use);
                disarm();
                let what = format!(
                    "{first_use}, allocation {fail_at} of {count} refused (persistent: {persistent})"
                );
                assert_eq!(
                    eval_text(&context, first_use).as_ref(),
                    Ok(&expected),
                    "{what}"
                );
                assert_eq!(
                    eval_text(&context, &check).as_ref(),
                    Ok(&expected_check),
                    "{what}"
                );
            }
        }
        eprintln!("{first_use}: {count} allocations swept");
    }
}

#[tokio::test]
async fn json_stringify_frees_the_element_it_read_when_an_allocation_fails() {
    let _serial = SERIAL.lock().await;
    // Strings made by the program that nothing else holds: a reference lost on a failure path
    // keeps a block alive for good (vendor/quickjs-patches/0106).
    let code = "JSON.stringify([0, 1, 2, 3].map((n) => 'item ' + n + '.'.repeat(40))).length + ''";
    let runtime = rquickjs::Runtime::new().unwrap();
    let context = lazy_context(&runtime);
    let expected = eval_text(&context, code).expect("a run without failures");
    arm(0, false);
    eval_text(&context, code).expect("a counted run");
    let count = disarm();
    let live_blocks = || {
        runtime.run_gc();
        runtime.memory_usage().malloc_count
    };
    let mut refused = 0;
    for fail_at in 1..=count {
        // Twice: the first attempt may make what a failure makes once (an error's shape); the
        // second may add nothing.
        let attempt = || {
            arm(fail_at, false);
            let answer = eval_text(&context, code);
            disarm();
            answer
        };
        let failed = attempt() != Ok(expected.clone());
        let before = live_blocks();
        let _ = attempt();
        assert_eq!(
            live_blocks(),
            before,
            "allocation {fail_at} of {count} refused: blocks outlived the attempt"
        );
        refused += usize::from(failed);
    }
    assert!(refused > 0, "no refused allocation failed the code");
    assert_eq!(eval_text(&context, code).as_ref(), Ok(&expected));
}
