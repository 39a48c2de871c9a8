//! Measured against ideal: a percentile vernier measured at each load, with its CI, beside
//! the ideal queueing model's value at the same load (`vernier validate`'s figure).

use plotters::prelude::{
    ChartBuilder, Circle, Color, DashedLineSeries, DrawingBackend, ErrorBar, PathElement,
    SeriesLabelPosition,
};

use super::plot::{Area, CAPTION_SIZE, Chart, DrawError, Plot, color, fmt_num, legend};

/// One load's measured and ideal values, µs.
#[derive(Debug, Clone, PartialEq)]
pub struct AccuracyPoint {
    /// The load as a share of the server's capacity, (0, 1).
    pub load: f64,
    /// What the model says.
    pub model: f64,
    /// What vernier reported, with its CI; `None` when it reported nothing.
    pub measured: Option<(f64, Option<(f64, f64)>)>,
}

/// One series: a percentile (`name`, "p99") measured and modelled across loads.
#[derive(Debug, Clone, PartialEq)]
pub struct AccuracySeries {
    /// The percentile's name.
    pub name: String,
    /// Its points, in load order.
    pub points: Vec<AccuracyPoint>,
}

/// Draws each series' model as a dashed line and its measurements as markers with CI
/// bars, against the load; returns the SVG.
pub(crate) fn accuracy_svg(
    title: &str,
    series: &[AccuracySeries],
    caption: &[String],
) -> Result<String, DrawError> {
    Plot::new(caption.to_vec(), AccuracyChart { title, series }).svg()
}

struct AccuracyChart<'a> {
    title: &'a str,
    series: &'a [AccuracySeries],
}

impl Chart for AccuracyChart<'_> {
    fn draw<DB: DrawingBackend>(&self, area: &Area<DB>) -> Result<(), DrawError>
    where
        DB::ErrorType: 'static,
    {
        draw_chart(area, self.title, self.series)
    }
}

fn draw_chart<DB: DrawingBackend>(
    area: &Area<DB>,
    title: &str,
    series: &[AccuracySeries],
) -> Result<(), DrawError>
where
    DB::ErrorType: 'static,
{
    let ymax = series
        .iter()
        .flat_map(|s| &s.points)
        .flat_map(|p| {
            let measured = p
                .measured
                .map_or(0.0, |(v, ci)| ci.map_or(v, |c| c.1.max(v)));
            [p.model, measured]
        })
        .fold(0.0, f64::max);
    let ymax = if ymax > 0.0 { ymax * 1.15 } else { 1.0 };
    let mut chart = ChartBuilder::on(area)
        .caption(title, ("sans-serif", 22))
        .margin(14)
        .x_label_area_size(44)
        .y_label_area_size(70)
        .build_cartesian_2d(0f64..1f64, 0f64..ymax)?;
    chart
        .configure_mesh()
        .x_desc("load (share of the server's capacity)")
        .y_desc("latency (µs)")
        .x_label_formatter(&|x: &f64| format!("{:.0}%", x * 100.0))
        .y_label_formatter(&|y: &f64| fmt_num(*y))
        .axis_desc_style(("sans-serif", CAPTION_SIZE))
        .draw()?;
    for (i, s) in series.iter().enumerate() {
        let c = color(i);
        chart
            .draw_series(DashedLineSeries::new(
                s.points.iter().map(|p| (p.load, p.model)),
                8,
                6,
                c.stroke_width(2),
            ))?
            .label(format!("{} ideal model", s.name))
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(2)));
        chart.draw_series(s.points.iter().filter_map(|p| {
            let (v, ci) = p.measured?;
            let (low, high) = ci?;
            Some(ErrorBar::new_vertical(
                p.load,
                low,
                v,
                high,
                c.stroke_width(2),
                10,
            ))
        }))?;
        chart
            .draw_series(s.points.iter().filter_map(|p| {
                p.measured
                    .map(|(v, _)| Circle::new((p.load, v), 5, c.filled()))
            }))?
            .label(format!("{} vernier", s.name))
            .legend(move |(x, y)| Circle::new((x + 10, y), 5, c.filled()));
    }
    legend(&mut chart, SeriesLabelPosition::UpperLeft)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plot_has_the_model_the_measurements_and_their_bars() {
        let series = [AccuracySeries {
            name: "p99".into(),
            points: vec![
                AccuracyPoint {
                    load: 0.1,
                    model: 120.0,
                    measured: Some((130.0, Some((125.0, 140.0)))),
                },
                AccuracyPoint {
                    load: 0.5,
                    model: 230.0,
                    measured: None,
                },
            ],
        }];
        let svg = accuracy_svg("exp:25us", &series, &["caption".into()]).unwrap();
        assert!(svg.starts_with("<svg"), "{svg}");
        assert!(svg.contains("p99 ideal model") && svg.contains("p99 vernier"));
        assert!(svg.contains("exp:25us") && svg.contains("caption"));
        // The load without a measurement has no marker: measuring it adds exactly one.
        let mut both = series.clone();
        both[0].points[1].measured = Some((250.0, None));
        let svg_both = accuracy_svg("exp:25us", &both, &[]).unwrap();
        assert_eq!(
            svg_both.matches("<circle").count(),
            svg.matches("<circle").count() + 1
        );
    }
}
