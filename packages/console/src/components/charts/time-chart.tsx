import "uplot/dist/uPlot.min.css";
import { useEffect, useRef } from "react";
import uPlot from "uplot";
import { cssVar, useThemeVersion } from "../theme.js";

export interface ChartSeries {
  label: string;
  /** One value per timestamp; null for a gap. */
  values: (number | null)[];
  /** A CSS variable of the theme, e.g. `--chart-1`. */
  color: string;
  fill?: boolean;
}

export interface TimeChartProps {
  title: string;
  /** Unix seconds. */
  timestamps: number[];
  series: ChartSeries[];
  formatValue(value: number): string;
  /** Fixed y range, e.g. [0, 100] for percentages; otherwise from 0 to the data's top. */
  yRange?: [number, number];
  height?: number;
  testId?: string;
}

function withAlpha(color: string, alpha: number): string {
  const m = /^#([0-9a-f]{6})$/i.exec(color);
  if (!m) return color;
  const n = Number.parseInt(m[1]!, 16);
  return `rgba(${n >> 16}, ${(n >> 8) & 255}, ${n & 255}, ${alpha})`;
}

/** A time series chart (uPlot), sized to its container and drawn in the theme's colours. */
export default function TimeChart(props: TimeChartProps) {
  const { title, timestamps, series, formatValue, yRange, height = 180, testId } = props;
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const theme = useThemeVersion();
  const shape = series.map((s) => `${s.label}:${s.color}:${s.fill ? 1 : 0}`).join("|");
  const format = useRef(formatValue);
  format.current = formatValue;

  // biome-ignore lint/correctness/useExhaustiveDependencies: rebuilt when the series' shape, range or theme change; data goes through setData below
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const text = cssVar("--text-muted");
    const grid = cssVar("--chart-grid");
    const axis = { stroke: text, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid, width: 1 } };
    const opts: uPlot.Options = {
      width: Math.max(el.clientWidth, 200),
      height,
      cursor: { drag: { x: false, y: false } },
      legend: { show: true },
      scales: {
        x: { time: true },
        y: yRange ? { range: yRange } : { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] },
      },
      axes: [{ ...axis }, { ...axis, size: 76, values: (_u, ticks) => ticks.map((t) => format.current(t)) }],
      series: [
        { label: "time" },
        ...series.map((s) => {
          const color = cssVar(s.color) || s.color;
          return {
            label: s.label,
            stroke: color,
            width: 1.5,
            fill: s.fill ? withAlpha(color, 0.15) : undefined,
            points: { show: false },
            value: (_u: uPlot, v: number | null) => (v === null || v === undefined ? "—" : format.current(v)),
          };
        }),
      ],
    };
    const data = [timestamps, ...series.map((s) => s.values)] as uPlot.AlignedData;
    const u = new uPlot(opts, data, el);
    plot.current = u;
    const resize = new ResizeObserver(() => u.setSize({ width: Math.max(el.clientWidth, 200), height }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      u.destroy();
      plot.current = null;
    };
  }, [shape, theme, height, yRange?.[0], yRange?.[1]]);

  useEffect(() => {
    plot.current?.setData([timestamps, ...series.map((s) => s.values)] as uPlot.AlignedData);
  }, [timestamps, series]);

  return (
    <figure className="chart panel" style={{ margin: 0 }} data-testid={testId}>
      <figcaption className="panel-header">
        <h3>{title}</h3>
      </figcaption>
      <div className="panel-body">
        <div ref={box} role="img" aria-label={`${title} chart`} />
      </div>
    </figure>
  );
}
