// The guest code and host tools of W1..W12, shared by every peer so that each runs
// exactly the same program. JavaScript peers receive the same source strings; the Pyodide
// executor receives the Python equivalents (it runs Python, not JavaScript).

/** Loop bound of W5; the guest sums 1..N. */
export const W5_FULL_N = 3_000_000
/** Calls per sample of W3 and W4. */
export const W3_CALLS = 1_000
export const W4_CALLS = 10_000
/** How long W6's guest spins synchronously. */
export const W6_SPIN_MS = 500
/**
 * W6's samples per peer, each with a floor sample beside it: the longest gap of a 500 ms spin
 * moves by milliseconds from one spin to the next on these virtual machines.
 */
export const W6_REPEATS = 9
/** W8's deadline. */
export const W8_TIMEOUT_MS = 100
/** Live executors of W11, and of W12. */
export const W11_EXECUTORS = 10_000
export const W12_EXECUTORS = 1_000
/** How long after W11's cleanup its RSS is read again. */
export const W11_SETTLE_MS = 15_000
/**
 * W15: sessions that each ran the W9 step once, kept by a session pool with this many live
 * executors; then steps on hibernated sessions (each restores one, hibernating another) and on
 * live ones, one at a time.
 */
export const W15_SESSIONS = 100_000
export const W15_MAX_LIVE = 1_000
export const W15_SAMPLES = 2_000
/** W15's places kept free by hibernating idle sessions in the background (`spare`). */
export const W15_SPARE = 16
/**
 * W13, a probe among spinners: spinners per core (4 × the engine pool's threads,
 * which are the cores by default), the larger count, how often the probe runs `1 + 1` and for
 * how long.
 */
export const W13_SPINNERS_PER_CORE = 4
export const W13_MANY_SPINNERS = 100
export const W13_PROBE_EVERY_MS = 20
export const W13_PROBE_FOR_MS = 3_000

/**
 * The host tools every executor is created with (W1 includes installing them). `async` tells
 * peers whose bridge must know in advance whether a host function returns a Promise
 * (isolated-vm's `apply` vs `applySync`, quickjs-emscripten's promise plumbing).
 */
export function makeTools() {
  return {
    inc: { async: false, fn: (x) => x + 1 },
    incAsync: { async: true, fn: async (x) => x + 1 },
    web_search: {
      async: true,
      fn: async (query) =>
        Array.from({ length: 8 }, (_, i) => ({
          title: `${query} — result ${i + 1}`,
          url: i % 2 ? 'https://example.org/rhone' : 'https://example.org/lyon',
          score: Math.round((1 - i / 10) * 100) / 100,
        })),
    },
    visit_page: { async: true, fn: async (url) => PAGES[url] ?? '' },
    calculator: { async: false, fn: (a, b) => a * b },
  }
}

const PAGE_TEXT = Array.from(
  { length: 40 },
  (_, i) =>
    `Lyon is a city in France at the confluence of the Rhone and the Saone, population ${
      513000 + i
    }, known for its food and silk.`,
).join(' ')

/**
 * The pages `visit_page` serves: made once, not per executor, so that W7 (memory per live
 * executor) does not count the harness's own strings.
 */
const PAGES = {
  'https://example.org/lyon': PAGE_TEXT,
  'https://example.org/rhone': PAGE_TEXT.split(' ').reverse().join(' '),
}

/** W9's input, sent with `sendVariables` (or the peer's equivalent). */
export const W9_VARIABLES = {
  question: 'What is the population of Lyon, doubled?',
  settings: { maxResults: 3, minScore: 0.5, language: 'en' },
}

/**
 * Guest sources. `sync` sources are expressions whose value is the result; `async` ones
 * evaluate to a Promise of the result. Functions wrap the loops so that every peer runs them
 * over local variables (top-level bindings would be globals in some peers and not others).
 * `--quick` passes a smaller W5 bound: it proves the path works, it measures nothing.
 */
export const guest = (W5_N = W5_FULL_N) => ({
  W2: { kind: 'sync', js: '1 + 1', py: '1 + 1', expect: 2 },
  W3: {
    kind: 'async',
    js: `(async () => { let x = 0; for (let i = 0; i < ${W3_CALLS}; i++) { x = await incAsync(x); } return x })()`,
    py: `
async def _w3():
    x = 0
    for i in range(${W3_CALLS}):
        x = await incAsync(x)
    return x
await _w3()
`,
    expect: W3_CALLS,
  },
  W4: {
    kind: 'sync',
    js: `(() => { let x = 0; for (let i = 0; i < ${W4_CALLS}; i++) { x = inc(x); } return x })()`,
    py: `
def _w4():
    x = 0
    for i in range(${W4_CALLS}):
        x = inc(x)
    return x
_w4()
`,
    expect: W4_CALLS,
  },
  W5: {
    kind: 'sync',
    js: `(() => { let s = 0; for (let i = 1; i <= ${W5_N}; i++) { s += i; } return s })()`,
    py: `
def _w5():
    s = 0
    for i in range(1, ${W5_N + 1}):
        s += i
    return s
_w5()
`,
    expect: (W5_N * (W5_N + 1)) / 2,
  },
  W6: {
    kind: 'sync',
    js: `(() => { const end = Date.now() + ${W6_SPIN_MS}; let n = 0; while (Date.now() < end) { n++; } return n > 0 })()`,
    py: `
import time
def _w6():
    end = time.time() + ${W6_SPIN_MS / 1000}
    n = 0
    while time.time() < end:
        n += 1
    return n > 0
_w6()
`,
    expect: true,
  },
  W8: { kind: 'sync', js: 'while (true) {}', py: 'while True:\n    pass\n' },
})

/**
 * W9: a realistic agent step — 30 lines, three tool calls (two async, one sync), console
 * output and a final answer. Our executor runs it as agent code (top-level await, persistent
 * top-level bindings); JavaScript peers run the same lines inside an async function.
 */
export const W9_JS = `
const hits = await web_search(question);
console.log("search returned", hits.length, "results for:", question);
const relevant = hits
  .filter((hit) => hit.score >= settings.minScore)
  .sort((a, b) => b.score - a.score)
  .slice(0, settings.maxResults);
for (const hit of relevant) {
  console.log(\`- \${hit.title} (\${hit.score}) \${hit.url}\`);
}
const page = await visit_page(relevant[0].url);
const words = page.split(/\\s+/).filter((w) => w.length > 0);
const counts = {};
for (const word of words) {
  const key = word.toLowerCase().replace(/[^a-z0-9]/g, "");
  if (key.length > 3) counts[key] = (counts[key] || 0) + 1;
}
const common = Object.entries(counts)
  .sort((a, b) => b[1] - a[1])
  .slice(0, 5);
console.log("most common words:", common);
const match = page.match(/population (\\d+)/);
if (!match) throw new Error("no population on the page");
const population = Number(match[1]);
const doubled = calculator(population, 2);
console.info({ population, doubled, words: words.length });
const summary = \`Lyon has \${population} inhabitants; doubled: \${doubled}.\`;
console.log(summary);
final_answer({ answer: doubled, summary, sources: relevant.map((hit) => hit.url) });
`

/** W9 for the Pyodide executor: the same steps in Python. */
export const W9_PY = `
import re
hits = (await web_search(question)).to_py()
print("search returned", len(hits), "results for:", question)
relevant = sorted(
    [hit for hit in hits if hit["score"] >= settings["minScore"]],
    key=lambda hit: hit["score"],
    reverse=True,
)[: settings["maxResults"]]
for hit in relevant:
    print(f"- {hit['title']} ({hit['score']}) {hit['url']}")
page = await visit_page(relevant[0]["url"])
words = [w for w in page.split() if len(w) > 0]
counts = {}
for word in words:
    key = re.sub(r"[^a-z0-9]", "", word.lower())
    if len(key) > 3:
        counts[key] = counts.get(key, 0) + 1
common = sorted(counts.items(), key=lambda kv: kv[1], reverse=True)[:5]
print("most common words:", common)
match = re.search(r"population (\\d+)", page)
if not match:
    raise ValueError("no population on the page")
population = int(match.group(1))
doubled = calculator(population, 2)
print({"population": population, "doubled": doubled, "words": len(words)})
summary = f"Lyon has {population} inhabitants; doubled: {doubled}."
print(summary)
final_answer({"answer": doubled, "summary": summary, "sources": [hit["url"] for hit in relevant]})
`

/** What W9's final answer must be, whichever peer ran it. */
export const W9_ANSWER = 1026000

/** W14: the W9 session is snapshotted and restored after this many steps. */
export const W14_STEPS = [20, 200]

/**
 * W14's session whose state a checkpoint cannot hold (the agent defined a function): it is
 * restored by replaying its journal, which W14 measures beside the checkpoint.
 */
export const W14_HELPER = 'function pick(hits, n) { return hits.slice(0, n) }'

