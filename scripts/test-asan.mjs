#!/usr/bin/env node
// `npm run test:asan`: the Rust test suite, and the re-entrancy fuzz target's in-process driver
// (fuzz/tests/first_use.rs), built with AddressSanitizer: the Rust code by rustc
// (`-Zsanitizer=address`), QuickJS's C code by the C compiler (`-fsanitize=address`, which
// vendor/rquickjs-sys/build.rs adds when cargo builds for an ASan target), so that a
// use-after-free, an overflow or a double free in QuickJS or in our unsafe code fails the run
// with the sanitizer's report instead of passing by luck. LeakSanitizer is on too.
//
// Only a stable toolchain is installed: `RUSTC_BOOTSTRAP=1` unlocks the unstable
// `-Zsanitizer` flag on it, as for the fuzz targets (docs/security.md "Sanitizers" says why that is
// acceptable here). Linux x64 only (the sanitizer runtime rustc ships). The build goes to
// target/asan, so it never disturbs the normal one; `--no-fuzz` skips the fuzz driver.
import { spawnSync } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)))
const TARGET = 'x86_64-unknown-linux-gnu'

if (process.platform !== 'linux' || process.arch !== 'x64') {
  console.error(`test:asan runs on Linux x64 only (this is ${process.platform}-${process.arch})`)
  process.exit(1)
}

const env = {
  ...process.env,
  RUSTC_BOOTSTRAP: '1',
  // Frame pointers give the sanitizer's reports whole stacks at no cost worth counting.
  RUSTFLAGS: '-Zsanitizer=address -Cforce-frame-pointers=yes',
  // QuickJS's own frames: the C compiler's side of the same.
  CFLAGS: '-fno-omit-frame-pointer',
  // abort_on_error: a report ends the test binary with a failure, whatever thread it came from.
  // Stack use-after-return is off: its fake stacks live on the heap, where QuickJS's stack limit
  // (maxStackBytes, measured on the real stack) cannot see them.
  ASAN_OPTIONS: [
    'abort_on_error=1',
    // The memory-limit tests ask for what cannot be had, and expect NULL, as from malloc.
    'allocator_may_return_null=1',
    'detect_leaks=1',
    'detect_stack_use_after_return=0',
    'strict_string_checks=1',
    'check_initialization_order=1',
    process.env.ASAN_OPTIONS ?? '',
  ]
    .filter(Boolean)
    .join(':'),
  // Leaks made on purpose by tests that prove them, and nothing else.
  LSAN_OPTIONS: [`suppressions=${path.join(root, 'scripts', 'lsan-suppressions.txt')}`, process.env.LSAN_OPTIONS ?? '']
    .filter(Boolean)
    .join(':'),
  // Timing assertions of the deadline tests allow for the sanitizer's slowdown.
  SES_TEST_SLOW: '8',
}

// `--target` keeps the sanitizer out of build scripts and proc macros, which the compiler itself
// loads (and which would need its runtime first in the process).
const common = ['--target', TARGET, '--target-dir', path.join(root, 'target', 'asan')]
const steps = [['test', ...common]]
if (!process.argv.includes('--no-fuzz')) {
  steps.push(['test', '--manifest-path', path.join(root, 'fuzz', 'Cargo.toml'), ...common, '--lib', '--test', 'first_use'])
}

for (const args of steps) {
  console.log(`\n$ cargo ${args.join(' ')}`)
  const started = Date.now()
  const result = spawnSync('cargo', args, { cwd: root, env, stdio: 'inherit' })
  console.log(`(${Math.round((Date.now() - started) / 1000)} s)`)
  if (result.status !== 0) process.exit(result.status ?? 1)
}
