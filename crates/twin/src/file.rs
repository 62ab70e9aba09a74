//! What a twin reads and writes: the measurement (the `twin measure` procedure's
//! summary in result.json) and `twin.json`, both typed in `storbench-results`, where
//! the report reads them back as the same types.

pub use storbench_results::twin::{
    FigureReport, Measurement, ParamReport, TwinFile, TWIN_FILE, TWIN_SCHEMA_VERSION,
};
