//! The self-contained HTML report: view model, charts, tables and the page.

pub mod charts;
pub mod load;
pub mod page;
pub mod sample;
pub mod tables;
pub mod view;

pub use charts::{charts, Chart};
pub use tables::{tables, Table};
pub use view::RunView;

/// Renders the HTML report for these runs (one file, works offline).
pub fn render_html(runs: &[RunView], generator: &str) -> String {
    let c = charts(runs);
    let t = tables(runs);
    page::render(runs, &c, &t, generator)
}
