//! The kinds of tool, each one's shared part written once: [`event`] tools
//! declare their columns; [`histogram`] tools say what their histograms
//! are, [`stack`] tools what they count, [`top`] tools their rows, and the
//! lifecycle (crate::run::lifecycle) drives each of these pipelines: the
//! schedule, the reports, the outputs.

pub mod event;
pub mod histogram;
pub mod stack;
pub mod table;
