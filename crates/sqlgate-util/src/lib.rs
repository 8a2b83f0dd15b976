//! sqlgate's shared layer, below every stage: the module `util` of the gate, in a crate of its
//! own so the layers above it are compiled apart (docs/ARCHITECTURE.md, "Crates").

pub mod util;
