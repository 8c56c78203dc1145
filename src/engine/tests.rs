//! Engine tests without Node: a real engine thread driven through its channel.

use super::*;

fn engine() -> Engine {
    let (engine, ready) = Engine::start(EngineConfig::from(&Options::default())).unwrap();
    ready.blocking_recv().unwrap().unwrap();
    engine
}

fn run(engine: &Engine, code: &str) -> RunReport {
    engine
        .run(RunRequest::new(code.into(), &Options::default()))
        .blocking_recv()
        .unwrap()
}

#[test]
fn smoke() {
    let e = engine();
    let r = run(&e, "const x = 1; console.log('hi', x); x + 1");
    println!("{:?}", r);
    let r = run(&e, "const x = 5; x * 2");
    println!("{:?}", r);
    let r = run(&e, "try { final_answer(3) } catch {} console.log('after')");
    println!("{:?}", r);
    let r = run(&e, "let i = 0; while (true) { try { i++ } catch {} }");
    println!("{:?}", r);
    let r = run(&e, "const o = {}; \n o.f()");
    println!("{:?}", r);
}
