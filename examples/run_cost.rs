//! The engine-side cost of a run, for instruction counts (timings on a shared machine are
//! noise): runs W2 (`1 + 1`) or W9 (the agent step of `bench/workloads.mjs`, with its three
//! tools answered at once by a Rust host) `N` times on one engine, without Node.
//!
//! ```sh
//! cargo build --release --example run_cost
//! valgrind --tool=callgrind --callgrind-out-file=/dev/null target/release/examples/run_cost W2 0
//! valgrind --tool=callgrind --callgrind-out-file=/dev/null target/release/examples/run_cost W2 1000
//! ```
//!
//! The difference of the two totals (`Collected` / `I refs`), divided by `N`, is one run: its
//! validation, rewrite and evaluation, and the messages between the threads.

use std::sync::Arc;

use ses_executor::engine::host::{Host, ToolCall};
use ses_executor::engine::{Engine, EngineConfig, RunAbort, RunRequest};
use ses_executor::options::Options;
use ses_executor::value::Value;

/// W9's agent step (`bench/workloads.mjs`, `W9_JS`).
const W9: &str = r#"
const hits = await web_search(question);
console.log("search returned", hits.length, "results for:", question);
const relevant = hits
  .filter((hit) => hit.score >= settings.minScore)
  .sort((a, b) => b.score - a.score)
  .slice(0, settings.maxResults);
for (const hit of relevant) {
  console.log(`- ${hit.title} (${hit.score}) ${hit.url}`);
}
const page = await visit_page(relevant[0].url);
const words = page.split(/\s+/).filter((w) => w.length > 0);
const counts = {};
for (const word of words) {
  const key = word.toLowerCase().replace(/[^a-z0-9]/g, "");
  if (key.length > 3) counts[key] = (counts[key] || 0) + 1;
}
const common = Object.entries(counts)
  .sort((a, b) => b[1] - a[1])
  .slice(0, 5);
console.log("most common words:", common);
const match = page.match(/population (\d+)/);
if (!match) throw new Error("no population on the page");
const population = Number(match[1]);
const doubled = calculator(population, 2);
console.info({ population, doubled, words: words.length });
const summary = `Lyon has ${population} inhabitants; doubled: ${doubled}.`;
console.log(summary);
final_answer({ answer: doubled, summary, sources: relevant.map((hit) => hit.url) });
"#;

/// W9's tools, as `bench/workloads.mjs` defines them; the async ones settle at once.
struct W9Tools {
    page: String,
}

impl Host for W9Tools {
    fn call_tool(&self, call: ToolCall) {
        let string = |args: &[Value]| match args.first() {
            Some(Value::String(text)) => text.clone(),
            _ => String::new(),
        };
        match call.tool.as_str() {
            "web_search" => {
                let query = string(&call.args);
                let hits = (0..8)
                    .map(|i| {
                        let url = if i % 2 == 1 { "rhone" } else { "lyon" };
                        Some(Value::Object(vec![
                            (
                                "title".into(),
                                Value::String(format!("{query} — result {}", i + 1)),
                            ),
                            (
                                "url".into(),
                                Value::String(format!("https://example.org/{url}")),
                            ),
                            (
                                "score".into(),
                                Value::Number(f64::from(100 - i * 10) / 100.0),
                            ),
                        ]))
                    })
                    .collect();
                call.reply.pending().settle(Ok(Value::Array(hits)));
            }
            "visit_page" => {
                let page = if string(&call.args).ends_with("lyon") {
                    self.page.clone()
                } else {
                    String::new()
                };
                call.reply.pending().settle(Ok(Value::String(page)));
            }
            _ => {
                let number = |i: usize| match call.args.get(i) {
                    Some(Value::Number(n)) => *n,
                    _ => f64::NAN,
                };
                let product = number(0) * number(1);
                call.reply.returned(Ok(Value::Number(product)));
            }
        }
    }
}

fn main() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    let workload = args.next().unwrap_or_else(|| "W2".into());
    let runs: u32 = args.next().and_then(|n| n.parse().ok()).unwrap_or(1000);
    let page = (0..40)
        .map(|i| {
            format!(
                "Lyon is a city in France at the confluence of the Rhone and the Saone, population {}, known for its food and silk.",
                513_000 + i
            )
        })
        .collect::<Vec<_>>()
        .join(" ");
    let options = Options::default();
    let (engine, ready) = Engine::start(EngineConfig::from(&options), Arc::new(W9Tools { page }))
        .map_err(|e| format!("engine start: {e:?}"))?;
    ready
        .blocking_recv()
        .map_err(|e| e.to_string())?
        .map_err(|e| format!("engine init: {e:?}"))?;
    let names = ["web_search", "visit_page", "calculator"].map(String::from);
    engine
        .define_tools(names.to_vec())
        .blocking_recv()
        .map_err(|e| e.to_string())?
        .map_err(|e| format!("tools: {e:?}"))?;
    let variables = vec![
        (
            "question".to_owned(),
            Value::String("What is the population of Lyon, doubled?".into()),
        ),
        (
            "settings".to_owned(),
            Value::Object(vec![
                ("maxResults".into(), Value::Number(3.0)),
                ("minScore".into(), Value::Number(0.5)),
                ("language".into(), Value::String("en".into())),
            ]),
        ),
    ];
    let (code, expected) = match workload.as_str() {
        "W9" => (W9, "1026000"),
        _ => ("1 + 1", "2"),
    };
    for _ in 0..runs {
        if workload == "W9" {
            engine
                .set_variables(variables.clone())
                .blocking_recv()
                .map_err(|e| e.to_string())?
                .map_err(|e| format!("variables: {e:?}"))?;
        }
        let report = engine
            .run(RunRequest::new(code.into(), &options, RunAbort::new()))
            .blocking_recv()
            .map_err(|e| e.to_string())?;
        let output = report
            .result
            .map_err(|e| format!("{workload}: {e:?}"))?
            .output;
        let answer = match &output {
            Value::Object(fields) => fields
                .iter()
                .find(|(key, _)| key == "answer")
                .map(|(_, value)| format!("{value:?}")),
            other => Some(format!("{other:?}")),
        };
        if !answer.is_some_and(|answer| answer.contains(expected)) {
            return Err(format!("{workload} gave {output:?}"));
        }
    }
    if let Some(thread) = engine.stop() {
        thread.join().map_err(|_| "the engine thread panicked")?;
    }
    Ok(())
}
