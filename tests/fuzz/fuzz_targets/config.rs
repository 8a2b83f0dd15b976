//! The config loader never panics, whatever YAML a pull request commits.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|text: &str| {
    let _ = sqlgate::input::config::Config::parse(text, Path::new("fuzz/sqlgate.yml"), &sqlgate::engine::registry::Engines);
});
