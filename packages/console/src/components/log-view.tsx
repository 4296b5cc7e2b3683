import { type ReactNode, useEffect, useLayoutEffect, useRef, useState } from "react";

/**
 * A scrolling log that follows its end while the user is at the end, and stays put when they
 * scrolled up to read.
 */
export function LogView({
  children,
  count,
  label,
  testId,
}: {
  children: ReactNode;
  count: number;
  label: string;
  testId?: string;
}) {
  const ref = useRef<HTMLDivElement>(null);
  const [pinned, setPinned] = useState(true);
  // biome-ignore lint/correctness/useExhaustiveDependencies: `count` is the trigger: new lines scroll a pinned log
  useLayoutEffect(() => {
    const el = ref.current;
    if (el && pinned) el.scrollTop = el.scrollHeight;
  }, [count, pinned]);
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    const onScroll = () => setPinned(el.scrollHeight - el.scrollTop - el.clientHeight < 24);
    el.addEventListener("scroll", onScroll, { passive: true });
    return () => el.removeEventListener("scroll", onScroll);
  }, []);
  return (
    <div
      ref={ref}
      className="log"
      role="log"
      aria-label={label}
      aria-live="off"
      // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must take focus to be scrolled by keyboard
      tabIndex={0}
      data-testid={testId}
    >
      {children}
    </div>
  );
}
