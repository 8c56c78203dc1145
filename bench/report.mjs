// bench/RESULTS.md from the results of one `npm run bench`.

const OURS = 'ses-executor'
const WORKLOADS = ['W1', 'W2', 'W3', 'W4', 'W5', 'W6', 'W7', 'W8', 'W9', 'W10', 'W11', 'W12', 'W13', 'W14', 'W15']

const DEFINITIONS = {
  W1: 'create: a new executor ready to run, tools installed (one-time global setup excluded)',
  W2: 'trivial run: `1 + 1`, 2 back on the host',
  W3: 'async tool: the guest awaits a host `async x => x + 1` 1,000 times (per call)',
  W4: 'sync tool: the guest calls a host `x => x + 1` 10,000 times (per call)',
  W5: 'compute: a guest loop summing 1..3e6',
  W6: 'event-loop lag: max gap of a host 1 ms interval while the guest spins 500 ms',
  W7: 'memory: RSS each live executor adds, with 200 live after a first one (after GC); the first one\'s own cost beside it',
  W8: 'kill: time past a 100 ms deadline until `while (true) {}` returns control',
  W9: 'agent step: 30 lines, 3 tool calls, console output, final answer (`sendVariables` + `run`)',
  W10: 'scaling: 2 / 8 / 32 executors running W5 at once, throughput relative to one',
  W11: 'many live executors: 10,000 created (fewer where noted), each runs `1 + 1`; RSS and OS threads with all live',
  W12: 'throughput of W9 on 1,000 executors at once, relative to one executor running it alone ("in turn": relative to the same 1,000 executors stepping one at a time, alternating with the rounds at once, where every heap is as cold in the caches as at once)',
  W13: 'a probe among spinners: K executors compute without pause (K = 4 × cores, and 100) while a probe executor runs `1 + 1` every 20 ms for 3 s, from 1 s after the spinners started; the probe\'s p50 / p99 latency, and how fairly the spinners shared the CPU (the most CPU time one spinner got over the least)',
  W14: 'durable sessions: the W9 session after 20 and 200 steps, `snapshot()` (median ms), `restore` into a fresh executor with its tools sent again (median ms) and the snapshot\'s size; "journal": a 20-step session whose agent defined a function, which no checkpoint holds, restored by replaying its runs',
  W15: 'hibernated sessions: 100,000 sessions that each ran W9 once, kept by a session pool of 1,000 live executors over an in-memory store (compressed) that keeps 16 places spare (idle sessions hibernated in the background); RSS with all held, store bytes per session, and a W9 step on a hibernated session (restored) against one on a live session: p50 / p99',
}

/** Number with 3 significant digits at most (never exponent notation). */
export function num(value) {
  if (value == null || Number.isNaN(value)) return '–'
  const abs = Math.abs(value)
  const digits = abs >= 100 ? 0 : abs >= 10 ? 1 : abs >= 1 ? 2 : 3
  return value.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: 0 })
}

/** A duration in µs or ms shown in the unit that reads best. */
export function quantity(value, unit) {
  if (unit === 'µs' && value >= 10_000_000) return `${num(value / 1_000_000)} s`
  if (unit === 'µs' && value >= 10_000) return `${num(value / 1_000)} ms`
  if (unit === 'ms' && value >= 10_000) return `${num(value / 1_000)} s`
  if (unit === 'ms over the deadline') return `${num(value)} ms`
  return `${num(value)} ${unit}`
}

/** W14's figures for one session: snapshot and restore medians, and the snapshot's size. */
function session(figures) {
  return `${num(figures.snapshotMs.median)} / ${num(figures.restoreMs.median)} ms, ${quantity(figures.bytes / 1024, 'KiB')}`
}

function cell(workload) {
  if (!workload) return '–'
  if (workload.unsupported) return 'n/a¹'
  if (workload.error) return 'failed²'
  if (workload.checkpointed) {
    const steps = Object.entries(workload.checkpointed).map(([n, figures]) => `${n}: ${session(figures)}`)
    const journal = workload.journal ? [`journal ${workload.journal.steps}: ${session(workload.journal)}`] : []
    return [...steps, ...journal].join('; ')
  }
  if (workload.probe) {
    return Object.entries(workload.probe)
      .map(([k, p]) => `${k}: ${num(p.p50)} / ${num(p.p99)} ms, fair ${num(workload.fairness[k])}×`)
      .join('; ')
  }
  if (workload.relative) {
    const inTurn = workload.inTurn ?? {}
    return Object.entries(workload.relative)
      .map(([n, r]) => `${n}: ${num(r)}×` + (inTurn[n] == null ? '' : ` (${num(inTurn[n])}× in turn)`))
      .join(', ')
  }
  if (workload.unit === 'KiB') {
    const first = workload.firstKiB == null ? '' : `, first ${quantity(workload.firstKiB, 'KiB')}`
    return `${quantity(workload.median, 'KiB')} (n=${workload.count}${first})`
  }
  if (workload.sessions != null) {
    return (
      `${quantity(workload.median, 'ms')} / ${quantity(workload.p99, 'ms')} p99 hibernated, ` +
      `${quantity(workload.live.median, 'ms')} live; ${quantity(workload.heldMiB, 'MiB')} (n=${num(workload.sessions)})`
    )
  }
  if (workload.perExecutorKiB != null) {
    const threads = workload.threads == null ? '' : `, ${num(workload.threads)} threads`
    return `${quantity(workload.median, 'MiB')}${threads} (n=${num(workload.count)})`
  }
  if (workload.samples === 1) return quantity(workload.median, workload.unit)
  const floor = workload.floorMs == null ? '' : ` (floor ${quantity(workload.floorMs, 'ms')})`
  return `${quantity(workload.median, workload.unit)} / ${quantity(workload.p95, workload.unit)}${floor}`
}

function noise(peer) {
  const values = Object.values(peer.workloads ?? {})
    .map((w) => w.otherCpuPct)
    .filter((v) => typeof v === 'number')
  if (values.length === 0) return '–'
  const mean = values.reduce((a, b) => a + b, 0) / values.length
  return `${num(mean)} % (max ${num(Math.max(...values))} %)`
}

const median = (peer, w) => peer?.workloads?.[w]?.median
const usable = (peer, w) => peer && !peer.skipped && typeof median(peer, w) === 'number'

/** The isolating peer (separate heap + a deadline for sync code) with the best figure. */
function bestIsolating(peers, w) {
  const candidates = peers.filter((p) => p.peer.id !== OURS && p.peer.isolating)
  if (w === 'W10' || w === 'W12') {
    const at = (p) => lastRelative(p.workloads?.[w])
    const ok = candidates.filter((p) => at(p) != null)
    return ok.sort((a, b) => at(b) - at(a))[0]
  }
  return candidates.filter((p) => usable(p, w)).sort((a, b) => median(a, w) - median(b, w))[0]
}

function lastRelative(w10) {
  const entries = Object.entries(w10?.relative ?? {})
  return entries.length ? entries[entries.length - 1][1] : null
}

function targets(results) {
  const peers = results.peers
  const ours = peers.find((p) => p.peer.id === OURS)
  const qjs = peers.find((p) => p.peer.id === 'quickjs-emscripten')
  const cores = results.machine.cores
  const rows = []
  const verdict = (ok) => (ok == null ? 'not measured' : ok ? '**pass**' : '**miss**')
  const absolute = (w, limit, unit) => {
    const value = usable(ours, w) ? median(ours, w) : null
    const best = bestIsolating(peers, w)
    rows.push([
      `${w} ≤ ${num(limit)} ${unit} (median)`,
      value == null ? '–' : quantity(value, ours.workloads[w].unit),
      best ? `${quantity(median(best, w), best.workloads[w].unit)} (${best.peer.id})` : '–',
      verdict(value == null ? null : value <= limit),
    ])
  }
  absolute('W1', 250, 'µs')
  absolute('W2', 15, 'µs')
  absolute('W3', 10, 'µs/call')
  absolute('W4', 5, 'µs/call')
  {
    const ok = usable(ours, 'W5') && usable(qjs, 'W5') ? median(ours, 'W5') * 2 <= median(qjs, 'W5') : null
    rows.push([
      'W5 ≥ 2× faster than quickjs-emscripten',
      usable(ours, 'W5') ? quantity(median(ours, 'W5'), 'ms') : '–',
      usable(qjs, 'W5') ? `${quantity(median(qjs, 'W5'), 'ms')} (quickjs-emscripten)` : '–',
      verdict(ok),
    ])
  }
  {
    const g = results.guard
    const ok = g?.overheadPct == null ? null : g.overheadPct <= 10
    rows.push([
      'W5 guard overhead ≤ 10 %',
      g?.overheadPct == null ? '–' : `${num(g.overheadPct)} %${g.profile === 'debug' ? ' (debug build)' : ''}`,
      '–',
      verdict(ok),
    ])
  }
  absolute('W6', 2, 'ms')
  {
    const ok = usable(ours, 'W7') && usable(qjs, 'W7') ? median(ours, 'W7') <= median(qjs, 'W7') : null
    rows.push([
      'W7 ≤ quickjs-emscripten per instance',
      usable(ours, 'W7') ? quantity(median(ours, 'W7'), 'KiB') : '–',
      usable(qjs, 'W7') ? `${quantity(median(qjs, 'W7'), 'KiB')} (quickjs-emscripten)` : '–',
      verdict(ok),
    ])
  }
  absolute('W8', 2, 'ms')
  {
    // "Scales with cores": n executors give at least 80 % of min(n, cores) times one's throughput.
    const rel = ours?.workloads?.W10?.relative
    const ok = rel ? Object.entries(rel).every(([n, r]) => r >= 0.8 * Math.min(Number(n), cores)) : null
    const best = bestIsolating(peers, 'W10')
    rows.push([
      `W10 scales with cores (≥ 0.8 × min(n, ${cores}))`,
      cell(ours?.workloads?.W10),
      best ? `${cell(best.workloads.W10)} (${best.peer.id})` : '–',
      verdict(ok),
    ])
  }
  // Many live executors (W7, W11, W12).
  {
    const w7 = usable(ours, 'W7') ? median(ours, 'W7') : null
    const best = bestIsolating(peers, 'W7')
    rows.push([
      'W7 ≤ 100 KiB per live executor',
      w7 == null ? '–' : quantity(w7, 'KiB'),
      best ? `${quantity(median(best, 'W7'), 'KiB')} (${best.peer.id})` : '–',
      verdict(w7 == null ? null : w7 <= 100),
    ])
  }
  {
    const w11 = ours?.workloads?.W11
    const ok =
      w11?.perExecutorKiB == null || w11.addedThreads == null
        ? null
        : w11.addedThreads <= cores + 4 && w11.median <= 1024 && w11.count >= 10_000
    rows.push([
      `W11: 10,000 live executors on ≤ cores + 4 (${cores + 4}) more threads, ≤ 1 GiB RSS`,
      w11?.perExecutorKiB == null ? '–' : `${quantity(w11.median, 'MiB')}, +${num(w11.addedThreads)} threads (n=${num(w11.count)})`,
      '–',
      verdict(ok),
    ])
  }
  {
    const rel = lastRelative(ours?.workloads?.W12)
    const best = bestIsolating(peers, 'W12')
    rows.push([
      `W12 approaches the cores (≥ 0.8 × ${cores})`,
      cell(ours?.workloads?.W12),
      best ? `${cell(best.workloads.W12)} (${best.peer.id})` : '–',
      verdict(rel == null ? null : rel >= 0.8 * cores),
    ])
  }
  // Durable sessions (W14): the W9 session after 20 and 200 steps.
  {
    const w14 = ours?.workloads?.W14?.checkpointed
    const [few, many] = Object.values(w14 ?? {})
    const row = (label, figures, value, limit, shown) =>
      rows.push([label, figures ? shown(value(figures)) : '–', '–', verdict(figures ? value(figures) <= limit : null)])
    const ms = (value) => `${num(value)} ms`
    row('W14 snapshot ≤ 2 ms (median, 20 steps)', few, (f) => f.snapshotMs.median, 2, ms)
    row('W14 restore ≤ 5 ms (median, 20 steps)', few, (f) => f.restoreMs.median, 5, ms)
    row('W14 restore ≤ 20 ms (median, 200 steps)', many, (f) => f.restoreMs.median, 20, ms)
    row('W14 snapshot ≤ 64 KiB (20 steps)', few, (f) => f.bytes / 1024, 64, (kib) => quantity(kib, 'KiB'))
  }
  // Many sessions on few live executors.
  {
    const w15 = ours?.workloads?.W15
    const measured = w15?.sessions != null
    const ok = measured ? w15.sessions >= 100_000 && w15.heldMiB <= 1024 && w15.median <= 5 && w15.p99 <= 20 : null
    rows.push([
      'W15: 100,000 sessions in ≤ 1 GiB RSS (store in memory), a step on a hibernated one p50 ≤ 5 ms and p99 ≤ 20 ms',
      measured
        ? `${quantity(w15.heldMiB, 'MiB')}, ${quantity(w15.median, 'ms')} / ${quantity(w15.p99, 'ms')} (n=${num(w15.sessions)})`
        : '–',
      '–',
      verdict(ok),
    ])
  }
  // A trivial run among spinners, and how evenly the spinners share the threads.
  {
    const w13 = ours?.workloads?.W13
    const ivm = peers.find((p) => p.peer.id === 'isolated-vm')?.workloads?.W13
    const probe = Object.entries(w13?.probe ?? {})
    const few = probe.find(([k]) => Number(k) !== 100)
    const many = probe.find(([k]) => Number(k) === 100)
    const fair = Object.values(w13?.fairness ?? {})
    const ok = few && many && fair.length ? few[1].p99 <= 10 && many[1].p99 <= 20 && fair.every((f) => f <= 1.5) : null
    rows.push([
      'W13 probe p99 ≤ 10 ms among 4 × cores spinners, ≤ 20 ms among 100; spinners\' CPU within 1.5×',
      cell(w13),
      ivm?.probe ? `${cell(ivm)} (isolated-vm)` : '–',
      verdict(ok),
    ])
  }
  // The stricter per-step targets, with the machine's floor where one applies.
  const floors = results.floors?.skipped ? undefined : results.floors
  const strict = (label, w, ok, best, reference) => {
    rows.push([
      reference ? `${label}; ${reference}` : label,
      usable(ours, w) ? quantity(median(ours, w), ours.workloads[w].unit) : '–',
      best ? `${quantity(median(best, w), best.workloads[w].unit)} (${best.peer.id})` : '–',
      verdict(usable(ours, w) ? ok(median(ours, w)) : null),
    ])
  }
  const under = (limit) => (value) => value <= limit
  strict('W1 ≤ 250 µs', 'W1', under(250), bestIsolating(peers, 'W1'))
  {
    // Below every isolating peer too: the best of them sets the limit when it is under 10 µs.
    const best = bestIsolating(peers, 'W2')
    strict(
      'W2 ≤ 10 µs and below every isolating peer',
      'W2',
      under(Math.min(10, best ? median(best, 'W2') : 10)),
      best,
      floors && `a round trip between Node's thread and a worker through Node's own messages: ${num(floors.asyncCallUs)} µs`,
    )
  }
  strict(
    'W3 ≤ 8 µs/call',
    'W3',
    under(8),
    bestIsolating(peers, 'W3'),
    floors && `a worker's async round trip through Node's event loop: ${num(floors.asyncCallUs)} µs`,
  )
  strict(
    'W4 ≤ 3 µs/call',
    'W4',
    under(3),
    bestIsolating(peers, 'W4'),
    floors && `a worker's sync round trip through Node's event loop: ${num(floors.syncCallUs)} µs`,
  )
  {
    const ivm = peers.find((p) => p.peer.id === 'isolated-vm')
    const limit = Math.min(1, usable(ivm, 'W6') ? median(ivm, 'W6') : 1)
    const floor = ours?.workloads?.W6?.floorMs
    strict(
      'W6 ≤ 1 ms and below isolated-vm',
      'W6',
      under(limit),
      bestIsolating(peers, 'W6'),
      floor != null && `machine floor (a bare worker spinning, alternating with ours): ${num(floor)} ms`,
    )
  }
  strict('W8 ≤ 0.5 ms', 'W8', under(0.5), bestIsolating(peers, 'W8'))
  strict(
    'W9 ≤ half of quickjs-emscripten',
    'W9',
    (value) => usable(qjs, 'W9') && value * 2 <= median(qjs, 'W9'),
    usable(qjs, 'W9') ? qjs : undefined,
  )
  return rows
}

/** The machine's floors (bench/floors.mjs), for RESULTS.md. */
function floorsSection(floors) {
  if (!floors) return []
  if (floors.skipped) return ['## Floors of this machine', '', `Not measured: ${floors.skipped}.`, '']
  return [
    '## Floors of this machine (no sandbox)',
    '',
    '`bench/floors.mjs` runs, in a child process after the peers, what any design that runs guest ' +
      "code off Node's thread meets on this machine, with Node's own primitives and no sandbox: " +
      `medians of ${num(floors.samples)} samples.`,
    '',
    table(
      ['floor', 'figure', 'what it bounds'],
      [
        [
          "W6's spin in a worker thread: Node's longest 1 ms-interval gap",
          quantity(floors.spinGapMs, 'ms'),
          "W6: nothing shares Node's thread, so the gap is the machine's scheduling of it",
        ],
        [
          "a worker asks Node's event loop and blocks for the answer (message + `Atomics.wait`)",
          quantity(floors.syncCallUs, 'µs/call'),
          "W4's hop onto Node's thread and back",
        ],
        [
          "a worker asks Node's event loop and awaits the answer (messages both ways)",
          quantity(floors.asyncCallUs, 'µs/call'),
          "W3's hop onto Node's thread and back",
        ],
      ],
    ),
    '',
  ]
}

/** W15's own table: memory, and what a step on a hibernated session costs, part by part. */
function w15Section(peers) {
  const measured = peers.filter((p) => p.workloads?.W15?.sessions != null)
  if (measured.length === 0) return []
  return [
    '## W15: hibernated sessions',
    '',
    'One process of its own: every session runs the W9 step once through a `SessionPool` of ' +
      '`maxLive` executors over a `MemoryStore({ compress: true })`, eight steps in flight; RSS is ' +
      'read with all of them held (after GC). Then, one at a time, a W9 step on a hibernated ' +
      'session (the oldest ones: the pool restores it, and hibernates the least recently used ' +
      'in the background to keep `spare` places free) alternates with one on a live session ' +
      '(stepped `maxLive` / 4 rounds before). ' +
      'A miss splits into hibernating another session (snapshot, compress, store, cleanup: in the background), ' +
      'reading the store (inflate), and restoring (`SESExecutor.restore`, which replays the ' +
      "session's journal, and `sendTools`); the rest of the step is the W9 step itself. The last " +
      "column splits a miss (means): `snapshot()` + the store's save (deflate) + cleanup, the " +
      "store's read (inflate), `SESExecutor.restore` + `sendTools`. RSS after the steps is read " +
      'at once and again at rest (6 s later: the engine returns freed heap pages to the system once frees pause).',
    '',
    table(
      ['peer', 'sessions', 'live (spare)', 'RSS before', 'RSS held', 'RSS after the steps / at rest', 'store / session', 'snapshot / session', 'fill', 'hibernated step p50 / p95 / p99', 'live step p50 / p99', 'miss: snapshot + save + cleanup; read; restore + tools'],
      measured.map((p) => {
        const w = p.workloads.W15
        return [
          p.peer.id,
          num(w.sessions),
          w.spare === undefined ? num(w.maxLive) : `${num(w.maxLive)} (${num(w.spare)})`,
          quantity(w.startMiB, 'MiB'),
          quantity(w.heldMiB, 'MiB'),
          w.restMiB === undefined ? quantity(w.endMiB, 'MiB') : `${quantity(w.endMiB, 'MiB')} / ${quantity(w.restMiB, 'MiB')}`,
          `${num(w.storeBytesPerSession)} B`,
          `${num(w.snapshotBytesPerSession)} B`,
          quantity(w.fillMs, 'ms'),
          `${quantity(w.median, 'ms')} / ${quantity(w.p95, 'ms')} / ${quantity(w.p99, 'ms')}`,
          `${quantity(w.live.median, 'ms')} / ${quantity(w.live.p99, 'ms')}`,
          `${quantity(w.miss.snapshotMs, 'ms')} + ${quantity(w.miss.saveMs, 'ms')} + ${quantity(w.miss.evictMs - w.miss.snapshotMs - w.miss.saveMs, 'ms')}; ` +
            `${quantity(w.miss.loadMs, 'ms')}; ${quantity(w.miss.restoreMs - w.miss.toolsMs, 'ms')} + ${quantity(w.miss.toolsMs, 'ms')}`,
        ]
      }),
    ),
    '',
  ]
}

function table(header, rows) {
  return [
    `| ${header.join(' | ')} |`,
    `|${header.map(() => '---').join('|')}|`,
    ...rows.map((r) => `| ${r.join(' | ')} |`),
  ].join('\n')
}

/**
 * The part of RESULTS.md that docs/performance.md quotes between its bench markers; `base` is the
 * path from the quoting page to the repository's root.
 */
export function renderSummary(results, base = '') {
  const { machine } = results
  return [
    `Measured by \`npm run bench\` on ${machine.cpu}, ${machine.cores} cores, Node ${machine.node}, ` +
      `${machine.date.slice(0, 10)} (median / p95; full notes in [bench/RESULTS.md](${base}bench/RESULTS.md)):`,
    ...(results.note ? ['', `**Note on this run:** ${results.note}`] : []),
    '',
    mainTable(results),
    '',
    table(['target', 'this package', 'best isolating peer', 'verdict'], targets(results)),
  ].join('\n')
}

function mainTable({ peers }) {
  const header = ['peer', 'isolation', 'setup (once)', ...WORKLOADS, "others' CPU"]
  const rows = peers.map((p) => {
    const name = `${p.peer.name ?? p.peer.id}${p.version ? ` ${p.version}` : ''}`
    if (p.skipped) return [name, p.peer.isolation ?? '–', `skipped³`, ...WORKLOADS.map(() => '–'), '–']
    return [
      name,
      p.peer.isolation,
      p.setupMs == null ? '–' : quantity(p.setupMs, 'ms'),
      ...WORKLOADS.map((w) => cell(p.workloads[w])),
      noise(p),
    ]
  })
  return table(header, rows)
}

export function render(results) {
  const { machine, peers, guard } = results
  const lines = []
  lines.push(`# Benchmark results${results.quick ? ' (--quick smoke run: not figures to quote)' : ''}`)
  lines.push('')
  lines.push(
    `\`npm run bench${results.quick ? ' -- --quick' : ''}\` on ${machine.cpu}, ${machine.cores} cores, ` +
      `${machine.memoryGiB} GiB, ${machine.os}, Node ${machine.node}, ${machine.date} ` +
      `(the whole run took ${num(results.wallSeconds)} s).`,
  )
  lines.push('')
  if (results.note) {
    lines.push(`**Note on this run:** ${results.note}`)
    lines.push('')
  }
  lines.push(
    'Cells are median / p95 (a single figure where one sample is the measurement). Each peer ran in ' +
      'its own child process, one after another; every workload first checked its result. ' +
      '"Others\' CPU" is the share of the whole machine that other processes used while the ' +
      "peer's workloads ran (/proc/stat minus the child's own /proc/self/stat): mean over " +
      'workloads and the worst one. Compare rows as ratios within this run; absolute figures ' +
      'move between runs.',
  )
  lines.push('')
  lines.push(mainTable(results))
  lines.push('')
  const notes = []
  for (const p of peers) {
    if (p.skipped) notes.push(`- ³ ${p.peer.id}: ${p.skipped}`)
    for (const [w, r] of Object.entries(p.workloads ?? {})) {
      if (r.unsupported) notes.push(`- ¹ ${p.peer.id} ${w}: ${r.unsupported}`)
      if (r.error) notes.push(`- ² ${p.peer.id} ${w} failed: ${r.error.split('\n')[0]}`)
    }
  }
  if (notes.length > 0) {
    lines.push('Not measured:')
    lines.push('')
    lines.push(...notes)
    lines.push('')
  }

  lines.push(...floorsSection(results.floors))

  lines.push('## Targets: this package against the best isolating peer')
  lines.push('')
  lines.push(
    '"Isolating" peers keep a heap of their own and can stop synchronous guest code at a deadline ' +
      '(isolated-vm, quickjs-emscripten). ses and node:vm share Node\'s heap and thread; Pyodide has ' +
      'its own heap but no deadline for synchronous Python.',
  )
  lines.push('')
  lines.push(table(['target', 'this package', 'best isolating peer', 'verdict'], targets(results)))
  lines.push('')
  lines.push(
    'W10 reads against the cores of this machine. While other processes compete for the cores, ' +
      'more threads win a larger share of them, so n executors on their own threads can show more ' +
      'than `cores` × one executor; peers on Node\'s thread cannot overlap at all and stay near 1×.',
  )
  lines.push('')

  lines.push('## W11: many live executors')
  lines.push('')
  lines.push(
    'Each peer runs W11 in a fresh process of its own (what its other workloads left in the heap ' +
      'and the allocator would otherwise count as the executors\' own), ' +
      'creates the executors one after another, has every one run `1 + 1` (all at once), ' +
      'reads RSS and its OS threads with all of them live (after GC), disposes of them all and ' +
      'reads RSS again after a pause. "Threads" counts every thread of the process (Node has about ' +
      'a dozen of its own); "added" those that appeared during the workload.',
  )
  lines.push('')
  lines.push(
    table(
      ['peer', 'executors', 'RSS before', 'RSS live', 'per executor', 'threads (added)', 'create all', 'run all', 'RSS after disposal'],
      peers
        .filter((p) => p.workloads?.W11?.perExecutorKiB != null)
        .map((p) => {
          const w = p.workloads.W11
          return [
            p.peer.id,
            num(w.count),
            quantity(w.startMiB, 'MiB'),
            quantity(w.median, 'MiB'),
            quantity(w.perExecutorKiB, 'KiB'),
            w.threads == null ? '–' : `${num(w.threads)} (+${num(w.addedThreads)})`,
            quantity(w.createMs, 'ms'),
            quantity(w.runMs, 'ms'),
            `${quantity(w.afterCleanupMiB, 'MiB')} (${num(w.settleMs / 1000)} s later)`,
          ]
        }),
    ),
  )
  lines.push('')

  lines.push(...w15Section(peers))

  lines.push('## W5 guard overhead')
  lines.push('')
  if (guard?.skipped) {
    lines.push(`Not measured: ${guard.skipped}.`)
  } else if (guard) {
    lines.push(
      `\`cargo run --release --features bench-internals --example guard_overhead\` (${guard.profile} build): our engine runs the ` +
        `W5 loop (1..${guard.n}) as agent code with the loop guard (patch 0600) on, then with it off, ` +
        `alternating, ${guard.samples} runs each: guarded ${num(guard.guardedMs.median)} ms ` +
        `(p95 ${num(guard.guardedMs.p95)}), unguarded ${num(guard.unguardedMs.median)} ms ` +
        `(p95 ${num(guard.unguardedMs.p95)}): overhead **${num(guard.overheadPct)} %** of the ` +
        `unguarded median.${guard.note ? ` (${guard.note})` : ''}`,
    )
    lines.push('')
    lines.push(
      'Method: the example links the crate and drives the real engine (`Engine::start`, `run`); the ' +
        'only difference between the two series is the engine\'s benchmark-only switch ' +
        '`engine::loop_guards_for_benchmarks` (`#[doc(hidden)]` Rust API that exists only with the ' +
        '`bench-internals` cargo feature, which the addon is never built with), which leaves out the loop-guard opcode ' +
        'QuickJS otherwise compiles at the start of every loop body (patch 0600). Both series check the sum and ' +
        'the operations counted (n guarded, 0 unguarded).',
    )
  }
  lines.push('')
  lines.push('## Workloads')
  lines.push('')
  for (const w of WORKLOADS) lines.push(`- **${w}** ${DEFINITIONS[w]}`)
  lines.push('')
  lines.push(
    'Sources: `bench/workloads.mjs` (guest code and tools, the same for every JavaScript peer; Python ' +
      'equivalents for Pyodide), `bench/adapters/*.mjs` (one per peer), `bench/child.mjs` (the ' +
      'workloads, timed with tinybench where a sample is one call; W6/W7/W8/W10/W11/W12/W13 time their own ' +
      'events), `examples/guard_overhead.rs`.',
  )
  lines.push('')
  return lines.join('\n')
}
