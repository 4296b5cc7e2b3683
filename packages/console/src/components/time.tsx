import { formatRelative, formatTime } from "./format.js";
import { useNow } from "./use-now.js";

/** A relative time (`3m ago`, `in 2h 10m`) with the exact time on hover. */
export function RelativeTime({ iso }: { iso: string | null | undefined }) {
  const now = useNow();
  if (!iso) return <span className="faint">never</span>;
  return (
    <time dateTime={iso} title={formatTime(iso)}>
      {formatRelative(iso, now)}
    </time>
  );
}
