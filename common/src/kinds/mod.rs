//! The kinds of tool, each one's shared part written once: [`event`] tools
//! declare their columns, [`histogram`] tools say what their histograms are,
//! [`stack`] tools take the stack options and write the stack files. The
//! lifecycle (crate::run::lifecycle) drives them.

pub mod event;
pub mod histogram;
pub mod stack;
