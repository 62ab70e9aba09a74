//! storbench-report: Result files (JSON, Parquet and CSV series) and the HTML report.
