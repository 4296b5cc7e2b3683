import { useCallback, useState } from "react";

/**
 * Paging by the API's `X-Next-Token` cursors: the tokens of the pages before are kept, so
 * Previous goes back the way Next came. `reset()` starts over (after a filter changes).
 */
export function usePager() {
  const [tokens, setTokens] = useState<(string | undefined)[]>([undefined]);
  const current = tokens[tokens.length - 1];
  const next = useCallback((token: string) => setTokens((t) => [...t, token]), []);
  const previous = useCallback(() => setTokens((t) => (t.length > 1 ? t.slice(0, -1) : t)), []);
  const reset = useCallback(() => setTokens([undefined]), []);
  return { current, page: tokens.length, next, previous, reset };
}

export function Pager({
  pager,
  nextToken,
  count,
  label,
}: {
  pager: ReturnType<typeof usePager>;
  nextToken: string | undefined;
  count: number;
  label: string;
}) {
  if (pager.page === 1 && !nextToken) return null;
  return (
    <nav className="pager" aria-label={`${label} pages`}>
      <span>
        Page {pager.page} · {count} shown
      </span>
      <button type="button" className="small" onClick={pager.previous} disabled={pager.page === 1}>
        ← Previous
      </button>
      <button
        type="button"
        className="small"
        onClick={() => nextToken && pager.next(nextToken)}
        disabled={!nextToken}
        data-testid={`${label}-next-page`}
      >
        Next →
      </button>
    </nav>
  );
}
