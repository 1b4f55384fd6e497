package io.github.ratelimit.benchmarks.report;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.FontMetrics;
import java.awt.Graphics2D;
import java.awt.Rectangle;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import javax.imageio.ImageIO;

import org.jspecify.annotations.Nullable;

import io.github.ratelimit.benchmarks.HttpOverheadSection;
import io.github.ratelimit.benchmarks.MemorySection;
import io.github.ratelimit.benchmarks.RedisMemory;
import io.github.ratelimit.benchmarks.harness.Comparison;
import io.github.ratelimit.benchmarks.harness.Measurement;
import io.github.ratelimit.benchmarks.harness.SectionOutcome;
import io.github.ratelimit.benchmarks.harness.SectionResult;

/**
 * Draws a run's figures as one PNG with plain Java2D: local decisions as grouped bars, the two
 * scaling sweeps as lines, HTTP throughput and memory per key as bars. Sections that were not measured
 * leave their panel saying so.
 */
public final class Chart {

	private static final int WIDTH = 1500;

	private static final int HEIGHT = 1560;

	private static final Map<String, Color> COLORS = Map.of("ours", new Color(0x1f77b4), "ours: bucket only",
			new Color(0x9ecae1), "Bucket4j", new Color(0xff7f0e), "floor", new Color(0x8c8c8c),
			"floor: expiring cache", new Color(0xc7c7c7), HttpOverheadSection.ENABLED, new Color(0x1f77b4),
			HttpOverheadSection.DISABLED, new Color(0x8c8c8c), "raw EVALSHA", new Color(0x8c8c8c));

	private static final Color GRID = new Color(0xe5e5e5);

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
		BufferedImage image = new BufferedImage(WIDTH, HEIGHT, BufferedImage.TYPE_INT_RGB);
		Graphics2D g = image.createGraphics();
		try {
			g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
			g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
			g.setColor(Color.WHITE);
			g.fillRect(0, 0, WIDTH, HEIGHT);
			g.setColor(Color.BLACK);
			g.setFont(font(Font.BOLD, 22));
			g.drawString("rate-limit-spring-boot-starter: benchmarks", 30, 38);
			g.setFont(font(Font.PLAIN, 14));
			g.setColor(Color.DARK_GRAY);
			g.drawString(subtitle, 30, 60);
			int top = 80;
			int panelWidth = (WIDTH - 90) / 2;
			int panelHeight = (HEIGHT - top - 100) / 3;
			Rectangle topLeft = new Rectangle(30, top, panelWidth, panelHeight);
			Rectangle topRight = new Rectangle(60 + panelWidth, top, panelWidth, panelHeight);
			Rectangle bottomLeft = new Rectangle(30, top + panelHeight + 30, panelWidth, panelHeight);
			Rectangle bottomRight = new Rectangle(60 + panelWidth, top + panelHeight + 30, panelWidth, panelHeight);
			bars(g, topLeft, "Local decisions (ops/µs, 2 threads; higher is better)", find(outcomes, "local"), null,
					null);
			lines(g, topRight, "Scaling by keys (ops/µs, log scale; 2 threads, all allowed)", find(outcomes, "keys"));
			lines(g, bottomLeft, "Scaling by threads (ops/µs, log scale; 100,000 keys, 2 cores)",
					find(outcomes, "threads"));
			Rectangle http = new Rectangle(bottomRight.x, bottomRight.y, bottomRight.width / 2 - 10, bottomRight.height);
			Rectangle memory = new Rectangle(bottomRight.x + bottomRight.width / 2 + 10, bottomRight.y,
					bottomRight.width / 2 - 10, bottomRight.height);
			bars(g, http, "HTTP requests/s (sample app)", find(outcomes, "http"), List.of("requests/s"), null);
			latencyCaption(g, http, find(outcomes, "http"));
			bars(g, memory, "Heap per key at 1M keys (B)", find(outcomes, "memory"), List.of("bytes per key"),
					MemorySection.TARGET_BYTES);
			Rectangle redisLeft = new Rectangle(30, bottomLeft.y + panelHeight + 30, panelWidth, panelHeight);
			Rectangle redisRight = new Rectangle(60 + panelWidth, redisLeft.y, panelWidth, panelHeight);
			bars(g, redisLeft, "Redis decisions (ops/s, 16 threads, 100,000 keys, token bucket)",
					find(outcomes, "redis"), null, null);
			SectionResult memoryResult = find(outcomes, "memory");
			List<String> redisFigures = (memoryResult == null) ? List.of()
					: memoryResult.figures().stream().filter((f) -> f.startsWith(RedisMemory.FIGURE_PREFIX)).toList();
			bars(g, redisRight, "Redis MEMORY USAGE per key after 1 request (B)",
					redisFigures.isEmpty() ? null : memoryResult, redisFigures, null);
		}
		finally {
			g.dispose();
		}
		Path parent = file.toAbsolutePath().getParent();
		if (parent != null) {
			Files.createDirectories(parent);
		}
		ImageIO.write(image, "png", file.toFile());
	}

	private static @Nullable SectionResult find(List<SectionOutcome> outcomes, String id) {
		return outcomes.stream()
			.filter((o) -> o.section().id().equals(id))
			.map(SectionOutcome::result)
			.filter(java.util.Objects::nonNull)
			.findFirst()
			.orElse(null);
	}

	private static Font font(int style, int size) {
		return new Font(Font.SANS_SERIF, style, size);
	}

	private static Rectangle frame(Graphics2D g, Rectangle panel, String title) {
		g.setColor(Color.BLACK);
		g.setFont(font(Font.BOLD, 16));
		g.drawString(title, panel.x, panel.y + 16);
		return new Rectangle(panel.x + 55, panel.y + 60, panel.width - 65, panel.height - 130);
	}

	private static void notMeasured(Graphics2D g, Rectangle plot) {
		g.setColor(Color.GRAY);
		g.setFont(font(Font.ITALIC, 14));
		g.drawString("not measured in this run", plot.x + 10, plot.y + plot.height / 2);
	}

	/** Grouped bars: one group per figure, one bar per implementation (the "target" drawn as a line). */
	private static void bars(Graphics2D g, Rectangle panel, String title, @Nullable SectionResult result,
			@Nullable List<String> onlyFigures, @Nullable Double targetLine) {
		Rectangle plot = frame(g, panel, title);
		if (result == null) {
			notMeasured(g, plot);
			return;
		}
		List<String> figures = (onlyFigures != null) ? onlyFigures : result.figures();
		List<String> implementations = result.implementations()
			.stream()
			.filter((i) -> !i.equals("target"))
			.filter((i) -> result.measurements().stream().anyMatch((m) -> m.implementation().equals(i) && figures.contains(m.figure())))
			.toList();
		double max = (targetLine != null) ? targetLine : 0;
		for (Measurement m : result.measurements()) {
			if (figures.contains(m.figure()) && implementations.contains(m.implementation())) {
				max = Math.max(max, m.value());
			}
		}
		double top = axis(g, plot, max);
		legend(g, panel, implementations);
		int groupWidth = plot.width / figures.size();
		int barWidth = Math.min(70, (groupWidth - 20) / implementations.size());
		g.setFont(font(Font.PLAIN, 11));
		for (int f = 0; f < figures.size(); f++) {
			int x = plot.x + f * groupWidth + (groupWidth - barWidth * implementations.size()) / 2;
			for (String implementation : implementations) {
				Measurement m = result.find(figures.get(f), implementation);
				if (m != null) {
					int h = (int) Math.round(plot.height * m.value() / top);
					g.setColor(color(implementation));
					g.fillRect(x, plot.y + plot.height - h, barWidth - 3, h);
					g.setColor(Color.BLACK);
					String label = Format.number(m.value());
					FontMetrics metrics = g.getFontMetrics();
					g.drawString(label, x + (barWidth - 3 - metrics.stringWidth(label)) / 2, plot.y + plot.height - h - 4);
				}
				x += barWidth;
			}
			g.setFont(font(Font.PLAIN, 13));
			String[] label = figures.get(f).split(", ");
			for (int line = 0; line < label.length; line++) {
				int width = g.getFontMetrics().stringWidth(label[line]);
				g.drawString(label[line], plot.x + f * groupWidth + (groupWidth - width) / 2,
						plot.y + plot.height + 18 + 16 * line);
			}
			if (figures.size() > 1) {
				groupCaption(g, result, figures.get(f), plot.x + f * groupWidth, groupWidth,
						plot.y + plot.height + 22 + 16 * label.length);
			}
			g.setFont(font(Font.PLAIN, 11));
		}
		if (targetLine != null) {
			int y = plot.y + plot.height - (int) Math.round(plot.height * targetLine / top);
			g.setColor(new Color(0xd62728));
			g.setStroke(new BasicStroke(2, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10, new float[] { 8, 6 }, 0));
			g.drawLine(plot.x, y, plot.x + plot.width, y);
			g.setStroke(new BasicStroke(1));
			String label = "target " + Format.number(targetLine);
			g.drawString(label, plot.x + plot.width - g.getFontMetrics().stringWidth(label), y - 4);
		}
		ratioCaption(g, panel, result, figures);
	}

	/** Lines: x = the figures in order (equally spaced), one line per implementation. */
	private static void lines(Graphics2D g, Rectangle panel, String title, @Nullable SectionResult result) {
		Rectangle plot = frame(g, panel, title);
		if (result == null) {
			notMeasured(g, plot);
			return;
		}
		List<String> figures = result.figures();
		List<String> implementations = result.implementations();
		double max = result.measurements().stream().mapToDouble(Measurement::value).max().orElse(1);
		double min = result.measurements().stream().mapToDouble(Measurement::value).filter((v) -> v > 0).min().orElse(1);
		LogAxis axis = logAxis(g, plot, min, max);
		legend(g, panel, implementations);
		int step = (figures.size() > 1) ? plot.width / (figures.size() - 1) : plot.width;
		g.setFont(font(Font.PLAIN, 13));
		g.setColor(Color.BLACK);
		for (int f = 0; f < figures.size(); f++) {
			String label = figures.get(f);
			int width = g.getFontMetrics().stringWidth(label);
			int x = plot.x + f * step - width / 2;
			x = Math.max(plot.x - 30, Math.min(x, plot.x + plot.width - width + 20));
			g.drawString(label, x, plot.y + plot.height + 20);
		}
		g.setStroke(new BasicStroke(2.5f));
		g.setFont(font(Font.PLAIN, 11));
		for (int i = 0; i < implementations.size(); i++) {
			String implementation = implementations.get(i);
			// Alternate labels above and below the points, so that close lines do not overwrite each other.
			int labelOffset = (i % 2 == 0) ? -6 : 16;
			g.setColor(color(implementation));
			int previousX = -1;
			int previousY = -1;
			for (int f = 0; f < figures.size(); f++) {
				Measurement m = result.find(figures.get(f), implementation);
				if (m == null) {
					continue;
				}
				int x = plot.x + f * step;
				int y = axis.y(m.value());
				if (previousX >= 0) {
					g.drawLine(previousX, previousY, x, y);
				}
				g.fillOval(x - 5, y - 5, 10, 10);
				g.drawString(Format.number(m.value()), x + 6, y + labelOffset);
				previousX = x;
				previousY = y;
			}
		}
		g.setStroke(new BasicStroke(1));
	}

	/** A logarithmic y axis over whole decades. */
	private record LogAxis(Rectangle plot, double lowDecade, double highDecade) {

		int y(double value) {
			double position = (Math.log10(Math.max(value, 1e-9)) - this.lowDecade) / (this.highDecade - this.lowDecade);
			return this.plot.y + this.plot.height - (int) Math.round(this.plot.height * position);
		}
	}

	/** Draws a logarithmic y axis with lines at 1, 2 and 5 of each decade from below min to above max. */
	private static LogAxis logAxis(Graphics2D g, Rectangle plot, double min, double max) {
		double low = Math.floor(Math.log10(min));
		double high = Math.ceil(Math.log10(max * 1.2));
		LogAxis axis = new LogAxis(plot, low, Math.max(high, low + 1));
		g.setFont(font(Font.PLAIN, 12));
		for (double decade = low; decade < axis.highDecade() + 0.5; decade++) {
			for (double step : new double[] { 1, 2, 5 }) {
				double v = step * Math.pow(10, decade);
				if (Math.log10(v) > axis.highDecade() + 1e-9) {
					continue;
				}
				int y = axis.y(v);
				g.setColor(GRID);
				g.drawLine(plot.x, y, plot.x + plot.width, y);
				g.setColor(Color.DARK_GRAY);
				String label = Format.number(v).replaceAll("\\.0+$", "");
				g.drawString(label, plot.x - 8 - g.getFontMetrics().stringWidth(label), y + 4);
			}
		}
		g.setColor(Color.GRAY);
		g.drawLine(plot.x, plot.y + plot.height, plot.x + plot.width, plot.y + plot.height);
		return axis;
	}

	/** Draws the y axis and grid from 0 to a round number above {@code max}; returns that number. */
	private static double axis(Graphics2D g, Rectangle plot, double max) {
		double step = niceStep(Math.max(max, 1e-9) * 1.15 / 5);
		double top = step * Math.ceil(Math.max(max, 1e-9) * 1.15 / step);
		g.setFont(font(Font.PLAIN, 12));
		for (double v = 0; v <= top + step / 2; v += step) {
			int y = plot.y + plot.height - (int) Math.round(plot.height * v / top);
			g.setColor(GRID);
			g.drawLine(plot.x, y, plot.x + plot.width, y);
			g.setColor(Color.DARK_GRAY);
			String label = (v == 0) ? "0" : Format.number(v).replaceAll("\\.0+$", "");
			g.drawString(label, plot.x - 8 - g.getFontMetrics().stringWidth(label), y + 4);
		}
		g.setColor(Color.GRAY);
		g.drawLine(plot.x, plot.y + plot.height, plot.x + plot.width, plot.y + plot.height);
		return top;
	}

	public static double niceStep(double raw) {
		double power = Math.pow(10, Math.floor(Math.log10(raw)));
		double fraction = raw / power;
		double nice = (fraction <= 1) ? 1 : (fraction <= 2) ? 2 : (fraction <= 2.5) ? 2.5 : (fraction <= 5) ? 5 : 10;
		return nice * power;
	}

	private static void legend(Graphics2D g, Rectangle panel, List<String> implementations) {
		g.setFont(font(Font.PLAIN, 13));
		int x = panel.x;
		int y = panel.y + 36;
		for (String implementation : implementations) {
			g.setColor(color(implementation));
			g.fillRect(x, y - 11, 14, 14);
			g.setColor(Color.BLACK);
			g.drawString(implementation, x + 19, y);
			x += 19 + g.getFontMetrics().stringWidth(implementation) + 18;
		}
	}

	/** Under the HTTP bars: the p50 and p99 latencies of both sides. */
	private static void latencyCaption(Graphics2D g, Rectangle panel, @Nullable SectionResult result) {
		if (result == null) {
			return;
		}
		StringBuilder caption = new StringBuilder("p50 / p99 ms:");
		for (String implementation : result.implementations()) {
			Measurement p50 = result.find("p50 latency", implementation);
			Measurement p99 = result.find("p99 latency", implementation);
			if (p50 != null && p99 != null) {
				caption.append(String.format(Locale.ROOT, "  %s %.2f / %.2f", implementation.replace("rate limit ", ""),
						p50.value(), p99.value()));
			}
		}
		g.setColor(Color.BLACK);
		g.setFont(font(Font.PLAIN, 12));
		g.drawString(caption.toString(), panel.x, panel.y + panel.height - 22);
	}

	/** Under a group of bars: its ratios that have a target, green when met, red when not. */
	private static void groupCaption(Graphics2D g, SectionResult result, String figure, int x, int width, int y) {
		g.setFont(font(Font.PLAIN, 12));
		int line = 0;
		for (Comparison comparison : result.comparisons()) {
			if (comparison.figure().equals(figure) && comparison.target() != null) {
				String text = String.format(Locale.ROOT, "%.2fx %s %s", comparison.ratio(), comparison.peer(),
						comparison.met() ? "✓" : "✗");
				g.setColor(comparison.met() ? new Color(0x2ca02c) : new Color(0xd62728));
				g.drawString(text, x + (width - g.getFontMetrics().stringWidth(text)) / 2, y + 15 * line);
				line++;
			}
		}
		g.setColor(Color.BLACK);
	}

	private static void ratioCaption(Graphics2D g, Rectangle panel, SectionResult result, List<String> figures) {
		StringBuilder caption = new StringBuilder();
		for (Comparison comparison : result.comparisons()) {
			if (comparison.target() != null && figures.contains(comparison.figure()) && figures.size() == 1) {
				caption.append(caption.length() > 0 ? "   " : "")
					.append(comparison.ours().equals("ours") ? "" : comparison.ours() + " / ")
					.append(comparison.ours().equals("ours") ? "ours / " : "")
					.append(comparison.peer())
					.append(String.format(Locale.ROOT, " = %.2f", comparison.ratio()))
					.append(comparison.met() ? " ✓" : " ✗");
			}
		}
		if (caption.length() > 0) {
			g.setColor(Color.BLACK);
			g.setFont(font(Font.PLAIN, 12));
			g.drawString(caption.toString(), panel.x, panel.y + panel.height - 4);
		}
	}

	private static Color color(String implementation) {
		return COLORS.getOrDefault(implementation, new Color(0x2ca02c));
	}
}
