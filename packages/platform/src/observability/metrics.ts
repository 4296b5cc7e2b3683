/**
 * A small Prometheus registry: counters, gauges and histograms with labels, rendered in the
 * text exposition format (version 0.0.4).
 */

export type Labels = Record<string, string>;

type Kind = "counter" | "gauge" | "histogram";

/**
 * Label names whose values identify a tenant (a team, its templates, aliases or sandboxes).
 * A scrape that is not known to be the operator's sees none of them: the series they tell
 * apart are summed into one.
 */
export const TENANT_LABELS: ReadonlySet<string> = new Set(["team", "template", "alias", "sandbox"]);

export interface RenderOptions {
  /** Keep the labels of TENANT_LABELS, each value its own series (for a scrape that showed the metrics token). */
  tenantLabels?: boolean;
}

interface Family {
  name: string;
  help: string;
  kind: Kind;
  render(o: RenderOptions): string[];
}

function escapeLabel(value: string): string {
  return value.replaceAll("\\", "\\\\").replaceAll("\n", "\\n").replaceAll('"', '\\"');
}

function labelText(labels: Labels): string {
  const pairs = Object.entries(labels).map(([k, v]) => `${k}="${escapeLabel(v)}"`);
  return pairs.length ? `{${pairs.join(",")}}` : "";
}

function formatValue(value: number): string {
  if (Number.isNaN(value)) return "NaN";
  if (value === Infinity) return "+Inf";
  if (value === -Infinity) return "-Inf";
  return String(value);
}

/** Label sets are keyed by their values in a fixed order of label names. */
function keyOf(names: readonly string[], labels: Labels): string {
  return JSON.stringify(names.map((n) => labels[n] ?? ""));
}

const sum = (into: number | undefined, value: number): number => (into ?? 0) + value;

class Series<T> {
  readonly values = new Map<string, { labels: Labels; value: T }>();

  constructor(private readonly labelNames: readonly string[]) {}

  /** The series to render: as kept, or without tenant labels and those they told apart merged. */
  shown(o: RenderOptions, merge: (into: T | undefined, value: T) => T): Array<{ labels: Labels; value: T }> {
    const kept = o.tenantLabels ? this.labelNames : this.labelNames.filter((n) => !TENANT_LABELS.has(n));
    if (kept.length === this.labelNames.length) return [...this.values.values()];
    const merged = new Map<string, { labels: Labels; value: T }>();
    for (const e of this.values.values()) {
      const key = keyOf(kept, e.labels);
      const prior = merged.get(key);
      const labels = prior?.labels ?? Object.fromEntries(kept.map((n) => [n, e.labels[n] ?? ""]));
      merged.set(key, { labels, value: merge(prior?.value, e.value) });
    }
    return [...merged.values()];
  }

  entry(labels: Labels, init: () => T): { labels: Labels; value: T } {
    const key = keyOf(this.labelNames, labels);
    let entry = this.values.get(key);
    if (!entry) {
      const picked = Object.fromEntries(this.labelNames.map((n) => [n, labels[n] ?? ""]));
      entry = { labels: picked, value: init() };
      this.values.set(key, entry);
    }
    return entry;
  }
}

/** A value that only goes up. `set` is for mirroring a counter kept elsewhere. */
export class Counter implements Family {
  readonly kind = "counter";
  private readonly series: Series<number>;

  constructor(
    readonly name: string,
    readonly help: string,
    labelNames: readonly string[] = [],
  ) {
    this.series = new Series(labelNames);
  }

  inc(labels: Labels = {}, by = 1): void {
    this.series.entry(labels, () => 0).value += by;
  }

  set(labels: Labels, value: number): void {
    this.series.entry(labels, () => 0).value = value;
  }

  render(o: RenderOptions): string[] {
    return this.series.shown(o, sum).map((e) => `${this.name}${labelText(e.labels)} ${formatValue(e.value)}`);
  }
}

/** A value that goes up and down. */
export class Gauge implements Family {
  readonly kind = "gauge";
  private readonly series: Series<number>;

  constructor(
    readonly name: string,
    readonly help: string,
    labelNames: readonly string[] = [],
  ) {
    this.series = new Series(labelNames);
  }

  set(labels: Labels, value: number): void {
    this.series.entry(labels, () => 0).value = value;
  }

  /** Forgets every label set (before re-setting the ones that still exist). */
  clear(): void {
    this.series.values.clear();
  }

  render(o: RenderOptions): string[] {
    return this.series.shown(o, sum).map((e) => `${this.name}${labelText(e.labels)} ${formatValue(e.value)}`);
  }
}

interface HistogramValue {
  counts: number[];
  sum: number;
  count: number;
}

/** Observations counted into cumulative buckets, with their sum and count. */
export class Histogram implements Family {
  readonly kind = "histogram";
  private readonly series: Series<HistogramValue>;
  private readonly buckets: number[];

  constructor(
    readonly name: string,
    readonly help: string,
    labelNames: readonly string[],
    buckets: readonly number[],
  ) {
    if (labelNames.includes("le")) throw new Error(`histogram ${name}: 'le' is reserved`);
    this.series = new Series(labelNames);
    this.buckets = [...buckets].sort((a, b) => a - b);
  }

  observe(labels: Labels, value: number): void {
    const entry = this.series.entry(labels, () => ({ counts: this.buckets.map(() => 0), sum: 0, count: 0 }));
    const index = this.buckets.findIndex((b) => value <= b);
    if (index >= 0) entry.value.counts[index]!++;
    entry.value.sum += value;
    entry.value.count++;
  }

  render(o: RenderOptions): string[] {
    const lines: string[] = [];
    const merge = (into: HistogramValue | undefined, value: HistogramValue): HistogramValue =>
      into
        ? {
            counts: into.counts.map((n, i) => n + value.counts[i]!),
            sum: into.sum + value.sum,
            count: into.count + value.count,
          }
        : value;
    for (const { labels, value } of this.series.shown(o, merge)) {
      let cumulative = 0;
      this.buckets.forEach((bound, i) => {
        cumulative += value.counts[i]!;
        lines.push(`${this.name}_bucket${labelText({ ...labels, le: formatValue(bound) })} ${cumulative}`);
      });
      lines.push(`${this.name}_bucket${labelText({ ...labels, le: "+Inf" })} ${value.count}`);
      lines.push(`${this.name}_sum${labelText(labels)} ${formatValue(value.sum)}`);
      lines.push(`${this.name}_count${labelText(labels)} ${value.count}`);
    }
    return lines;
  }
}

export class Registry {
  private readonly families = new Map<string, Family>();
  private readonly collectors: Array<() => void | Promise<void>> = [];

  private add<T extends Family>(family: T): T {
    if (!/^[a-zA-Z_:][a-zA-Z0-9_:]*$/.test(family.name)) {
      throw new Error(`invalid metric name '${family.name}'`);
    }
    if (this.families.has(family.name)) throw new Error(`metric ${family.name} is registered twice`);
    this.families.set(family.name, family);
    return family;
  }

  counter(name: string, help: string, labelNames: readonly string[] = []): Counter {
    return this.add(new Counter(name, help, labelNames));
  }

  gauge(name: string, help: string, labelNames: readonly string[] = []): Gauge {
    return this.add(new Gauge(name, help, labelNames));
  }

  histogram(
    name: string,
    help: string,
    labelNames: readonly string[],
    buckets: readonly number[],
  ): Histogram {
    return this.add(new Histogram(name, help, labelNames, buckets));
  }

  /** Runs before every render: for values read from elsewhere at scrape time. */
  onCollect(collect: () => void | Promise<void>): void {
    this.collectors.push(collect);
  }

  /** The exposition text; without `tenantLabels`, with no label that identifies a tenant. */
  async render(o: RenderOptions = {}): Promise<string> {
    for (const collect of this.collectors) await collect();
    const lines: string[] = [];
    for (const family of this.families.values()) {
      lines.push(`# HELP ${family.name} ${family.help.replaceAll("\\", "\\\\").replaceAll("\n", "\\n")}`);
      lines.push(`# TYPE ${family.name} ${family.kind}`);
      lines.push(...family.render(o));
    }
    return `${lines.join("\n")}\n`;
  }
}

/** Content type of the text exposition format. */
export const EXPOSITION_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";
