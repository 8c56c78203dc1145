use std::fs;
use std::path::Path;

fn main() {
    napi_build::setup();
    engine_build();
}

/// Names the engine this build runs, for the header of every snapshot (`src/session/seal.rs`):
/// QuickJS's version and a digest of the patches the build applies to it. A snapshot records how
/// a session ran on one engine; another engine may run the same code differently, so a restore
/// refuses a snapshot of another build.
fn engine_build() {
    let header = fs::read_to_string("vendor/rquickjs-sys/quickjs/quickjs.h").unwrap_or_default();
    let part = |name: &str| {
        header
            .lines()
            .find_map(|line| line.strip_prefix(&format!("#define QJS_VERSION_{name} ")))
            .unwrap_or("?")
            .trim()
            .to_owned()
    };
    let version = format!("{}.{}.{}", part("MAJOR"), part("MINOR"), part("PATCH"));
    let patches = Path::new("vendor/quickjs-patches");
    let mut names: Vec<_> = fs::read_dir(patches)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|entry| entry.file_name().to_string_lossy().into_owned())
                .filter(|name| name.ends_with(".patch"))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    // FNV-1a over each patch's name and text: a stable digest without a build dependency.
    let mut digest: u64 = 0xcbf2_9ce4_8422_2325;
    for name in &names {
        let text = fs::read(patches.join(name)).unwrap_or_default();
        for byte in name.bytes().chain(text) {
            digest ^= u64::from(byte);
            digest = digest.wrapping_mul(0x0100_0000_01b3);
        }
    }
    println!("cargo:rerun-if-changed=vendor/quickjs-patches");
    println!("cargo:rerun-if-changed=vendor/rquickjs-sys/quickjs/quickjs.h");
    println!("cargo:rustc-env=SES_ENGINE_BUILD=quickjs-ng {version} patches {digest:016x}");
}
