//! storbench-sim: Simulated SSD: page-mapped FTL in virtual time (no file descriptors, no wall clock).
