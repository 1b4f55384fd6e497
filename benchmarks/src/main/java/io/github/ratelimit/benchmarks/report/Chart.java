package io.github.ratelimit.benchmarks.report;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.geom.Rectangle2D;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.text.FieldPosition;
import java.text.NumberFormat;
import java.text.ParsePosition;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

import org.jfree.chart.ChartFactory;
import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.StandardChartTheme;
import org.jfree.chart.axis.LogAxis;
import org.jfree.chart.axis.NumberAxis;
import org.jfree.chart.axis.NumberTickUnit;
import org.jfree.chart.block.BlockBorder;
import org.jfree.chart.labels.ItemLabelAnchor;
import org.jfree.chart.labels.ItemLabelPosition;
import org.jfree.chart.labels.StandardCategoryItemLabelGenerator;
import org.jfree.chart.plot.CategoryPlot;
import org.jfree.chart.plot.ValueMarker;
import org.jfree.chart.renderer.category.AbstractCategoryItemRenderer;
import org.jfree.chart.renderer.category.BarRenderer;
import org.jfree.chart.renderer.category.LineAndShapeRenderer;
import org.jfree.chart.renderer.category.StandardBarPainter;
import org.jfree.chart.title.TextTitle;
import org.jfree.chart.ui.HorizontalAlignment;
import org.jfree.chart.ui.RectangleAnchor;
import org.jfree.chart.ui.RectangleEdge;
import org.jfree.chart.ui.TextAnchor;
import org.jfree.data.category.DefaultCategoryDataset;
import org.jfree.data.general.DatasetUtils;
import org.jspecify.annotations.Nullable;

import io.github.ratelimit.benchmarks.HttpOverheadSection;
import io.github.ratelimit.benchmarks.MemorySection;
import io.github.ratelimit.benchmarks.RedisMemory;
import io.github.ratelimit.benchmarks.harness.Comparison;
import io.github.ratelimit.benchmarks.harness.Measurement;
import io.github.ratelimit.benchmarks.harness.SectionOutcome;
import io.github.ratelimit.benchmarks.harness.SectionResult;

/**
 * Draws a run's figures as one PNG of JFreeChart panels: local decisions, HTTP throughput, memory per key
 * and Redis decisions as grouped bars, the two scaling sweeps as lines on a log scale. Under each panel,
 * the ratios that have a target, marked met or not. Only the sections that measured get a panel.
 */
public final class Chart {

	private static final int WIDTH = 1500;

	private static final int MARGIN = 30;

	private static final int HEADER = 80;

	private static final int PANEL_HEIGHT = 480;

	private static final Map<String, Color> COLORS = Map.of("ours", new Color(0x1f77b4), "ours: bucket only",
			new Color(0x9ecae1), "Bucket4j", new Color(0xff7f0e), "floor", new Color(0x8c8c8c),
			"floor: expiring cache", new Color(0xc7c7c7), HttpOverheadSection.ENABLED, new Color(0x1f77b4),
			HttpOverheadSection.DISABLED, new Color(0x8c8c8c), "raw EVALSHA", new Color(0x8c8c8c));

	private static final Color MET = new Color(0x2ca02c);

	private static final Color MISSED = new Color(0xd62728);

	private static final StandardChartTheme THEME = theme();

	private Chart() {
	}

	/**
	 * Renders the chart.
	 * @param outcomes the run's sections
	 * @param subtitle one line on where and when it ran
	 * @param file where the PNG goes
	 * @throws IOException when it cannot be written
	 */
	public static void render(List<SectionOutcome> outcomes, String subtitle, Path file) throws IOException {
		List<Panel> panels = layout(panels(outcomes));
		int rows = (int) Math.ceil(panels.stream().mapToDouble(Panel::width).sum() / 2);
		int height = HEADER + Math.max(rows, 1) * PANEL_HEIGHT + MARGIN;
		BufferedImage image = new BufferedImage(WIDTH, height, BufferedImage.TYPE_INT_RGB);
		Graphics2D g = image.createGraphics();
		try {
			g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
			g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
			g.setColor(Color.WHITE);
			g.fillRect(0, 0, WIDTH, height);
			g.setColor(Color.BLACK);
			g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 22));
			g.drawString("rate-limit-spring-boot-starter: benchmarks", MARGIN, 38);
			g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 14));
			g.setColor(Color.DARK_GRAY);
			g.drawString(subtitle, MARGIN, 60);
			if (panels.isEmpty()) {
				g.drawString("No section measured in this run.", MARGIN, HEADER + 40);
			}
			double columnWidth = (WIDTH - 2.0 * MARGIN) / 2;
			int row = 0;
			double column = 0;
			for (Panel panel : panels) {
				if (column + panel.width() > 2) {
					row++;
					column = 0;
				}
				panel.chart().draw(g, new Rectangle2D.Double(MARGIN + column * columnWidth, HEADER + row * PANEL_HEIGHT,
						panel.width() * columnWidth - 10, PANEL_HEIGHT - 20));
				column += panel.width();
			}
		}
		finally {
			g.dispose();
		}
		Path parent = file.toAbsolutePath().getParent();
		if (parent != null) {
			Files.createDirectories(parent);
		}
		try (OutputStream out = Files.newOutputStream(file)) {
			ChartUtils.writeBufferedImageAsPNG(out, image);
		}
	}

	/** One chart, half a column wide or a whole one. */
	private record Panel(JFreeChart chart, double width) {
	}

	private static List<Panel> panels(List<SectionOutcome> outcomes) {
		List<Panel> panels = new ArrayList<>();
		SectionResult local = find(outcomes, "local");
		if (local != null) {
			panels.add(new Panel(bars("Local decisions (ops/µs, 2 threads; higher is better)", "ops/µs", local,
					local.figures(), null), 1));
		}
		SectionResult keys = find(outcomes, "keys");
		if (keys != null) {
			panels.add(new Panel(lines("Scaling by keys (ops/µs, log scale; 2 threads, all allowed)", keys), 1));
		}
		SectionResult threads = find(outcomes, "threads");
		if (threads != null) {
			panels.add(new Panel(lines("Scaling by threads (ops/µs, log scale; 100,000 keys, 2 cores)", threads), 1));
		}
		SectionResult http = find(outcomes, "http");
		if (http != null) {
			JFreeChart chart = bars("HTTP requests/s (sample app)", "req/s", http, List.of("requests/s"), null);
			caption(chart, latencies(http), Color.BLACK);
			panels.add(new Panel(chart, 0.5));
		}
		SectionResult memory = find(outcomes, "memory");
		if (memory != null && memory.find("bytes per key", "ours") != null) {
			panels.add(new Panel(bars("Heap per key at 1M keys (B)", "B", memory, List.of("bytes per key"),
					MemorySection.TARGET_BYTES), 0.5));
		}
		SectionResult redis = find(outcomes, "redis");
		if (redis != null) {
			// The figures all contenders ran (the one-key rows are ours alone, and counts of calls).
			List<String> compared = redis.figures().stream().filter((f) -> redis.find(f, "Bucket4j") != null).toList();
			panels.add(new Panel(bars("Redis decisions (ops/s, 16 threads, 100,000 keys, token bucket)", "ops/s", redis,
					compared, null), 1));
			List<String> latencies = redis.figures().stream().filter((f) -> f.startsWith("1 thread, p")).toList();
			if (!latencies.isEmpty()) {
				panels.add(new Panel(bars("Redis latency per decision, 1 thread (µs, lower is better)", "µs", redis,
						latencies, null), 1));
			}
		}
		List<String> redisMemory = (memory != null)
				? memory.figures().stream().filter((f) -> f.startsWith(RedisMemory.FIGURE_PREFIX)).toList() : List.of();
		if (!redisMemory.isEmpty()) {
			panels.add(new Panel(bars("Redis MEMORY USAGE per key after 1 request (B)", "B", memory, redisMemory, null),
					1));
		}
		return panels;
	}

	/**
	 * Orders the panels to fill two columns: a half panel without a half neighbour takes a whole column,
	 * after the others.
	 */
	private static List<Panel> layout(List<Panel> panels) {
		List<Panel> ordered = new ArrayList<>();
		List<Panel> alone = new ArrayList<>();
		for (int i = 0; i < panels.size(); i++) {
			boolean paired = (i > 0 && panels.get(i - 1).width() < 1)
					|| (i + 1 < panels.size() && panels.get(i + 1).width() < 1);
			if (panels.get(i).width() < 1 && !paired) {
				alone.add(new Panel(panels.get(i).chart(), 1));
			}
			else {
				ordered.add(panels.get(i));
			}
		}
		ordered.addAll(alone);
		return ordered;
	}

	private static @Nullable SectionResult find(List<SectionOutcome> outcomes, String id) {
		return outcomes.stream()
			.filter((o) -> o.section().id().equals(id))
			.map(SectionOutcome::result)
			.filter(Objects::nonNull)
			.findFirst()
			.orElse(null);
	}

	/** Grouped bars: one group per figure, one bar per implementation (the "target" drawn as a line). */
	private static JFreeChart bars(String title, String unit, SectionResult result, List<String> figures,
			@Nullable Double target) {
		DefaultCategoryDataset data = dataset(result, figures);
		JFreeChart chart = ChartFactory.createBarChart(title, null, unit, data);
		CategoryPlot plot = style(chart, data);
		BarRenderer renderer = (BarRenderer) plot.getRenderer();
		renderer.setItemMargin(0.03);
		renderer.setMaximumBarWidth(0.12);
		labels(renderer);
		NumberAxis axis = (NumberAxis) plot.getRangeAxis();
		axis.setNumberFormatOverride(new Figures());
		axis.setUpperMargin(0.12);
		if (target != null) {
			ValueMarker marker = new ValueMarker(target, MISSED,
					new BasicStroke(2, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10, new float[] { 8, 6 }, 0));
			marker.setLabel("target " + Format.number(target));
			marker.setLabelPaint(MISSED);
			marker.setLabelBackgroundColor(Color.WHITE);
			marker.setLabelAnchor(RectangleAnchor.TOP_RIGHT);
			marker.setLabelTextAnchor(TextAnchor.BOTTOM_RIGHT);
			plot.addRangeMarker(marker);
			Number max = DatasetUtils.findMaximumRangeValue(data);
			axis.setRange(0, Math.max((max != null) ? max.doubleValue() : 0, target) * 1.2);
		}
		ratios(chart, result, figures);
		return chart;
	}

	/** Lines: x = the figures in order, one line per implementation, y on a log scale. */
	private static JFreeChart lines(String title, SectionResult result) {
		DefaultCategoryDataset data = dataset(result, result.figures());
		JFreeChart chart = ChartFactory.createLineChart(title, null, null, data);
		LogAxis axis = new LogAxis("ops/µs (log)");
		axis.setTickUnit(new NumberTickUnit(1));
		axis.setNumberFormatOverride(new Figures());
		axis.setUpperMargin(0.15);
		axis.setLowerMargin(0.15);
		chart.getCategoryPlot().setRangeAxis(axis);
		CategoryPlot plot = style(chart, data);
		LineAndShapeRenderer renderer = (LineAndShapeRenderer) plot.getRenderer();
		renderer.setDefaultShapesVisible(true);
		for (int i = 0; i < data.getRowCount(); i++) {
			renderer.setSeriesStroke(i, new BasicStroke(2.5f));
			// Labels above and below the points in turn, so that close lines do not overwrite each other.
			renderer.setSeriesPositiveItemLabelPosition(i, (i % 2 == 0)
					? new ItemLabelPosition(ItemLabelAnchor.OUTSIDE12, TextAnchor.BOTTOM_CENTER)
					: new ItemLabelPosition(ItemLabelAnchor.OUTSIDE6, TextAnchor.TOP_CENTER));
		}
		labels(renderer);
		ratios(chart, result, result.figures());
		return chart;
	}

	private static DefaultCategoryDataset dataset(SectionResult result, List<String> figures) {
		DefaultCategoryDataset data = new DefaultCategoryDataset();
		for (String implementation : result.implementations()) {
			if (implementation.equals("target")) {
				continue;
			}
			for (String figure : figures) {
				Measurement measurement = result.find(figure, implementation);
				if (measurement != null && !Double.isNaN(measurement.value())) {
					data.addValue(measurement.value(), implementation, label(figure));
				}
			}
		}
		return data;
	}

	/** A figure as a category label: Redis memory figures without their common prefix. */
	private static String label(String figure) {
		return figure.startsWith(RedisMemory.FIGURE_PREFIX) ? figure.substring(RedisMemory.FIGURE_PREFIX.length())
				: figure;
	}

	private static StandardChartTheme theme() {
		StandardChartTheme theme = new StandardChartTheme("benchmarks");
		theme.setExtraLargeFont(new Font(Font.SANS_SERIF, Font.BOLD, 16));
		theme.setLargeFont(new Font(Font.SANS_SERIF, Font.PLAIN, 13));
		theme.setRegularFont(new Font(Font.SANS_SERIF, Font.PLAIN, 11));
		theme.setSmallFont(new Font(Font.SANS_SERIF, Font.PLAIN, 11));
		theme.setChartBackgroundPaint(Color.WHITE);
		theme.setPlotBackgroundPaint(Color.WHITE);
		theme.setPlotOutlinePaint(Color.WHITE);
		theme.setRangeGridlinePaint(new Color(0xdddddd));
		theme.setLegendBackgroundPaint(Color.WHITE);
		theme.setBarPainter(new StandardBarPainter());
		theme.setShadowVisible(false);
		return theme;
	}

	private static CategoryPlot style(JFreeChart chart, DefaultCategoryDataset data) {
		THEME.apply(chart);
		chart.getTitle().setHorizontalAlignment(HorizontalAlignment.LEFT);
		chart.getLegend().setPosition(RectangleEdge.TOP);
		chart.getLegend().setHorizontalAlignment(HorizontalAlignment.LEFT);
		chart.getLegend().setFrame(BlockBorder.NONE);
		CategoryPlot plot = chart.getCategoryPlot();
		plot.getDomainAxis().setMaximumCategoryLabelLines(3);
		plot.getDomainAxis().setCategoryMargin(0.15);
		for (int i = 0; i < data.getRowCount(); i++) {
			plot.getRenderer().setSeriesPaint(i, color((String) data.getRowKey(i)));
		}
		return plot;
	}

	private static void labels(AbstractCategoryItemRenderer renderer) {
		renderer.setDefaultItemLabelGenerator(new StandardCategoryItemLabelGenerator("{2}", new Figures()));
		renderer.setDefaultItemLabelsVisible(true);
	}

	/** Under the panel: its ratios that have a target, one line per figure, green when all are met. */
	private static void ratios(JFreeChart chart, SectionResult result, List<String> figures) {
		for (String figure : figures) {
			StringBuilder line = new StringBuilder();
			boolean met = true;
			for (Comparison comparison : result.comparisons()) {
				if (comparison.figure().equals(figure) && comparison.target() != null) {
					line.append(line.isEmpty() ? "" : "   ")
						.append(comparison.ours())
						.append(" / ")
						.append(comparison.peer())
						.append(String.format(Locale.ROOT, " = %.2f (%s) %s", comparison.ratio(), comparison.target(),
								comparison.met() ? "✓" : "✗"));
					met &= comparison.met();
				}
			}
			if (!line.isEmpty()) {
				caption(chart, (figures.size() > 1) ? label(figure) + ":   " + line : line.toString(), met ? MET : MISSED);
			}
		}
	}

	/** The p50 and p99 latencies of both sides of the HTTP section. */
	private static String latencies(SectionResult result) {
		StringBuilder caption = new StringBuilder("p50 / p99 ms:");
		for (String implementation : result.implementations()) {
			Measurement p50 = result.find("p50 latency", implementation);
			Measurement p99 = result.find("p99 latency", implementation);
			if (p50 != null && p99 != null) {
				caption.append(String.format(Locale.ROOT, "  %s %.2f / %.2f", implementation.replace("rate limit ", ""),
						p50.value(), p99.value()));
			}
		}
		return caption.toString();
	}

	private static void caption(JFreeChart chart, String text, Color color) {
		TextTitle caption = new TextTitle(text, new Font(Font.SANS_SERIF, Font.PLAIN, 12));
		caption.setPaint(color);
		caption.setPosition(RectangleEdge.BOTTOM);
		caption.setHorizontalAlignment(HorizontalAlignment.LEFT);
		// Bottom subtitles stack outwards from the plot; inserted right after the legend, each new one goes
		// below the ones before.
		chart.addSubtitle(1, caption);
	}

	private static Color color(String implementation) {
		return COLORS.getOrDefault(implementation, Color.DARK_GRAY);
	}

	/** {@link Format#number(double)} as a {@link NumberFormat}, for axes and bar labels. */
	private static final class Figures extends NumberFormat {

		@Override
		public StringBuffer format(double number, StringBuffer toAppendTo, FieldPosition pos) {
			return toAppendTo.append((number == 0) ? "0" : Format.number(number).replaceAll("\\.0+$", ""));
		}

		@Override
		public StringBuffer format(long number, StringBuffer toAppendTo, FieldPosition pos) {
			return format((double) number, toAppendTo, pos);
		}

		@Override
		public @Nullable Number parse(String source, ParsePosition parsePosition) {
			return null;
		}
	}
}
