import { lazy, Suspense } from "react";
import type { TimeChartProps } from "./charts/time-chart.js";
import { Loading } from "./status.js";

export type { ChartSeries, TimeChartProps } from "./charts/time-chart.js";

/** uPlot is loaded with the first chart shown, not with the console. */
const TimeChartImpl = lazy(() => import("./charts/time-chart.js"));

export function TimeChart(props: TimeChartProps) {
  return (
    <Suspense fallback={<Loading label="Loading chart…" />}>
      <TimeChartImpl {...props} />
    </Suspense>
  );
}
