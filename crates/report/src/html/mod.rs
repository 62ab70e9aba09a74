//! The self-contained HTML report: view model, charts, tables and the page.

pub mod charts;
pub mod load;
pub mod page;
pub mod sample;
pub mod tables;
pub mod view;

pub use charts::{charts, charts_with, Chart, ChartSpec};
pub use tables::{tables, Table};
pub use view::RunView;

/// Renders the HTML report for these runs (one file, works offline).
pub fn render_html(runs: &[RunView], generator: &str) -> String {
    let c = charts(runs);
    let t = tables(runs);
    page::render(runs, &c, &t, generator)
}

/// [`render_html`] with the charts `specs` declare besides the built-in ones (a
/// procedure's chart as data: [`ChartSpec`]).
pub fn render_html_with_charts(runs: &[RunView], specs: &[ChartSpec], generator: &str) -> String {
    let c = charts_with(runs, specs);
    let t = tables(runs);
    page::render(runs, &c, &t, generator)
}

/// [`render_html`] with a sweep section (heat maps and lines over two axes) before the
/// runs' sections, drawn by [`crate::sweep`].
pub fn render_html_with_sweeps(
    runs: &[RunView],
    sweeps: &[(std::path::PathBuf, crate::sweep::SweepTable)],
    generator: &str,
) -> String {
    let c = charts(runs);
    let t = tables(runs);
    let extra = [page::ExtraSection {
        id: "sweeps",
        title: "Sweeps",
        html: crate::sweep::section_html(sweeps),
    }];
    page::render_with(runs, &c, &t, &extra, generator)
}
