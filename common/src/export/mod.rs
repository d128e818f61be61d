//! What the tools export to other systems: Prometheus metrics ([`prom`]),
//! pprof profiles ([`pprof`]), HdrHistogram interval logs ([`hdrlog`]).

pub mod hdrlog;
pub mod pprof;
pub mod prom;
