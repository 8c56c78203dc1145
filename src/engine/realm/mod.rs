//! The realm the guest sees: what the executor installs in its QuickJS context and what sandbox
//! code can reach through it — the hardened bindings (`console`, `final_answer`, the loop
//! guard), the lockdown of code compilation, the log buffer behind `console`, timers, a run's
//! `input`, the module loader of `import()`, the host's tools and variables, and the Canvas 2D
//! classes.

pub(super) mod canvas;
pub(super) mod console;
pub(super) mod endowments;
pub(super) mod globals;
pub(super) mod input;
pub(super) mod lockdown;
pub(super) mod modules;
pub(super) mod timers;
