//! storbench-record: Recording block I/O on Linux from tracefs binary ring buffers.
