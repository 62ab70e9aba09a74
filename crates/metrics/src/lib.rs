//! storbench-metrics: Per-I/O metrics: busy time, data rates, service-time histograms, per-second series, results.
