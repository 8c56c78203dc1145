//! Applies a QuickJS patch queue in name order to a QuickJS source folder with the build's own
//! applier, in memory: `quickjs-patches-check <patches dir> <quickjs dir> [<out dir>]`. Prints one
//! line per patch; exits with 1 at the first patch that is not in the queue's format or does not
//! apply. With `<out dir>`, writes there every file the queue changed, as the build compiles it.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::ExitCode;
use std::{env, fs};

#[path = "../../../vendor/rquickjs-sys/patch_queue.rs"]
mod patch_queue;

fn main() -> ExitCode {
    let args: Vec<String> = env::args().skip(1).collect();
    let (patches, quickjs, out) = match args.as_slice() {
        [patches, quickjs] => (patches, quickjs, None),
        [patches, quickjs, out] => (patches, quickjs, Some(Path::new(out))),
        _ => {
            eprintln!("usage: quickjs-patches-check <patches dir> <quickjs dir> [<out dir>]");
            return ExitCode::from(2);
        }
    };
    match check(Path::new(patches), Path::new(quickjs), out) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("{error}");
            ExitCode::FAILURE
        }
    }
}

fn check(patches: &Path, quickjs: &Path, out: Option<&Path>) -> Result<(), String> {
    let mut sources: BTreeMap<String, String> = BTreeMap::new();
    for patch in patch_queue::queue(patches)? {
        let name = patch.file_name().unwrap_or_default().to_string_lossy();
        let text = fs::read_to_string(&patch).map_err(|error| format!("{name}: {error}"))?;
        let patched = patch_queue::apply(&name, &text, |file| match sources.get(file) {
            Some(text) => Ok(text.clone()),
            None => fs::read_to_string(quickjs.join(file)).map_err(|error| error.to_string()),
        })?;
        let files: Vec<&str> = patched.iter().map(|(file, _)| file.as_str()).collect();
        println!("applies  {name} ({})", files.join(", "));
        sources.extend(patched);
    }
    if let Some(out) = out {
        fs::create_dir_all(out).map_err(|error| format!("{}: {error}", out.display()))?;
        for (file, text) in &sources {
            fs::write(out.join(file), text).map_err(|error| format!("{file}: {error}"))?;
        }
    }
    Ok(())
}
